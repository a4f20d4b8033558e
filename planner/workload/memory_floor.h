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

/// Training keeps weights and gradients at the task's precision (gradients at least 2 B),
/// an fp32 master copy unless training in fp32, and optimizer state: Adam's two fp32
/// moments (8 B) or SGD's momentum (4 B): 16 B per parameter for bf16 with Adam, as in
/// ZeRO (Rajbhandari et al. 2020, §3.1). Inference keeps the weights only.
MemoryFloor memory_floor(const devices::TaskSpec& task);

}  // namespace yirage::planner
