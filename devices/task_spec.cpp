#include "devices/task_spec.h"

namespace yirage::devices {

std::string mode_name(Mode m) {
  switch (m) {
    case Mode::kTrain:
      return "train";
    case Mode::kPrefill:
      return "prefill";
    case Mode::kDecode:
      return "decode";
    case Mode::kServe:
      return "serve";
    case Mode::kGenerate:
      return "generate";
  }
  return "?";
}

std::string precision_text(const TaskSpec& t) {
  if (t.activation_precision == t.precision && t.kv_cache_precision == t.precision &&
      t.communication_precision == t.precision)
    return dtype_name(t.precision);
  return "weights " + dtype_name(t.precision) + ", activations " +
         dtype_name(t.activation_precision) + ", KV cache " + dtype_name(t.kv_cache_precision) +
         ", communication " + dtype_name(t.communication_precision);
}

std::string optimizer_name(Optimizer o) {
  return o == Optimizer::kAdam ? "adam" : "sgd";
}

std::string minimize_name(Minimize m) {
  switch (m) {
    case Minimize::kTime:
      return "time";
    case Minimize::kCost:
      return "cost";
    case Minimize::kEnergy:
      return "energy";
  }
  return "?";
}

}  // namespace yirage::devices
