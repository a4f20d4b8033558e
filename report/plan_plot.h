// `--plot FILE`: the best plans side by side as an SVG of two stacked-bar charts, where each
// plan's step (or token) time goes and what fills each device's memory against what it can
// hold. The numbers are the table's; the picture is for comparing layouts at a glance.
#pragma once

#include "planner/infer_estimate.h"
#include "planner/plan.h"

#include <string>
#include <vector>

namespace yirage::report {

/// The first `count` training plans: the step's parts and the memory per device's.
std::string training_plot_svg(const std::string& title,
                              const std::vector<planner::PlanEstimate>& plans,
                              std::size_t count);

/// The first `count` inference plans: the time per output token (or to the first token,
/// for prefill) and the memory per device (weights, KV cache, workspace).
std::string inference_plot_svg(const std::string& title,
                               const std::vector<planner::InferEstimate>& plans,
                               std::size_t count);

}  // namespace yirage::report
