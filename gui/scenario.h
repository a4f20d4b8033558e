// A what-if scenario: a cluster and a task as loaded from their files, the changes the
// controls make to them, and the plans the planner finds for the result. No Qt here: the
// window runs evaluate() on a worker thread, tests call it directly.
#pragma once

#include "costmodel/calibration.h"
#include "devices/cluster_spec.h"
#include "devices/registry.h"
#include "devices/task_spec.h"
#include "planner/hetero.h"
#include "planner/infer_estimate.h"
#include "planner/search.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yirage::gui {

/// What the controls change. Unset fields keep the files' values; a mixed cluster's first
/// node group is the one resized or retyped.
struct WhatIf {
  std::optional<std::int64_t> nodes;
  std::optional<std::int64_t> devices_per_node;
  std::optional<std::string> device;  // another device type on the same fabric and network
  std::optional<std::int64_t> global_batch;
  std::optional<std::int64_t> sequence_length;
  std::optional<devices::DType> precision;
  // A serve task's requests (its batch is the search's choice, its lengths are these).
  std::optional<double> request_rate;  // requests per second, the whole cluster
  std::optional<std::int64_t> prompt_length;
  std::optional<std::int64_t> output_length;
  double fabric_scale = 1;   // the node fabric's bandwidth, times this
  double network_scale = 1;  // the NICs' bandwidth, times this

  bool operator==(const WhatIf&) const = default;
};

/// The cluster and task with `w` applied; throws devices::InputError on a change that makes
/// no sense (an unknown device, a size below 1).
void apply(const WhatIf& w,
           const devices::DeviceRegistry& registry,
           devices::ClusterSpec& cluster,
           devices::TaskSpec& task);

/// The plans of one scenario: training (homogeneous or mixed) or inference.
struct ScenarioResult {
  std::string error;  // the message when the scenario cannot be planned
  devices::ClusterSpec cluster;
  devices::TaskSpec task;
  std::vector<planner::PlanEstimate> train;             // homogeneous training, best first
  std::vector<planner::InferEstimate> infer;            // homogeneous inference, best first
  std::optional<planner::HeteroResult> mixed_train;     // several device types: training
  std::optional<planner::HeteroInferPlan> mixed_infer;  // several device types: inference
  std::string report;  // what the CLI prints for the best plan (mixed clusters: everything)
  std::size_t candidates = 0;
  double seconds = 0;  // wall time of the search
};

ScenarioResult evaluate(devices::ClusterSpec cluster,
                        devices::TaskSpec task,
                        const costmodel::CalibrationSet& calibrations);

}  // namespace yirage::gui
