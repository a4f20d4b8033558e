// Printing plans: the ranked table, the best plan's breakdown and what binds it, and JSON.
#pragma once

#include "costmodel/calibration.h"
#include "devices/cluster_spec.h"
#include "devices/task_spec.h"
#include "planner/hetero.h"
#include "planner/infer_estimate.h"
#include "planner/search.h"

#include <nlohmann/json.hpp>
#include <ostream>

namespace yirage::report {

void print_plan_table(std::ostream& out,
                      const std::vector<planner::PlanEstimate>& plans,
                      std::size_t top);
void print_plan_detail(std::ostream& out,
                       const planner::PlanEstimate& p,
                       const devices::TaskSpec& task,
                       const std::string& model_note);
nlohmann::ordered_json plan_json(const planner::PlanEstimate& p);
/// `plan_json` with the whole run where the task gives its training tokens: `run` holds
/// the tokens, the days and the USD (null without a price).
nlohmann::ordered_json plan_run_json(const planner::PlanEstimate& p, const devices::TaskSpec& task);
void print_infer_table(std::ostream& out,
                       const devices::TaskSpec& task,
                       const std::vector<planner::InferEstimate>& plans,
                       std::size_t top);
nlohmann::ordered_json infer_json(const planner::InferEstimate& p);

/// Inference on a heterogeneous cluster: one row per node group, then the totals.
void print_hetero_infer(std::ostream& out,
                        const devices::TaskSpec& task,
                        const planner::HeteroInferPlan& h);

/// What the estimates rest on: which device types run at calibrated rates and which
/// collectives are calibrated (data/calibration/), and which command checks the model of
/// `mode` (training steps or inference) against measurements.
std::string model_note(const devices::ClusterSpec& c,
                       const costmodel::CalibrationSet& calibrations,
                       devices::Mode mode);

/// One sentence on what limits the step; `inner` names the parallelism whose collectives
/// run inside the layers ("tensor", "TP and EP", ...).
std::string binding_sentence(const planner::PlanEstimate& p);
std::string binding_sentence(const planner::StepBreakdown& b, const std::string& inner);

}  // namespace yirage::report
