// Training with one pipeline that spans device types: each node group holds consecutive
// stages of every data-parallel replica, with its own tensor parallelism, and the layers
// are split unevenly so that the slower or smaller devices hold fewer (Narayanan et al.
// 2021's 1F1B, stages of unequal speed). Layer counts follow the groups' priced layer
// times and are capped by each stage's memory; the whole step is then priced like a
// homogeneous one (stall-scheduled pipeline, data-parallel tail, optimizer).
#pragma once

#include "costmodel/calibration.h"
#include "devices/cluster_spec.h"
#include "devices/task_spec.h"
#include "planner/plan.h"

#include <optional>
#include <string>
#include <vector>

namespace yirage::planner {

/// One node group's part of the pipeline.
struct PipelinePart {
  std::string group;
  std::string device;
  std::int64_t devices = 0;
  std::int64_t tp = 1;
  std::int64_t stages = 1;
  std::int64_t layers = 0;  // over all of this group's stages
  double stage_time = 0;    // one micro-batch on its slowest stage (compute, TP, sends)
  MemoryUse memory;         // its fullest stage
  std::vector<CompoundChoice> compounds;  // one layer's fuse-or-not decisions
};

struct HeteroPipelinePlan {
  std::int64_t dp = 1;  // replicas of the whole pipeline
  std::int64_t micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  int zero = 0;
  std::int64_t micro_batches = 0;   // per replica per step
  std::vector<PipelinePart> parts;  // in pipeline order
  StepBreakdown step;               // as for a homogeneous plan; tp_comm etc. on the slowest stage
  double tokens_per_s = 0;
  double mfu = 0;          // model FLOPs / the groups' combined peak
  devices::Joules energy;  // every device at TDP; 0 if a device's TDP is unknown
  std::optional<double> usd_per_step;
  std::size_t candidates = 0;  // layouts tried

  /// "dp=2,mb=1,recompute=none,zero=1 | h100: tp=8,pp=1,layers=40 | ..."
  std::string str() const;
};

struct HeteroPipelineResult {
  std::optional<HeteroPipelinePlan> plan;
  std::string why;         // when there is none: the smallest shortfall, or what is wrong
  bool malformed = false;  // evaluate_hetero_pipeline: the layout itself is wrong
};

HeteroPipelineResult search_hetero_pipeline(const devices::ClusterSpec& cluster,
                                            const devices::TaskSpec& task,
                                            const costmodel::CalibrationSet& calibrations);

/// Evaluates the pipeline written as HeteroPipelinePlan::str() prints it,
/// "dp=8,mb=1,recompute=none,zero=3 | ascend: tp=2,pp=1,layers=9 | ...", every group once,
/// in pipeline order; `why` says what is wrong with it or why it cannot run.
HeteroPipelineResult evaluate_hetero_pipeline(const devices::ClusterSpec& cluster,
                                              const devices::TaskSpec& task,
                                              const costmodel::CalibrationSet& calibrations,
                                              const std::string& layout);

}  // namespace yirage::planner
