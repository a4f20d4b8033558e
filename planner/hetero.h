// Training on a heterogeneous cluster as data parallelism across node groups of different
// speeds: each group runs its own best homogeneous layout on an uneven share of the global
// batch, shares chosen so that the groups finish together, then the groups' gradients are
// all-reduced across the network; or as one pipeline spanning the groups (hetero_pipeline.h),
// whichever is faster. Groups are taken in a canonical order (device, then
// name), so the plan does not depend on how the cluster file lists them.
#pragma once

#include "planner/hetero_pipeline.h"
#include "planner/infer_estimate.h"
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
  std::optional<HeteroPlan> plan;              // data parallelism across the groups
  std::string why;                             // when there is no such plan
  std::optional<HeteroPipelinePlan> pipeline;  // one pipeline spanning the groups
  std::string pipeline_why;                    // when there is no such plan
};

HeteroResult search_hetero_training(const devices::ClusterSpec& cluster,
                                    const devices::TaskSpec& task,
                                    const costmodel::CalibrationSet& calibrations);

/// Inference on a heterogeneous cluster: every node group serves its own replicas with its
/// best homogeneous layout, on a share of the work (sequences of the batch for prefill and
/// decode, requests per second for serving) chosen so that the groups' latencies match; a
/// router in front sends each group its share.
struct InferShare {
  std::string group;
  std::string device;
  std::int64_t devices = 0;
  double share = 0;  // sequences (prefill, decode) or requests per second (serve)
  InferEstimate plan;
};

struct HeteroInferPlan {
  std::vector<InferShare> groups;  // canonical order
  double tokens_per_s = 0;         // the groups' sum
  double ttft = 0;                 // the worst group's (prefill, serve)
  double tpot = 0;                 // the worst group's (decode, serve)
  bool meets_objective = false;    // every group meets the task's limits
  std::string note;
};

struct HeteroInferResult {
  std::optional<HeteroInferPlan> plan;
  std::string why;
};

HeteroInferResult search_hetero_inference(const devices::ClusterSpec& cluster,
                                          const devices::TaskSpec& task,
                                          const costmodel::CalibrationSet& calibrations);

}  // namespace yirage::planner
