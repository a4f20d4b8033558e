#include "planner/workload/memory_floor.h"

#include "planner/workload/model_size.h"

#include <algorithm>

namespace yirage::planner {

ParameterBytes training_parameter_bytes(const devices::TaskSpec& task) {
  using devices::DType;
  double moments = task.optimizer == devices::Optimizer::kAdam ? 8 : 4;
  if (task.framework == devices::Framework::kPytorch)
    return {4, 4, moments};
  double weights = devices::dtype_bytes(task.precision);
  double master = task.precision == DType::kFp32 || task.precision == DType::kTf32 ? 0 : 4;
  return {weights, 4, master + moments};
}

MemoryFloor memory_floor(const devices::TaskSpec& task) {
  double params = count_parameters(task.model).total;
  MemoryFloor f;
  if (task.mode != devices::Mode::kTrain) {
    f.bytes_per_param = devices::dtype_bytes(task.precision);
    f.what = "weights";
  } else {
    f.bytes_per_param = training_parameter_bytes(task).total();
    f.what = task.optimizer == devices::Optimizer::kAdam ? "weights, gradients and Adam state"
                                                         : "weights, gradients and momentum";
  }
  f.bytes = params * f.bytes_per_param;
  return f;
}

}  // namespace yirage::planner
