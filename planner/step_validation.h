// The training-step model against whole steps measured on GPUs (bench/run_plan.py's
// train_steps*.csv): each row names a cluster, a task and a layout whose files lie beside the
// CSV (steps/clusters/, steps/tasks/), so the model prices exactly what ran. Step time against
// the median step, peak memory against the allocator's measured reserve, and whether the
// layout fits against whether it ran out of memory.
#pragma once

#include "costmodel/calibration.h"
#include "devices/cluster_spec.h"
#include "devices/model_loader.h"
#include "devices/registry.h"
#include "devices/support/diagnostics.h"
#include "devices/task_spec.h"
#include "planner/plan.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace yirage::planner {

/// One row of a train_steps CSV (data/benchmarks/README.md, "Training and inference steps").
struct MeasuredStep {
  std::string cluster, task, layout, device, framework, status;  // status: ok, oom, error
  std::int64_t gpus = 0;
  double step_s = 0;          // median step (status ok)
  double peak_reserved = 0;   // bytes, the largest over ranks (status ok)
  double peak_allocated = 0;  // bytes
  // What an earlier job in the same process left allocated, taken off both peaks above: the
  // row's leftover_bytes, or what a memory probe beside the file shows (subtract_leftover,
  // planner/step_validation.h).
  double leftover = 0;
  double optimizer_s = 0;     // the optimizer phase (clipping and the step); 0: not measured
  double host_forward_s = 0;  // rank 0's host time in a step's forward passes; 0: not measured
  // The kernels of one profiled step by kind (the kernel_*_s columns; norms, embedding,
  // copies, reductions, elementwise and other kernels count as `memory`), where profiled.
  std::optional<KernelTime> kernels;
  int line = 0;
};

/// Reads a train_steps CSV; problems, and names that are not plain file names, are reported
/// as file:line:col (devices::InputError).
std::vector<MeasuredStep> load_measured_steps(const std::filesystem::path& path);

/// Whether `path` starts (after its comment lines) with the train_steps header.
bool is_measured_steps_file(const std::filesystem::path& path);

struct StepPoint {
  MeasuredStep row;
  std::string width;                   // "h4096": the model's hidden size, rows grouped by it
  std::optional<double> estimate_s;    // absent where the model says the layout cannot run
  double estimate_memory = 0;          // bytes per device, the model's peak
  double estimate_live = 0;            // of it, the live peak (what decides whether it fits)
  double estimate_optimizer_s = 0;     // the model's optimizer step
  double estimate_host_forward_s = 0;  // the model's host time issuing the forward passes
  std::string rejected;                // why the model says it cannot run
  std::int64_t micro_batch = 0;        // the one priced (a layout's `mb=best`: the fastest)
  KernelTime estimate_kernels;         // the model's kernels of one step by kind
  // The same on the pipeline stage the row's profile counted (Megatron-Core's: rank 0's).
  KernelTime estimate_profiled_kernels;
};

/// Every row of `path` priced with the calibrated model (rows with status `error` are left
/// out: they measured nothing). A layout's `mb=best` stands for a micro-batch its source did
/// not publish: the row is priced at the fastest power of two that fits, as the run's authors
/// tuned theirs.
/// Where a device's matrix efficiency in `calibrations` was fitted on the even rows of `file`
/// (`calibrate --matrix-steps`), keeps that device's odd rows only, in the fit's order (the rows
/// that ran); returns the device, or empty when nothing was fitted on the file.
std::string keep_held_out(const std::filesystem::path& file,
                          const costmodel::CalibrationSet& calibrations,
                          std::vector<MeasuredStep>& rows);

std::vector<StepPoint> price_measured_steps(const std::filesystem::path& path,
                                            const std::vector<MeasuredStep>& rows,
                                            const devices::DeviceRegistry& registry,
                                            const devices::ModelRegistry& models,
                                            const costmodel::CalibrationSet& calibrations);

struct StepStats {
  std::string group;  // "1 GPU", "h4096", "all"
  std::size_t rows = 0;
  double mape = 0;              // step time, percent, over rows that ran and the model priced
  double bias = 0;              // mean signed error, percent (negative: the model is optimistic)
  double spearman = 0;          // within the group
  double memory_mape = 0;       // predicted peak against the measured reserve, percent
  std::size_t memory_rows = 0;  // rows with a measured reserve (published runs have none)
  std::size_t fit_agree = 0;    // rows where ran-or-out-of-memory matches fits-or-not
  std::size_t fit_rows = 0;
  // Choosing a layout: among the layouts of one task on one cluster that ran (two or more),
  // the one the model prices fastest against the fastest measured (a layout measured more
  // than once counts with its median). `regret`: the worst such shortfall, percent.
  std::size_t choices = 0;
  double regret = 0;
  // Repeatability: the rows of layouts that ran more than once (the same cluster, task and
  // layout, in any file), and their mean distance from their layout's median, percent: what
  // measuring again moves by, which no model's per-row error can beat.
  std::size_t repeat_rows = 0;
  double repeat_spread = 0;
  // The model against each distinct layout's median measured step, percent: the per-row
  // error with the measurements' own scatter averaged out.
  std::size_t layouts = 0;
  double layout_mape = 0;
};

/// Statistics of `points` grouped by GPU count, by model width, by both, and over all.
std::vector<StepStats> step_stats(const std::vector<StepPoint>& points);

/// One kind of kernel over the profiled rows of a group: what the model prices against what
/// the profiler counted.
struct KernelStats {
  std::string group;  // as StepStats::group
  std::string kind;   // gemm, attention, memory, loss, optimizer, all
  std::size_t rows = 0;
  double measured_share = 0;  // of the measured step time, percent (mean over the rows)
  double model_share = 0;     // the model's seconds of that kind over the measured step, percent
  double mape = 0;            // model against measured seconds of that kind, percent
  double bias = 0;            // mean signed error, percent (negative: the model is fast)
};

/// The model's kernels as a profile that named them counts them: where it found no loss kernel
/// (Megatron-LM's loss runs as plain elementwise and reduction kernels), the model's loss is
/// counted among the memory-bound kernels.
KernelTime profiled_as(KernelTime model, const KernelTime& profiled);

/// Statistics of each kind of kernel over the rows of `points` that ran and were profiled
/// (StepPoint::estimate_profiled_kernels, profiled_as), grouped by GPU count, by model width
/// and over all.
std::vector<KernelStats> kernel_stats(const std::vector<StepPoint>& points);

/// One data row of a steps CSV as `read_steps_csv` hands it over.
class StepsCsvRow {
 public:
  StepsCsvRow(const std::filesystem::path& path,
              int line,
              const std::string& text,
              const std::map<std::string, std::size_t>& columns,
              std::vector<std::string> cells,
              devices::Diagnostics& diag);

  int line() const { return line_; }

  /// The cell of `column` (one the header was required to have).
  const std::string& at(const char* column) const;

  bool has(const char* column) const { return columns_.count(column) > 0; }

  /// The cell as a positive finite number of at most `max`; absent where the cell is empty,
  /// which is a problem (recorded at the row) where it is `required`.
  std::optional<double> number(const char* column,
                               double max,
                               bool required,
                               bool zero_allowed = false) const;

 private:
  const std::filesystem::path& path_;
  int line_;
  const std::string& text_;
  const std::map<std::string, std::size_t>& columns_;
  std::vector<std::string> cells_;
  devices::Diagnostics& diag_;
};

/// Reads a steps CSV (train_steps or infer_steps): '#' lines are provenance, the header names
/// the columns and must have every one of `required`, each row must have as many cells (a
/// cell may be quoted, "a,b"), a cluster and a task that are plain file names (they name
/// files beside the CSV) and a status of ok, oom or error; `row` is called on each. Every
/// problem is reported as file:line:col (throws devices::InputError).
void read_steps_csv(const std::filesystem::path& path,
                    const std::vector<std::string>& required,
                    const std::function<void(const StepsCsvRow&)>& row);

/// The cluster and task files beside a steps CSV (steps/clusters/NAME.yaml,
/// steps/tasks/NAME.yaml), each loaded once.
class StepFiles {
 public:
  StepFiles(const std::filesystem::path& csv,
            const devices::DeviceRegistry& registry,
            const devices::ModelRegistry& models);
  const devices::ClusterSpec& cluster(const std::string& name);
  const devices::TaskSpec& task(const std::string& name);

 private:
  std::filesystem::path dir_;
  const devices::DeviceRegistry& registry_;
  const devices::ModelRegistry& models_;
  std::map<std::string, devices::ClusterSpec> clusters_;
  std::map<std::string, devices::TaskSpec> tasks_;
};

/// `points` in groups, each in the order first seen: by GPU count ("1 GPU", "2 GPUs"), by
/// model width ("h4096"), with `both` by width and GPU count ("h4096, 2 GPUs"), then "all".
/// A point has `row.gpus` and `width`.
template <class Point>
std::vector<std::pair<std::string, std::vector<const Point*>>> step_groups(
    const std::vector<Point>& points, bool both) {
  std::vector<std::pair<std::string, std::vector<const Point*>>> out;
  auto add = [&](const std::string& g, const Point& p) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.first == g; });
    if (it == out.end())
      it = out.insert(out.end(), {g, {}});
    it->second.push_back(&p);
  };
  auto gpus = [](std::int64_t n) {
    return std::to_string(n) + (n == 1 ? " GPU" : " GPUs");
  };
  for (const Point& p : points)
    add(gpus(p.row.gpus), p);
  for (const Point& p : points)
    add(p.width, p);
  for (const Point& p : points) {
    if (both)
      add(p.width + ", " + gpus(p.row.gpus), p);
  }
  for (const Point& p : points)
    add("all", p);
  return out;
}

/// Whether `path`'s header (after its comment lines) starts with `start`.
bool steps_csv_header_starts(const std::filesystem::path& path, const std::string& start);

// What an earlier job left allocated under a measured step. bench/run_plan.py runs several
// jobs in one process, and a job can leave memory the caching allocator still counts as
// allocated (DDP's buckets, held from C++): every later job's peaks then include it. A memory
// probe (bench/memory_probe.py) runs each layout alone, one rank at a time on one GPU under
// PyTorch's fake process group, and measures what the job itself allocates; where a row's
// allocated peak exceeds that, the excess was there before the job began.

/// (cluster, task, layout) -> the largest allocated peak over the probed ranks, bytes. A
/// layout is left out where a rank of it was probed without its allocated peak.
using ProbePeaks = std::map<std::tuple<std::string, std::string, std::string>, double>;

/// The allocated peaks of a probe table (bench/memory_probe.py's rank_peaks.csv: cluster,
/// task, layout, rank, world, peak_allocated_bytes, peak_reserved_bytes); problems are
/// reported as file:line:col (devices::InputError).
ProbePeaks load_probe_peaks(const std::filesystem::path& path);

/// Takes off both peaks of each row the memory an earlier job left allocated
/// (MeasuredStep::leftover): a row's allocated peak beyond 2% over the probe's for its layout.
/// Not under DDP (dp > 1 with zero 0 or 1), whose second set of gradient buckets, built in the
/// second step, is the job's own and held or not as the host's timing falls. Returns how many
/// rows it changed.
std::size_t subtract_leftover(const ProbePeaks& probe, std::vector<MeasuredStep>& rows);

/// The model's live peak (what decides whether a layout fits) against the allocated peak of
/// each layout a probe measured alone: a memory check no earlier job can disturb.
struct ProbeStats {
  std::size_t layouts = 0;  // distinct (cluster, task, layout) priced and probed
  double mape = 0;          // percent
  double bias = 0;          // mean signed error, percent (negative: the model is low)
  double worst = 0;         // the largest error by magnitude, signed, percent
};

/// Over the layouts of `points` that `probe` holds (each counted once), DDP's left out as in
/// subtract_leftover.
ProbeStats live_against_probe(const ProbePeaks& probe, const std::vector<StepPoint>& points);

/// The probe table beside a steps CSV (memory_probe/rank_peaks.csv), if there is one.
std::filesystem::path probe_beside(const std::filesystem::path& csv);

}  // namespace yirage::planner
