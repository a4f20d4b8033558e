// What the planning commands start from: the cluster and task files, loaded and checked to
// fit, the calibrations, and `--layout TEXT` (or `--plan FILE`'s layout) parsed and
// estimated. A malformed layout is exit 2 (bad input), one that cannot run exit 1, each with
// its message printed.
#pragma once

#include "cli/context.h"
#include "planner/hetero_pipeline.h"
#include "planner/infer_estimate.h"
#include "planner/train_estimate.h"

#include <string>
#include <variant>
#include <vector>

namespace yirage::cli {

struct PlanInputs {
  devices::ClusterSpec cluster;
  devices::TaskSpec task;
  costmodel::CalibrationSet calibrations;
  std::string layout;  // --layout, or the layout of the --plan file; empty: search
};

/// Loads `files` (cluster, task) and the calibrations; `plan_file` (when given, and never
/// with `layout`) gives the layout. Input errors throw devices::InputError as loading does;
/// both options at once is exit 2.
std::variant<PlanInputs, int> load_plan_inputs(Context& cx,
                                               const std::vector<std::string>& files,
                                               const std::string& layout,
                                               const std::string& plan_file);

/// The estimate of the training layout `text`, or the exit code after printing why not.
std::variant<planner::PlanEstimate, int> estimate_layout_arg(Context& cx,
                                                             const planner::TrainContext& tc,
                                                             const std::string& text);

/// The mixed cluster's pipeline `text` ("dp=..,mb=.. | group: tp=..,pp=..,layers=.. | ..."),
/// or the exit code after printing why not.
std::variant<planner::HeteroPipelinePlan, int> estimate_pipeline_layout_arg(
    Context& cx,
    const devices::ClusterSpec& cluster,
    const devices::TaskSpec& task,
    const costmodel::CalibrationSet& calibrations,
    const std::string& text);

/// The estimate of the inference layout `text` (replicas default to as many as the cluster
/// holds), or the exit code after printing why not.
std::variant<planner::InferEstimate, int> estimate_infer_layout_arg(Context& cx,
                                                                    const planner::InferContext& ic,
                                                                    const std::string& text);

}  // namespace yirage::cli
