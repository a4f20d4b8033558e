#include "costmodel/comm_group.h"

#include <algorithm>
#include <vector>

namespace yirage::costmodel {

using devices::BytesPerSec;
using devices::ClusterSpec;
using devices::DeviceSpec;
using devices::FabricKind;
using devices::NodeGroup;

std::optional<GpuGeneration> gpu_generation(const DeviceSpec& d) {
  if (d.vendor != "NVIDIA")
    return std::nullopt;
  const std::string& f = d.family;
  if (f.find("Blackwell") != std::string::npos)
    return GpuGeneration::kBlackwell;
  if (f.find("Hopper") != std::string::npos)
    return GpuGeneration::kHopper;
  if (f.find("Volta") != std::string::npos)
    return GpuGeneration::kVolta;
  return GpuGeneration::kAmpere;  // Ampere and Ada (SM80-SM89) share NCCL's Ampere row
}

namespace {

// NCCL's achievable fraction of one NVLink: SMxx_NVLINK_BW over the nominal per-link rate
// (25 GB/s per direction for NVLink 2, 3 and 4; 50 GB/s for NVLink 5).
double nvlink_efficiency(GpuGeneration g) {
  double nominal = g == GpuGeneration::kBlackwell ? 50.0 : 25.0;
  return NcclConstants::nvlink_bw_per_link_gbs(g) / nominal;
}

void set_intra(CommGroup& c, const NodeGroup& g, GpuGeneration gen) {
  c.fabric = g.fabric.kind;
  bool nvlink = g.fabric.kind == FabricKind::kNvswitch || g.fabric.kind == FabricKind::kNvlink;
  if (nvlink) {
    c.intra_hop = Hop::kNvlink;
    c.intra_efficiency = nvlink_efficiency(gen);
  } else if (g.fabric.kind == FabricKind::kPcie) {
    c.intra_hop = Hop::kPci;
    c.intra_efficiency = NcclConstants::kPciBwGbs / NcclConstants::kPciGen3NominalGbs;
  } else {
    // xGMI, HCCS, ICI, Ethernet: no NCCL constant; NCCL's PCI latencies plus the fabric's.
    c.intra_hop = Hop::kPci;
    c.intra_efficiency = 1;
    c.intra_extra_latency = g.fabric.latency;
  }
  c.intra_bw = g.fabric.bandwidth * c.intra_efficiency;
}

// The slowest of two groups bounds a collective that spans both.
void merge(CommGroup& into, const CommGroup& other) {
  if (other.intra_bw < into.intra_bw) {
    BytesPerSec keep_nic = into.nic_bw;
    double keep_nic_eff = into.nic_efficiency;
    into.intra_bw = other.intra_bw;
    into.intra_efficiency = other.intra_efficiency;
    into.intra_hop = other.intra_hop;
    into.fabric = other.fabric;
    into.device = other.device;
    into.nic_bw = keep_nic;
    into.nic_efficiency = keep_nic_eff;
  }
  into.intra_extra_latency = std::max(into.intra_extra_latency, other.intra_extra_latency);
  if (other.nic_bw < into.nic_bw)
    into.nic_bw = other.nic_bw;
  into.nvls = into.nvls && other.nvls;
  into.generation_known = into.generation_known && other.generation_known;
}

}  // namespace

CommGroupResult make_comm_group(const ClusterSpec& cluster,
                                std::int64_t ranks,
                                std::optional<std::int64_t> ranks_per_node) {
  if (ranks < 1)
    return {std::nullopt, "a collective needs at least one rank"};
  if (ranks > cluster.total_devices()) {
    return {std::nullopt, std::to_string(ranks) + " ranks do not fit on the " +
                              std::to_string(cluster.total_devices()) + " devices of cluster '" +
                              cluster.name + "'"};
  }
  std::vector<const NodeGroup*> groups;
  for (const NodeGroup& g : cluster.groups)
    groups.push_back(&g);
  std::sort(groups.begin(), groups.end(), [](const NodeGroup* a, const NodeGroup* b) {
    return std::tie(a->device, a->name) < std::tie(b->device, b->name);
  });
  std::optional<CommGroup> result;
  std::int64_t left = ranks;
  std::int64_t nodes = 0;
  std::int64_t per_node_max = 0;
  for (const NodeGroup* g : groups) {
    if (left == 0)
      break;
    std::int64_t per_node =
        std::min(g->devices_per_node, ranks_per_node.value_or(g->devices_per_node));
    std::int64_t take = std::min(left, per_node * g->nodes);
    if (take == 0)
      continue;
    const DeviceSpec& d = cluster.device(*g);
    std::optional<GpuGeneration> gen = gpu_generation(d);
    CommGroup c;
    c.device = d.name;
    c.generation = gen.value_or(GpuGeneration::kAmpere);
    c.generation_known = gen.has_value();
    set_intra(c, *g, c.generation);
    c.nic_efficiency = NcclConstants::kNetBwGbs / NcclConstants::kNet100GNominalGbs;
    c.nic_bw = cluster.nic_bandwidth(*g) * c.nic_efficiency;
    c.nvls = g->fabric.nvls && g->fabric.kind == FabricKind::kNvswitch && gen &&
             NcclConstants::nvls_efficiency(*gen) > 0;
    if (result) {
      merge(*result, c);
    } else {
      result = c;
    }
    if (d.tdp)
      result->power += d.tdp->value * static_cast<double>(take);
    nodes += (take + per_node - 1) / per_node;
    per_node_max = std::max(per_node_max, std::min(per_node, take));
    left -= take;
  }
  if (left > 0) {
    return {std::nullopt, "at most " + std::to_string(ranks - left) + " ranks fit with " +
                              std::to_string(ranks_per_node.value_or(0)) + " per node"};
  }
  CommGroup& c = *result;
  c.ranks = ranks;
  c.nodes = nodes;
  c.ranks_per_node = per_node_max;
  if (nodes > 1 && cluster.network) {
    c.net_latency = cluster.network->latency;
    c.rail_optimized = cluster.network->topology == devices::Topology::kRailOptimized;
    c.oversubscription = cluster.network->oversubscription;
  }
  return {c, ""};
}

}  // namespace yirage::costmodel
