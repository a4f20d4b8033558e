// The plan space of a training task on a homogeneous cluster and the search over it: every
// legal layout (data, tensor and pipeline parallelism, micro-batch, recomputation, ZeRO)
// is checked for memory, then costed, and the feasible ones are ranked by the objective.
#pragma once

#include "planner/train_estimate.h"

#include <string>
#include <vector>

namespace yirage::planner {

struct SearchResult {
  std::vector<PlanEstimate> plans;  // best first
  std::vector<Rejected> rejected;   // in enumeration order
  std::size_t candidates = 0;
  std::string unsupported;  // non-empty: the task or cluster is beyond this planner (yet)
};

/// Every layout of the space, in a fixed order (cp, tp, pp, mb, recompute, zero ascending).
std::vector<Layout> training_space(const TrainContext& cx);

/// Searches the space; ties are broken by the layout's text, so the result is deterministic.
SearchResult search_training(const TrainContext& cx);

/// What the planner cannot do yet for this cluster and task, or empty.
std::string unsupported_reason(const devices::ClusterSpec& cluster, const devices::TaskSpec& task);

}  // namespace yirage::planner
