// Fidelity of the training-step model against measured runs: every measured layout of a
// model estimated with `estimate_training`, the mean absolute percentage error and the
// Spearman rank correlation of estimated against measured step times within each model,
// and optionally a fit of the device's GPU efficiencies on a calibration split.
#pragma once

#include "costmodel/calibration.h"
#include "devices/registry.h"
#include "planner/plan.h"

#include <filesystem>
#include <string>
#include <vector>

namespace yirage::planner {

/// One measured iteration of a GPT model (the vTrain ground-truth format, with the header
/// gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,time_ms).
struct TrainingRun {
  std::int64_t gpus = 0, global_batch = 0, micro_batch = 0, hidden = 0, heads = 0, layers = 0,
               seq = 0, tp = 0, dp = 0, pp = 0;
  double time_s = 0;
  int line = 0;
  std::string model() const;  // "gpt h2048 L24"
};

/// Reads a measured-runs file; problems are reported as file:line:col (devices::InputError).
std::vector<TrainingRun> load_training_runs(const std::filesystem::path& path);

struct FidelityStats {
  std::string model;
  std::size_t rows = 0;
  double mape = 0;      // percent
  double spearman = 0;  // estimated vs measured, within the model
};

struct FidelityResult {
  std::vector<FidelityStats> by_model;  // held-out rows only
  FidelityStats overall;
  std::size_t rejected = 0;             // layouts the model refused (memory, shape)
  costmodel::GpuEfficiency efficiency;  // what was used (fitted with `fit`)
  bool fitted = false;
  /// Every evaluated row: the run and its estimate in seconds (held-out rows with `fit`).
  std::vector<std::pair<TrainingRun, double>> points;
};

/// Which rows a fidelity check fits on and reports on. Rows alternate by their order in
/// the file: the even ones (0, 2, ...) are the fit split.
enum class FidelityRows {
  kAll,      // the device's calibration as given; statistics on every row
  kHeldOut,  // the same, statistics on the odd rows (the calibration was fitted on the even)
  kFit,      // fit the GPU efficiencies on the even rows first; statistics on the odd rows
};

/// Runs every measured layout on one node of `device` (NVSwitch). With FidelityRows::kFit
/// the GPU efficiencies and the host's issue time are fitted on the even rows (coordinate
/// descent, as in `yirage-plan calibrate`); otherwise the device's calibration from
/// `calibrations` prices them.
/// `fixed_matrix` > 0: with FidelityRows::kFit, the matrix efficiency is that value (fitted
/// elsewhere: fit_matrix_on_steps) and the rest is fitted around it.
FidelityResult training_fidelity(const std::vector<TrainingRun>& runs,
                                 const std::string& device,
                                 const devices::DeviceRegistry& registry,
                                 const costmodel::CalibrationSet& calibrations,
                                 FidelityRows rows,
                                 double fixed_matrix = 0);

/// Spearman's rank correlation of two equal-length series (average ranks for ties).
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace yirage::planner
