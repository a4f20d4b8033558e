// How far a training plan's step time can be trusted: the step model's error on the whole
// steps measured on the same device type under the same framework, as committed under
// data/benchmarks/<device>/train_steps*.csv (bench/run_plan.py). Nothing is fitted on those
// rows, so the error is out of sample.
#pragma once

#include "costmodel/calibration.h"
#include "devices/model_loader.h"
#include "devices/registry.h"
#include "devices/task_spec.h"
#include "planner/step_validation.h"

#include <filesystem>
#include <string>
#include <vector>

namespace yirage::planner {

struct StepTrust {
  std::string device;
  devices::Framework framework = devices::Framework::kMegatron;
  std::size_t rows = 0;            // measured steps that ran and the model priced
  double mape = 0;                 // percent, over those rows
  double bias = 0;                 // mean signed error, percent (negative: the model is optimistic)
  std::vector<StepStats> by_gpus;  // "1 GPU", "2 GPUs", ...
  std::size_t without_te = 0;      // of `rows`, Megatron-LM steps without Transformer Engine
  // The same over the layouts with tensor parallelism and over those without: eager
  // tensor parallelism runs at the pace of the host's Python dispatch, so its error is its own.
  StepStats with_tp;
  StepStats without_tp;
  // The same over the layouts whose step the model has the GPU busy for (keeps_gpu_busy) and
  // over the others, which wait on the host or on collectives: the second move with the host
  // and are priced less closely.
  StepStats busy;
  StepStats idle;
};

/// The share of its step a plan's kernels keep the GPU busy at or above which its step is the
/// GPU's (keeps_gpu_busy).
constexpr double kBusyShare = 0.85;

/// Whether the model's kernels fill at least kBusyShare of step `b` (the rest: the host's
/// issue, exposed collectives, the pipeline's bubble).
bool keeps_gpu_busy(const StepBreakdown& b);

/// The model's error on the steps measured on `device` under `framework` in
/// `benchmarks / device / train_steps*.csv` (none: rows 0).
StepTrust step_trust(const std::filesystem::path& benchmarks,
                     const std::string& device,
                     devices::Framework framework,
                     const devices::DeviceRegistry& registry,
                     const devices::ModelRegistry& models,
                     const costmodel::CalibrationSet& calibrations);

/// One line for a plan: "±2.9% MAPE (bias +2.7%) over 46 measured eager-PyTorch steps on
/// H100-SXM: 2.9% on 1 GPU (46)", then, where both kinds were measured, the error over the
/// layouts like the plan's (`busy`: "; where the GPU is busy for 85% of the step or more, as
/// in this plan: ±2.7% (64)"; else by tensor parallelism, "; with tensor parallelism, as this
/// layout: ±9.1% (127)") and, where such layouts were measured more than once, how far one
/// moves when measured again (", where one layout measured again moves by ±4.7% (95)"), or
/// "not validated: no measured Megatron-LM steps on H100-SXM".
std::string step_trust_text(const StepTrust& t, bool tensor_parallel, bool busy);

/// The CSV files in `dir` whose names start with `prefix` ("train_steps", "infer_steps"),
/// sorted; none where `dir` is not a folder.
std::vector<std::filesystem::path> measured_files(const std::filesystem::path& dir,
                                                  const std::string& prefix);

/// The framework's name in task files ("megatron", "pytorch").
std::string framework_name(devices::Framework f);

}  // namespace yirage::planner
