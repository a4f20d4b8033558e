// Plans replayed in the SimGrid simulator next to their analytical estimates: the table,
// the links that limited the simulation, and the trace. Shared by `simulate` and the main
// command's --simulate-top.
#pragma once

#include "costmodel/sim/simulate.h"
#include "planner/step_program.h"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace yirage::cli {

struct SimulatedPlan {
  planner::PlanEstimate plan;
  std::optional<planner::StepProgram> step;  // empty: not simulated (see why)
  costmodel::SimResult result;
  double simulated = 0;  // the makespan plus the estimate's optimizer step
  std::string why;
};

/// Replays `plan` (single-threaded: the simulator forks).
SimulatedPlan simulate_plan(const planner::TrainContext& cx, const planner::PlanEstimate& plan);

/// The table: layout, estimate, simulation, difference, the most contended link.
void print_simulated(std::ostream& out, const std::vector<SimulatedPlan>& plans);

/// What limited the first simulated plan: its saturated links and the replay's notes.
void print_simulation_detail(std::ostream& out, const SimulatedPlan& s);

nlohmann::ordered_json simulated_json(const SimulatedPlan& s);

}  // namespace yirage::cli
