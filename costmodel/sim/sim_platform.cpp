#include "costmodel/sim/sim_platform.h"

#include "costmodel/comm_group.h"
#include "costmodel/nccl_constants.h"
#include "devices/support/check.h"

#include <simgrid/s4u.hpp>

#include <map>
#include <utility>

namespace yirage::costmodel {
namespace sg4 = simgrid::s4u;

namespace {

constexpr double kHostSpeed = 1e9;  // flop/s: compute of d seconds executes d * 1e9 flop
constexpr double kUs = 1e-6;

using Latencies = std::array<double, 3>;  // seconds, by Protocol

struct GroupLinks {
  double fabric_bw = 0;    // bytes/s per device and direction
  Latencies fabric_lat{};  // per end
  double nic_bw = 0;
  Latencies nic_lat{};
};

// The analytical model's view of one node group: the same bandwidths and step latencies.
GroupLinks group_links(const devices::ClusterSpec& cluster, std::size_t g) {
  devices::ClusterSpec one = cluster;
  one.groups = {cluster.groups[g]};
  const devices::NodeGroup& ng = cluster.groups[g];
  CommGroupResult r = make_comm_group(one, ng.devices_per_node);
  CHECK(r.group.has_value()) << r.reason;
  const CommGroup& c = *r.group;
  GroupLinks l;
  l.fabric_bw = c.intra_bw.value;
  l.nic_bw = cluster.nic_bandwidth(ng).value *
             (NcclConstants::kNetBwGbs / NcclConstants::kNet100GNominalGbs);
  double net_lat = cluster.network ? cluster.network->latency.value : 0;
  for (Protocol p : kProtocols) {
    auto i = static_cast<std::size_t>(p);
    l.fabric_lat[i] =
        (NcclConstants::hop_latency_us(c.intra_hop, false, p) * kUs + c.intra_extra_latency.value) /
        2;
    l.nic_lat[i] = (NcclConstants::hop_latency_us(Hop::kNet, false, p) * kUs + 2 * net_lat) / 2;
  }
  return l;
}

class Builder {
 public:
  Builder(sg4::NetZone* zone, std::vector<SimLinkInfo>& links) : zone_(zone), links_(links) {}

  // A split-duplex link; returns the indices of its UP and DOWN directions.
  // The latencies are the replay's to wait (replay.cpp); SimGrid's link has none.
  std::pair<std::uint32_t, std::uint32_t> link(const std::string& name,
                                               double bw,
                                               const Latencies& lat = {}) {
    CHECK(bw > 0) << "link " << name << " has no bandwidth";
    sg4::SplitDuplexLink* l = zone_->create_split_duplex_link(name, bw);
    l->set_latency(0)->seal();
    sg4_links_.push_back(l);
    links_.push_back({name + "_UP", bw, lat});
    links_.push_back({name + "_DOWN", bw, lat});
    auto up = static_cast<std::uint32_t>(links_.size() - 2);
    return {up, up + 1};
  }

  // An endpoint host whose route to the centre crosses `ups` (link ids of UP directions).
  void endpoint(const std::string& name,
                const std::vector<std::uint32_t>& ups,
                sg4::Host** host,
                std::vector<std::uint32_t>& up,
                std::vector<std::uint32_t>& down) {
    *host = zone_->create_host(name, kHostSpeed)->seal();
    std::vector<sg4::LinkInRoute> route;
    for (std::uint32_t id : ups) {
      route.emplace_back(sg4_links_[id / 2], sg4::LinkInRoute::Direction::UP);
      up.push_back(id);
    }
    for (auto it = ups.rbegin(); it != ups.rend(); ++it)
      down.push_back(*it + 1);
    if (!route.empty())  // a lone device has no route, and sends nothing
      zone_->add_route((*host)->get_netpoint(), nullptr, nullptr, nullptr, route, true);
  }

 private:
  sg4::NetZone* zone_;
  std::vector<SimLinkInfo>& links_;
  std::vector<sg4::SplitDuplexLink*> sg4_links_;
};

std::string group_label(const devices::NodeGroup& g, std::size_t index) {
  return g.name.empty() ? "group" + std::to_string(index) : g.name;
}

}  // namespace

SimPlatform::SimPlatform(const devices::ClusterSpec& cluster) {
  sg4::NetZone* zone = sg4::create_star_zone("cluster");
  Builder b(zone, links_);
  has_network_ = cluster.network.has_value();
  rail_optimized_ = has_network_ && cluster.network->topology == devices::Topology::kRailOptimized;
  double over = has_network_ ? cluster.network->oversubscription : 1;
  // Rail spine uplinks: rail j carries the NICs of every node's device j.
  std::map<std::int64_t, double> rail_bw;
  for (std::size_t g = 0; g < cluster.groups.size() && rail_optimized_; ++g) {
    double nic = group_links(cluster, g).nic_bw;
    for (std::int64_t j = 0; j < cluster.groups[g].devices_per_node; ++j)
      rail_bw[j] += nic * static_cast<double>(cluster.groups[g].nodes);
  }
  std::map<std::int64_t, std::uint32_t> rail_up;
  for (const auto& [j, bw] : rail_bw)
    rail_up[j] = b.link("rail" + std::to_string(j) + "-spine", bw / over).first;
  std::int64_t node = 0;
  for (std::size_t g = 0; g < cluster.groups.size(); ++g) {
    const devices::NodeGroup& ng = cluster.groups[g];
    GroupLinks gl = group_links(cluster, g);
    for (std::int64_t n = 0; n < ng.nodes; ++n, ++node) {
      std::string node_name = group_label(ng, g) + "-n" + std::to_string(n);
      std::uint32_t uplink = 0;
      if (has_network_ && !rail_optimized_) {
        double bw = gl.nic_bw * static_cast<double>(ng.devices_per_node) / over;
        uplink = b.link(node_name + "-uplink", bw).first;
      }
      for (std::int64_t d = 0; d < ng.devices_per_node; ++d) {
        Place p;
        p.node = node;
        p.local = d;
        p.name = node_name + "-d" + std::to_string(d);
        std::vector<std::uint32_t> local_ups;
        if (ng.devices_per_node > 1)
          local_ups.push_back(b.link(p.name + "-fabric", gl.fabric_bw, gl.fabric_lat).first);
        b.endpoint(p.name, local_ups, &p.local_end.host, p.local_end.up, p.local_end.down);
        if (has_network_) {
          std::uint32_t nic = b.link(p.name + "-nic", gl.nic_bw, gl.nic_lat).first;
          std::vector<std::uint32_t> net_ups = {nic};
          if (!rail_optimized_)
            net_ups.push_back(uplink);
          b.endpoint(p.name + "-net", net_ups, &p.net_end.host, p.net_end.up, p.net_end.down);
          if (rail_optimized_) {
            b.endpoint(p.name + "-core", {nic, rail_up[d]}, &p.core_end.host, p.core_end.up,
                       p.core_end.down);
          }
        }
        places_.push_back(std::move(p));
      }
    }
  }
  timer_ = zone->create_host("timer", kHostSpeed)->set_core_count(1'000'000)->seal();
  zone->seal();
}

sg4::Host* SimPlatform::compute_host(std::int64_t rank) const {
  return places_.at(static_cast<std::size_t>(rank)).local_end.host;
}

const std::string& SimPlatform::host_name(std::int64_t rank) const {
  return places_.at(static_cast<std::size_t>(rank)).name;
}

std::int64_t SimPlatform::node(std::int64_t rank) const {
  return places_.at(static_cast<std::size_t>(rank)).node;
}

SimRoute SimPlatform::route(std::int64_t from, std::int64_t to) const {
  CHECK(from >= 0 && to >= 0 && from < devices() && to < devices())
      << "rank " << from << " or " << to << " is not a device of the cluster";
  const Place& a = places_[static_cast<std::size_t>(from)];
  const Place& b = places_[static_cast<std::size_t>(to)];
  const Endpoint* src = &a.local_end;
  const Endpoint* dst = &b.local_end;
  if (a.node != b.node) {
    CHECK(has_network_) << "a transfer between nodes on a cluster without a network";
    bool core = rail_optimized_ && a.local != b.local;
    src = core ? &a.core_end : &a.net_end;
    dst = core ? &b.core_end : &b.net_end;
  }
  SimRoute r;
  r.from = src->host;
  r.to = dst->host;
  r.links = src->up;
  r.links.insert(r.links.end(), dst->down.begin(), dst->down.end());
  for (std::uint32_t id : r.links) {
    for (std::size_t p = 0; p < r.protocol_latency.size(); ++p)
      r.protocol_latency[p] += links_[id].protocol_latency[p];
  }
  return r;
}

}  // namespace yirage::costmodel
