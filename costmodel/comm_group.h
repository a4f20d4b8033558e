// The ranks of a collective laid out on a cluster: how many, over how many nodes, and the
// achievable bandwidth and per-step latency of the links inside and between the nodes.
#pragma once

#include "costmodel/nccl_constants.h"
#include "devices/cluster_spec.h"
#include "devices/support/units.h"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace yirage::costmodel {

struct CommGroup {
  std::int64_t ranks = 0;
  std::int64_t nodes = 0;
  std::int64_t ranks_per_node = 0;
  std::string device;  // the device type (the slowest one, for a mixed group)
  GpuGeneration generation = GpuGeneration::kAmpere;
  bool generation_known = false;  // false: not an NVIDIA GPU; NCCL's Ampere constants are used
  // Inside a node: per rank, per direction, after the library's achievable fraction.
  devices::FabricKind fabric = devices::FabricKind::kNone;
  Hop intra_hop = Hop::kNvlink;
  devices::BytesPerSec intra_bw;
  double intra_efficiency = 1;           // achievable / nominal
  devices::Seconds intra_extra_latency;  // fabric latency not covered by NCCL's constants
  // Between nodes: per rank, per direction, after efficiency and oversubscription.
  devices::BytesPerSec nic_bw;
  double nic_efficiency = 1;
  devices::Seconds net_latency;
  double oversubscription = 1;  // applied to traffic that crosses the network core
  bool rail_optimized = false;
  bool nvls = false;               // NVLink SHARP available (NVSwitch on Hopper or Blackwell)
  devices::Watts power;            // sum of the ranks' TDPs (0 when a device has none)
  devices::Seconds extra_latency;  // per call, from a calibration (0 when uncalibrated)
  // Per collective (indexed by costmodel::Collective), from a calibration that fitted that
  // collective alone: the intra-node bandwidth scale relative to `intra_bw`, and the extra
  // latency replacing `extra_latency` (NaN: none fitted; negative where NCCL's constants
  // price more fixed time than the calls take, as queued launches hide the kernel launch).
  std::array<double, 7> op_bw_scale = {1, 1, 1, 1, 1, 1, 1};
  static constexpr double kNoExtra = std::numeric_limits<double>::quiet_NaN();
  std::array<double, 7> op_extra_latency_s = {kNoExtra, kNoExtra, kNoExtra, kNoExtra,
                                              kNoExtra, kNoExtra, kNoExtra};
  // Pipeline fill per collective: the bandwidth term grows by ratio x min(bytes, cap) / bytes.
  std::array<double, 7> op_fill_ratio = {0, 0, 0, 0, 0, 0, 0};
  std::array<double, 7> op_fill_bytes = {0, 0, 0, 0, 0, 0, 0};
  std::array<double, 7> op_fill_power = {1, 1, 1, 1, 1, 1, 1};
  // The Simple protocol's fixed cost beyond the extra latency, per collective (0: none).
  std::array<double, 7> op_simple_latency_s = {0, 0, 0, 0, 0, 0, 0};
  // Launched back to back from the host, a call takes at least the host's interval between
  // calls: per collective (0: none), from a calibration of eager launches.
  std::array<double, 7> op_issue_s = {0, 0, 0, 0, 0, 0, 0};
  std::string calibration;  // where the calibration came from, or empty
};

/// Why a group could not be formed, or the group.
struct CommGroupResult {
  std::optional<CommGroup> group;
  std::string reason;
};

/// Places `ranks` ranks on the cluster: node groups in order of (device, name), each node
/// filled with up to `ranks_per_node` ranks (default: all its devices). The achievable
/// fractions are NCCL's: per-link NVLink bandwidth (topo.h SMxx_NVLINK_BW) over the link's
/// nominal 25 GB/s (NVLink 2-4) or 50 GB/s (NVLink 5); PCI_BW 12 GB/s over Gen3 x16
/// 15.75 GB/s; NET_BW 12 GB/s over 100 Gb/s. Other fabrics are taken at their nominal rate.
CommGroupResult make_comm_group(const devices::ClusterSpec& cluster,
                                std::int64_t ranks,
                                std::optional<std::int64_t> ranks_per_node = std::nullopt);

/// The NCCL generation of a device, from its vendor and family; nullopt for non-NVIDIA.
std::optional<GpuGeneration> gpu_generation(const devices::DeviceSpec& d);

}  // namespace yirage::costmodel
