// Training on a heterogeneous cluster as data parallelism across node groups of different
// speeds: each group runs its own best homogeneous layout on an uneven share of the global
// batch, shares chosen so that the groups finish together, then the groups' gradients are
// all-reduced across the network. Groups are taken in a canonical order (device, then
// name), so the plan does not depend on how the cluster file lists them.
#pragma once

#include "planner/search.h"

#include <string>
#include <vector>

namespace yirage::planner {

struct GroupShare {
  std::string group;
  std::string device;
  std::int64_t devices = 0;
  std::int64_t batch = 0;  // sequences of the global batch this group processes per step
  PlanEstimate plan;       // its best layout on that share
};

struct HeteroPlan {
  std::vector<GroupShare> groups;  // canonical order
  double step = 0;                 // max over groups + the cross-group gradient sync
  double cross_sync = 0;           // exposed all-reduce between the groups
  double tokens_per_s = 0;
  double mfu = 0;  // model FLOPs / the sum of the groups' peaks
  std::string note;
};

struct HeteroResult {
  std::optional<HeteroPlan> plan;
  std::string why;  // when there is no plan
};

HeteroResult search_hetero_training(const devices::ClusterSpec& cluster,
                                    const devices::TaskSpec& task,
                                    const costmodel::CalibrationSet& calibrations);

}  // namespace yirage::planner
