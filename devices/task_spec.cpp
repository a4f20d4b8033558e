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
  }
  return "?";
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
