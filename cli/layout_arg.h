// `--layout TEXT` as the commands take it: parsed, then estimated. A malformed layout is
// exit 2 (bad input), one that cannot run exit 1, each with its message printed.
#pragma once

#include "cli/context.h"
#include "planner/infer_estimate.h"
#include "planner/train_estimate.h"

#include <string>
#include <variant>

namespace yirage::cli {

/// The estimate of the training layout `text`, or the exit code after printing why not.
std::variant<planner::PlanEstimate, int> estimate_layout_arg(Context& cx,
                                                             const planner::TrainContext& tc,
                                                             const std::string& text);

/// The estimate of the inference layout `text` (replicas default to as many as the cluster
/// holds), or the exit code after printing why not.
std::variant<planner::InferEstimate, int> estimate_infer_layout_arg(Context& cx,
                                                                    const planner::InferContext& ic,
                                                                    const std::string& text);

}  // namespace yirage::cli
