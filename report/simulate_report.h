// Plans replayed in the SimGrid simulator next to their analytical estimates: the table,
// the links that limited the simulation, and the trace. Shared by `simulate` and the main
// command's --simulate-top.
#pragma once

#include "costmodel/sim/simulate.h"
#include "planner/infer_program.h"
#include "planner/step_program.h"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace yirage::report {

struct SimulatedPlan {
  std::string layout;
  double estimate = 0;  // the analytical time of what is replayed: a training step, a TTFT...
  double added = 0;     // the part of it the replay leaves out: the optimizer step
  std::optional<planner::StepProgram> step;  // empty: not simulated (see why)
  costmodel::SimResult result;
  double simulated = 0;  // the makespan plus `added`
  std::string why;
};

/// Replays `plan` (single-threaded: the simulator forks).
SimulatedPlan simulate_plan(const planner::TrainContext& cx, const planner::PlanEstimate& plan);

/// Replays one forward pass of an inference plan (prefill: its TTFT; decode and serve: a
/// decode step).
SimulatedPlan simulate_plan(const planner::InferContext& cx, const planner::InferEstimate& plan);

/// The table: layout, estimate, simulation, difference, the most contended link.
void print_simulated(std::ostream& out, const std::vector<SimulatedPlan>& plans);

/// What limited the first simulated plan: its saturated links and the replay's notes.
void print_simulation_detail(std::ostream& out, const SimulatedPlan& s);

nlohmann::ordered_json simulated_json(const SimulatedPlan& s);

}  // namespace yirage::report
