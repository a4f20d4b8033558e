// The input of the SimGrid simulation: one step of a plan as tasks on the devices of a
// cluster. The planner builds it (compute durations from the cost model, collectives with
// their groups, sizes and algorithms, pipeline sends); costmodel/sim/simulate.h replays it.
//
// Ranks are indices into the cluster's devices in canonical order: node groups as the
// ClusterSpec lists them, node by node, device by device (sim_rank_of below).
//
// Ordering. Tasks are issued in the order they are added. A task waits for
//  - the previous task of each of its ranks on the same stream (a CUDA/NCCL stream runs its
//    work in order), and
//  - every task listed in `after` (all ranks of it), e.g. a pipeline stage's forward of
//    micro-batch i waits for the send from the previous stage.
// Tasks on different streams of a device run concurrently: two compute streams share the
// device's speed, and simultaneous collectives share the links they cross.
#pragma once

#include "costmodel/collective.h"
#include "devices/cluster_spec.h"
#include "devices/support/units.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace yirage::costmodel {

enum class SimTaskKind { kCompute, kCollective, kSend };

std::string sim_task_kind_name(SimTaskKind k);  // "compute", "collective", "send"

/// One task of the step.
struct SimTask {
  std::string name;  // shown in the timeline, e.g. "fwd mb3" or "dp grad all_reduce"
  SimTaskKind kind = SimTaskKind::kCompute;
  std::string stream = "compute";          // e.g. "compute", "tp", "dp", "pp"
  std::vector<std::int64_t> ranks;         // compute: {rank}; collective: the group, in ring order;
                                           // send: {from, to}
  devices::Seconds duration;               // compute only
  Collective op = Collective::kAllReduce;  // collective only
  Algorithm algorithm = Algorithm::kRing;  // collective only: ring, tree or hierarchical
                                           // (nvls is replayed as ring, direct as all-pairs)
  double bytes = 0;  // collective: the buffer per rank as nccl-tests counts it; send: bytes
  // Collective and send: NCCL's protocol, which sets the per-step latency and the share of
  // the wire that carries data (LL: half, its flags the other half; LL128: 120 of 128 B).
  Protocol protocol = Protocol::kSimple;
  std::vector<std::size_t> after;  // ids of tasks that must finish first (all their ranks)

  bool operator==(const SimTask&) const = default;
};

/// A step: the tasks in issue order. The helpers return the id of the added task.
struct SimProgram {
  std::vector<SimTask> tasks;

  /// Adds `t` after checking its ranks and dependencies (CHECK: a bug in the caller).
  std::size_t add(SimTask t);
  std::size_t compute(std::int64_t rank,
                      std::string name,
                      devices::Seconds duration,
                      std::vector<std::size_t> after = {},
                      std::string stream = "compute");
  std::size_t collective(std::vector<std::int64_t> ranks,
                         Collective op,
                         double bytes,
                         std::string name,
                         std::string stream,
                         std::vector<std::size_t> after = {});
  std::size_t send(std::int64_t from,
                   std::int64_t to,
                   double bytes,
                   std::string name,
                   std::vector<std::size_t> after = {},
                   std::string stream = "pp");

  bool operator==(const SimProgram&) const = default;
};

/// Where a rank sits: its node group, its node (counted over the whole cluster) and its index
/// inside the node (its rail on a rail-optimized network).
struct SimRankPlace {
  std::size_t group = 0;
  std::int64_t node = 0;
  std::int64_t local = 0;

  bool operator==(const SimRankPlace&) const = default;
};

/// The place of every rank of `cluster`, in canonical rank order.
std::vector<SimRankPlace> sim_rank_places(const devices::ClusterSpec& cluster);

/// The rank of device `local` of node `node_in_group` of group `group`.
std::int64_t sim_rank_of(const devices::ClusterSpec& cluster,
                         std::size_t group,
                         std::int64_t node_in_group,
                         std::int64_t local);

}  // namespace yirage::costmodel
