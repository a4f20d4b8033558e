// A cluster: groups of identical nodes (a device type, how many per node, how many nodes,
// the fabric inside a node) joined by one inter-node network. A heterogeneous cluster is
// several node groups. The format is documented in data/clusters/README.md.
#pragma once

#include "devices/device_spec.h"
#include "devices/support/diagnostics.h"
#include "devices/support/units.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yirage::devices {

enum class FabricKind { kNvswitch, kNvlink, kXgmi, kPcie, kHccs, kIci, kEthernet, kNone };
enum class Topology { kFatTree, kRailOptimized };

std::string fabric_name(FabricKind k);
std::string topology_name(Topology t);

/// The links between the devices of one node.
struct Fabric {
  FabricKind kind = FabricKind::kNone;
  BytesPerSec bandwidth;  // per device, per direction
  Seconds latency;
  bool nvls = false;  // NVLink SHARP (switch multicast and reduction) enabled
  SourceLoc loc;

  bool operator==(const Fabric&) const = default;
};

/// The CPUs of a node: where optimizer offload keeps and updates the optimizer state.
struct HostCpu {
  std::string device;            // canonical name of a CPU in the registry
  std::int64_t sockets = 1;      // per node
  BytesPerSec memory_bandwidth;  // per socket, from the CPU's spec
  SourceLoc loc;

  bool operator==(const HostCpu&) const = default;
};

struct NodeGroup {
  std::string name;
  std::string device;  // canonical device name (a key of ClusterSpec::device_types)
  std::int64_t nodes = 0;
  std::int64_t devices_per_node = 0;
  Fabric fabric;
  std::optional<BytesPerSec> nic_bandwidth;  // per device; overrides the network's
  std::optional<Bytes> host_memory;          // per node, for optimizer offload
  std::optional<HostCpu> host_cpu;           // per node, for optimizer offload
  std::optional<UsdPerHour> price;           // per device-hour; overrides the device's
  SourceLoc loc;

  std::int64_t devices() const { return nodes * devices_per_node; }

  bool operator==(const NodeGroup&) const = default;
};

/// The network between nodes.
struct Network {
  Topology topology = Topology::kFatTree;
  BytesPerSec nic_bandwidth;    // per device, per direction
  Seconds latency;              // one hop through the network, end to end
  double oversubscription = 1;  // >= 1; 1 is non-blocking
  SourceLoc loc;

  bool operator==(const Network&) const = default;
};

struct ClusterSpec {
  std::string name;
  std::vector<NodeGroup> groups;
  std::optional<Network> network;        // required when the cluster has more than one node
  std::vector<DeviceSpec> device_types;  // the types the groups use, sorted by name
  SourceLoc loc;

  std::int64_t total_devices() const;
  std::int64_t total_nodes() const;
  const DeviceSpec& device(const NodeGroup& g) const;
  /// The NIC bandwidth per device of group `g` (its own, else the network's; 0 if none).
  BytesPerSec nic_bandwidth(const NodeGroup& g) const;
  /// USD per device-hour of group `g`: its own price, else its device's; none if neither.
  std::optional<double> price_per_hour(const NodeGroup& g) const;
  /// USD per hour of every device of the cluster; none if a group has no price.
  std::optional<double> usd_per_hour() const;

  bool operator==(const ClusterSpec&) const = default;
};

/// The node groups of `c` in a fixed order, by device then group name, whatever the order of
/// the file: the node types a sweep or a capacity search tries one by one.
std::vector<const NodeGroup*> groups_by_device(const ClusterSpec& c);

/// `c` with group `g` alone (a node type of its own), keeping the cluster's network.
ClusterSpec with_group_alone(const ClusterSpec& c, const NodeGroup& g);

}  // namespace yirage::devices
