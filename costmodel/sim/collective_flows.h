// A collective as the point-to-point transfers its algorithm performs, with the order
// between them (NCCL's algorithms: src/device/all_reduce.h and friends). Pure: no SimGrid.
#pragma once

#include "costmodel/sim/sim_program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace yirage::costmodel {

/// One transfer of a collective. `deps` index earlier flows of the same collective.
struct SimFlow {
  std::int64_t src = 0;  // ranks
  std::int64_t dst = 0;
  double bytes = 0;
  std::vector<std::uint32_t> deps;
  /// Ring steps this transfer stands for (more than one where a long ring is coarsened):
  /// the replay adds the per-hop latency of the other steps before it.
  std::int64_t steps = 1;
};

struct CollectiveFlows {
  std::vector<SimFlow> flows;
  /// Per position in the task's group: the flows after which that rank's part is done.
  std::vector<std::vector<std::uint32_t>> done;
  std::int64_t channels = 1;  // parallel rings (one per rail across nodes)
  std::string note;           // when the algorithm was replayed as another
};

/// The transfers of collective task `t` (kind kCollective) on ranks placed by `places`.
/// Rings that cross nodes with the same number of ranks on every node run one channel per
/// rank of a node, each entering and leaving a node on one rail (NCCL's rings on
/// rail-optimized clusters); trees are NCCL's two complementary binary trees over the nodes
/// (a chain inside each node), each carrying half the bytes in `chunks` pipelined pieces.
///
/// `max_ring_steps` > 0 coarsens every ring of more steps into that many super-steps, each
/// carrying the bytes of the steps it stands for (SimFlow::steps): the links carry the same
/// load at the same time, with far fewer transfers.
CollectiveFlows collective_flows(const SimTask& t,
                                 const std::vector<SimRankPlace>& places,
                                 std::int64_t chunks,
                                 std::int64_t max_ring_steps = 0);

}  // namespace yirage::costmodel
