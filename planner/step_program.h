// One training step of a plan as a program for the SimGrid simulator (costmodel/sim): the
// planner's schedule, rank by rank. Ranks follow Megatron-LM's order (tensor fastest, then
// context, data, pipeline), compute durations come from the same stage model the estimate
// uses, and the communication is real traffic: tensor- and context-parallel collectives,
// pipeline sends of every micro-batch, the data-parallel gradient sync.
#pragma once

#include "costmodel/sim/sim_program.h"
#include "planner/train_estimate.h"

#include <string>
#include <vector>

namespace yirage::planner {

struct StepProgram {
  costmodel::SimProgram program;
  std::vector<std::string> notes;  // what the replay simplifies
};

struct StepProgramResult {
  std::optional<StepProgram> step;
  std::string why;  // when the layout cannot be replayed
};

/// The step of `l` (a layout the estimate accepts) on the context's homogeneous cluster.
StepProgramResult training_step_program(const TrainContext& cx, const Layout& l);

}  // namespace yirage::planner
