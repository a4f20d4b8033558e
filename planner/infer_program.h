// One inference step of a plan as a program for the SimGrid simulator: every replica's
// forward pass (step_pass: the prompts of prefill, or one decode step), layer by layer on
// every tensor-parallel rank with the layer's two all-reduces, and the sends between
// pipeline stages. Replicas run side by side and share the network.
#pragma once

#include "planner/infer_estimate.h"
#include "planner/step_program.h"

namespace yirage::planner {

/// The step of `l` (a layout the estimate accepts) on the context's homogeneous cluster;
/// its replay compares with step_pass(cx, l).total.
StepProgramResult inference_step_program(const InferContext& cx, const InferLayout& l);

}  // namespace yirage::planner
