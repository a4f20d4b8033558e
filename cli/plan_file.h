// Plan files: the chosen layout of a cluster and task with its estimate, written by
// `yirage-plan CLUSTER TASK --save-plan FILE` and read back by `--plan FILE` (and, later, by
// the simulator), so that a plan can be kept, compared and re-evaluated.
#pragma once

#include "devices/cluster_spec.h"
#include "devices/task_spec.h"

#include <nlohmann/json.hpp>
#include <string>

namespace yirage::cli {

struct PlanFile {
  std::string cluster;  // the cluster's name
  std::string task;     // the task's name
  std::string mode;     // train, prefill, decode, serve
  std::string layout;   // the `--layout` form
};

/// The YAML text of a plan file: version 1, the names, the layout and the estimate.
std::string plan_file_yaml(const devices::ClusterSpec& cluster,
                           const devices::TaskSpec& task,
                           const std::string& layout,
                           const nlohmann::ordered_json& estimate);

/// Reads a plan file; problems are `file:line:col` errors (throws devices::InputError),
/// including a cluster or task other than the ones given.
PlanFile read_plan_file(const std::string& path,
                        const devices::ClusterSpec& cluster,
                        const devices::TaskSpec& task);

}  // namespace yirage::cli
