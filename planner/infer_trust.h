// How far an inference plan's TTFT and TPOT can be trusted: the inference model's error on
// the prefill and decode steps measured on the same device type with weights of the same
// width (8-bit or 16-bit), as committed under data/benchmarks/<device>/infer_steps*.csv
// (bench/run_infer.py). Nothing is fitted on those rows, so the error is out of sample.
#pragma once

#include "costmodel/calibration.h"
#include "devices/model_loader.h"
#include "devices/registry.h"
#include "devices/task_spec.h"

#include <filesystem>
#include <string>

namespace yirage::planner {

/// The error over a set of measured steps.
struct InferErrors {
  std::size_t ttft_rows = 0, tpot_rows = 0;
  double ttft_mape = 0, ttft_bias = 0;  // percent; negative bias: the model is optimistic
  double tpot_mape = 0, tpot_bias = 0;
};

struct InferTrust {
  std::string device;
  bool eight_bit = false;  // weights of 8 bits (fp8, int8), else 16 or more
  devices::Framework framework = devices::Framework::kMegatron;
  InferErrors same;   // steps run under the plan's framework
  InferErrors other;  // steps run under another (plain PyTorch for an engine's plan)
};

/// The model's error on the steps measured on `device` with weights as wide as `task`'s,
/// under its framework and under the others.
InferTrust infer_trust(const std::filesystem::path& benchmarks,
                       const std::string& device,
                       const devices::TaskSpec& task,
                       const devices::DeviceRegistry& registry,
                       const devices::ModelRegistry& models,
                       const costmodel::CalibrationSet& calibrations);

/// One line for a plan: "TTFT ±5.2% (bias -3.9%) over 30, TPOT ±2.4% (bias +0.8%) over 48
/// measured steps with 16-bit weights on H200"; or "not validated: no measured inference steps
/// with 8-bit weights on A100-80GB"; or, where only another framework's steps were measured,
/// "not validated for a fused engine's kernels: ..." with those steps' error.
std::string infer_trust_text(const InferTrust& t);

}  // namespace yirage::planner
