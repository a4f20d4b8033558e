// The training-step model against whole steps measured on GPUs (bench/run_plan.py's
// train_steps*.csv): each row names a cluster, a task and a layout whose files lie beside the
// CSV (steps/clusters/, steps/tasks/), so the model prices exactly what ran. Step time against
// the median step, peak memory against the allocator's measured reserve, and whether the
// layout fits against whether it ran out of memory.
#pragma once

#include "costmodel/calibration.h"
#include "devices/model_loader.h"
#include "devices/registry.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace yirage::planner {

/// One row of a train_steps CSV (data/benchmarks/README.md, "Training and inference steps").
struct MeasuredStep {
  std::string cluster, task, layout, device, framework, status;  // status: ok, oom, error
  std::int64_t gpus = 0;
  double step_s = 0;          // median step (status ok)
  double peak_reserved = 0;   // bytes, the largest over ranks (status ok)
  double peak_allocated = 0;  // bytes
  int line = 0;
};

/// Reads a train_steps CSV; problems, and names that are not plain file names, are reported
/// as file:line:col (devices::InputError).
std::vector<MeasuredStep> load_measured_steps(const std::filesystem::path& path);

/// Whether `path` starts (after its comment lines) with the train_steps header.
bool is_measured_steps_file(const std::filesystem::path& path);

struct StepPoint {
  MeasuredStep row;
  std::string width;                 // "h4096": the model's hidden size, rows grouped by it
  std::optional<double> estimate_s;  // absent where the model says the layout cannot run
  double estimate_memory = 0;        // bytes per device, the model's peak
  std::string rejected;              // why the model says it cannot run
};

/// Every row of `path` priced with the calibrated model (rows with status `error` are left
/// out: they measured nothing).
std::vector<StepPoint> price_measured_steps(const std::filesystem::path& path,
                                            const std::vector<MeasuredStep>& rows,
                                            const devices::DeviceRegistry& registry,
                                            const devices::ModelRegistry& models,
                                            const costmodel::CalibrationSet& calibrations);

struct StepStats {
  std::string group;  // "1 GPU", "h4096", "all"
  std::size_t rows = 0;
  double mape = 0;            // step time, percent, over rows that ran and the model priced
  double bias = 0;            // mean signed error, percent (negative: the model is optimistic)
  double spearman = 0;        // within the group
  double memory_mape = 0;     // predicted peak against the measured reserve, percent
  std::size_t fit_agree = 0;  // rows where ran-or-out-of-memory matches fits-or-not
  std::size_t fit_rows = 0;
};

/// Statistics of `points` grouped by GPU count, by model width, by both, and over all.
std::vector<StepStats> step_stats(const std::vector<StepPoint>& points);

/// The cells of one CSV line; a cell may be quoted ("a,b"), with "" for a quote inside.
std::vector<std::string> csv_cells(const std::string& line);

/// Whether `s` may name a file beside a CSV: one plain component (letters, digits, '.', '_',
/// '-'; not starting with '.').
bool plain_file_name(const std::string& s);

/// The first line of `text` that is neither empty nor a '#' comment.
std::string first_data_line(const std::string& text);

}  // namespace yirage::planner
