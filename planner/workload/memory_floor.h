// The least device memory a task can possibly need: its model state sharded perfectly
// over every device, with no activations, KV cache or workspace. A cluster with less
// memory than this cannot run the task under any plan.
#pragma once

#include "devices/task_spec.h"

#include <string>

namespace yirage::planner {

struct MemoryFloor {
  double bytes = 0;  // the floor
  double bytes_per_param = 0;
  std::string what;  // "weights", "weights, gradients and Adam state"
};

/// Bytes of model state per parameter in training, by what holds them.
struct ParameterBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;  // the fp32 master copy and the optimizer's moments

  double total() const { return weights + gradients + optimizer; }
};

/// Megatron-LM keeps the weights at the task's precision, fp32 main gradients (it
/// accumulates and all-reduces gradients in fp32 for bf16, and Korthikanti et al.'s Figure 1
/// counts them so for fp16), an fp32 master copy unless the weights are fp32 already (fp32,
/// TF32) and Adam's two fp32 moments (8 B) or SGD's momentum (4 B): 18 B per parameter for
/// bf16 with Adam. Eager PyTorch (`framework: pytorch`) keeps fp32 weights and gradients and
/// the moments: 16 B.
ParameterBytes training_parameter_bytes(const devices::TaskSpec& task);

/// Training keeps the model state of training_parameter_bytes; inference the weights only.
MemoryFloor memory_floor(const devices::TaskSpec& task);

}  // namespace yirage::planner
