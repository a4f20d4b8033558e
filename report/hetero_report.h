// Training on a heterogeneous cluster, printed: data parallelism across the node groups
// (one row per group) and one pipeline spanning them (one row per group's stages), the
// faster first, the other as the alternative; and the same as JSON.
#pragma once

#include "planner/hetero.h"

#include <nlohmann/json.hpp>
#include <ostream>

namespace yirage::report {

void print_hetero_training(std::ostream& out, const planner::HeteroResult& r);

/// {"plans": [the strategies that can run, best first], "refused": [{strategy, reason}]}:
/// data parallelism across the node groups and one pipeline across them.
nlohmann::ordered_json hetero_training_json(const planner::HeteroResult& r);

/// One pipeline across the groups: the layout, a row per group, the breakdown.
void print_hetero_pipeline(std::ostream& out, const planner::HeteroPipelinePlan& h);
nlohmann::ordered_json hetero_pipeline_json(const planner::HeteroPipelinePlan& h);

/// True when the pipeline across the groups is the better (or the only) plan.
bool pipeline_is_best(const planner::HeteroResult& r);

}  // namespace yirage::report
