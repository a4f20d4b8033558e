#include "planner/workload/memory_floor.h"

#include "planner/workload/model_size.h"

#include <algorithm>

namespace yirage::planner {

MemoryFloor memory_floor(const devices::TaskSpec& task) {
  using devices::DType;
  double params = count_parameters(task.model).total;
  double weights = devices::dtype_bytes(task.precision);
  MemoryFloor f;
  if (task.mode != devices::Mode::kTrain) {
    f.bytes_per_param = weights;
    f.what = "weights";
  } else {
    double grads = std::max(weights, 2.0);
    double master = task.precision == DType::kFp32 || task.precision == DType::kTf32 ? 0 : 4;
    bool adam = task.optimizer == devices::Optimizer::kAdam;
    f.bytes_per_param = weights + grads + master + (adam ? 8 : 4);
    f.what = adam ? "weights, gradients and Adam state" : "weights, gradients and momentum";
  }
  f.bytes = params * f.bytes_per_param;
  return f;
}

}  // namespace yirage::planner
