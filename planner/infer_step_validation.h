// The inference model against prefill and decode steps measured on GPUs (bench/run_infer.py's
// infer_steps*.csv): each row's task file lies beside the CSV (steps/tasks/), and is priced
// at the row's batch and context with the row's tensor parallelism: time to first token as a
// prefill of the batch, time per output token as a decode step against that context.
#pragma once

#include "costmodel/calibration.h"
#include "devices/model_loader.h"
#include "devices/registry.h"
#include "devices/task_spec.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace yirage::planner {

/// One row of an infer_steps CSV (data/benchmarks/README.md, "Training and inference steps").
struct MeasuredInferStep {
  std::string cluster, task, device, status;  // status: ok, oom, error
  std::int64_t tp = 0, gpus = 0, batch = 0, context = 0;
  std::optional<double> ttft_s;  // absent where the prefill was not run
  std::optional<double> tpot_s;
  int line = 0;
};

/// Whether `path` starts (after its comment lines) with the infer_steps header.
bool is_measured_infer_steps_file(const std::filesystem::path& path);

/// Reads an infer_steps CSV; problems are reported as file:line:col (devices::InputError).
std::vector<MeasuredInferStep> load_measured_infer_steps(const std::filesystem::path& path);

struct InferStepPoint {
  MeasuredInferStep row;
  std::string width;                                             // "h4096"
  devices::DType weights = devices::DType::kBf16;                // the task's weights precision
  devices::Framework framework = devices::Framework::kMegatron;  // the task's
  std::optional<double> ttft_s;  // the model's, where it prices the prefill
  std::optional<double> tpot_s;  // the model's, where it prices the decode step
};

/// The rows that ran (status ok), priced with the calibrated model.
std::vector<InferStepPoint> price_measured_infer_steps(
    const std::filesystem::path& path,
    const std::vector<MeasuredInferStep>& rows,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations);

struct InferStepStats {
  std::string group;  // "1 GPU", "h4096", "all"
  std::size_t ttft_rows = 0, tpot_rows = 0;
  double ttft_mape = 0, ttft_bias = 0;  // percent; negative bias: the model is optimistic
  double tpot_mape = 0, tpot_bias = 0;
};

/// Statistics grouped by GPU count, by model width, and over all.
std::vector<InferStepStats> infer_step_stats(const std::vector<InferStepPoint>& points);

}  // namespace yirage::planner
