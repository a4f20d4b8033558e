// One training step of a plan as a program for the SimGrid simulator (costmodel/sim): the
// planner's schedule, rank by rank. Ranks follow Megatron-LM's order (tensor fastest, then
// context, data, pipeline), compute durations come from the same stage model the estimate
// uses, and the communication is real traffic: tensor- and context-parallel collectives,
// pipeline sends of every micro-batch, the data-parallel gradient sync.
#pragma once

#include "costmodel/sim/sim_program.h"
#include "planner/hetero.h"
#include "planner/train_estimate.h"

#include <string>
#include <vector>

namespace yirage::planner {

struct StepProgram {
  costmodel::SimProgram program;
  std::vector<std::string> notes;  // what the replay simplifies
  std::vector<std::size_t> ends;   // a "step end" task per rank: all its work is done
};

struct StepProgramResult {
  std::optional<StepProgram> step;
  std::string why;  // when the layout cannot be replayed
};

/// The step of `l` (a layout the estimate accepts) on the context's homogeneous cluster;
/// `ranks` (when given) maps the context's ranks to those of a larger cluster.
StepProgramResult training_step_program(const TrainContext& cx,
                                        const Layout& l,
                                        const std::vector<std::int64_t>* ranks = nullptr);

/// Data parallelism across the node groups of a mixed cluster (a HeteroPlan): every group's
/// own step on its ranks, then the gradient all-reduce across the groups, one ring per
/// matching shard as the estimate prices it.
/// One pipeline across the node groups (a HeteroPipelinePlan): its stages on their groups'
/// ranks, the sends between groups over the network.
StepProgramResult hetero_pipeline_program(const devices::ClusterSpec& cluster,
                                          const devices::TaskSpec& task,
                                          const costmodel::CalibrationSet& calibrations,
                                          const HeteroPipelinePlan& plan);

StepProgramResult hetero_data_parallel_program(const devices::ClusterSpec& cluster,
                                               const devices::TaskSpec& task,
                                               const costmodel::CalibrationSet& calibrations,
                                               const HeteroPlan& plan);

}  // namespace yirage::planner
