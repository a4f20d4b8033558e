// The model of one training step under a layout (model, not search): memory per device
// checked first, then the step as a schedule of stage compute, tensor-parallel collectives,
// pipeline sends, data-parallel / ZeRO collectives and the optimizer, priced with the
// costmodel library (GPU operations, collectives, stall scheduling).
#pragma once

#include "costmodel/calibration.h"
#include "devices/cluster_spec.h"
#include "devices/task_spec.h"
#include "planner/plan.h"

#include <variant>

namespace yirage::planner {

class LayerCostCache;

struct TrainContext {
  const devices::ClusterSpec& cluster;
  const devices::TaskSpec& task;
  const costmodel::CalibrationSet& calibrations;
  double memory_headroom = 0.05;          // fraction of device memory kept free (CUDA context,
                                          // communication buffers, allocator fragmentation)
  LayerCostCache* layer_cache = nullptr;  // a search's cache of layer costs (train_stage.h)
};

/// Memory per device of the layout (first and last pipeline stages; the larger).
MemoryUse training_memory(const TrainContext& cx, const Layout& l);

/// Estimates one layout on a homogeneous cluster, or says why it cannot run.
std::variant<PlanEstimate, Rejected> estimate_training(const TrainContext& cx, const Layout& l);

}  // namespace yirage::planner
