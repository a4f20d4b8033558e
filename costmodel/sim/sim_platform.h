// The SimGrid platform of a cluster (internal to costmodel/sim: SimGrid types appear here
// only as forward declarations, and only the simulating process builds one).
//
// Links, each one direction of a split-duplex link:
//  - "<dev>-fabric": a device's port into its node's fabric (NVSwitch, NVLink, xGMI, HCCS,
//    PCIe). The fabric behind the ports is taken as non-blocking: NVSwitch is; for the
//    point-to-point meshes (xGMI, HCCS) RCCL and HCCL spread each ring over all of a device's
//    links with several channels, so the device's aggregate is what a ring sees;
//  - "<dev>-nic": a device's NIC;
//  - fat-tree: "<node>-uplink", the node's leaf uplink into the core, of the node's NICs'
//    bandwidth over the oversubscription (a leaf per node: all inter-node traffic crosses it);
//  - rail-optimized: "rail<j>-spine", rail j's uplinks into the spine, of the rail's NICs'
//    bandwidth over the oversubscription; crossed only by traffic between different rails.
// Bandwidths and per-step latencies are the analytical model's (make_comm_group, NCCL's
// tuning constants): a transfer inside a node pays NCCL's ring hop latency of the fabric for
// its protocol, a transfer between nodes NCCL's network hop latency plus twice the network's
// latency, split evenly over the two ends. SimGrid's links have no latency: the replay waits
// it before each transfer (replay.cpp), so that flows share links max-min fairly (CM02
// weighs a flow's share by its route's latency, TCP's RTT bias, which NCCL does not have).
//
// Routes are built in one SimGrid star zone rather than an XML file: the cluster is a value
// in memory, and every device gets three endpoints (hosts) whose routes to the star's centre
// hold exactly the links a flow of that class crosses: "local" (fabric port), "net" (NIC,
// plus the node uplink on a fat-tree) and, on rail-optimized networks, "core" (NIC plus the
// rail's spine uplink). A flow picks the endpoints of its class, so routes follow the real
// topology without SimGrid computing routes between 3,000 hosts.
#pragma once

#include "costmodel/nccl_constants.h"
#include "devices/cluster_spec.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace simgrid::s4u {
class Host;
}  // namespace simgrid::s4u

namespace yirage::costmodel {

struct SimLinkInfo {
  std::string name;                          // with its direction, "<link>_UP" or "<link>_DOWN"
  double capacity = 0;                       // bytes/s
  std::array<double, 3> protocol_latency{};  // seconds, NCCL's per-hop share, by Protocol
};

/// The hosts and links of a transfer from one device to another.
struct SimRoute {
  simgrid::s4u::Host* from = nullptr;
  simgrid::s4u::Host* to = nullptr;
  std::vector<std::uint32_t> links;          // indices into SimPlatform::links()
  std::array<double, 3> protocol_latency{};  // NCCL's per-step latency over it, by Protocol

  double latency_of(Protocol p) const { return protocol_latency[static_cast<std::size_t>(p)]; }
};

class SimPlatform {
 public:
  /// Builds the platform in the current SimGrid engine (which must exist and be unsealed).
  explicit SimPlatform(const devices::ClusterSpec& cluster);

  std::int64_t devices() const { return static_cast<std::int64_t>(places_.size()); }

  simgrid::s4u::Host* compute_host(std::int64_t rank) const;
  const std::string& host_name(std::int64_t rank) const;
  std::int64_t node(std::int64_t rank) const;

  /// A host of many cores for pure delays (launch latencies).
  simgrid::s4u::Host* timer_host() const { return timer_; }

  SimRoute route(std::int64_t from, std::int64_t to) const;

  const std::vector<SimLinkInfo>& links() const { return links_; }

 private:
  struct Endpoint {
    simgrid::s4u::Host* host = nullptr;
    std::vector<std::uint32_t> up;    // towards the centre
    std::vector<std::uint32_t> down;  // from the centre, in path order
  };

  struct Place {
    std::int64_t node = 0;
    std::int64_t local = 0;
    std::string name;
    Endpoint local_end;
    Endpoint net_end;
    Endpoint core_end;  // rail-optimized only
  };

  std::vector<Place> places_;
  std::vector<SimLinkInfo> links_;
  simgrid::s4u::Host* timer_ = nullptr;
  bool rail_optimized_ = false;
  bool has_network_ = false;
};

}  // namespace yirage::costmodel
