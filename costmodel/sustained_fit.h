// GEMMs as a training step runs them (bench/sustained.py's sustained.csv): back to back for
// seconds, a GPU at its power limit holds a lower clock than in the short bursts the op rows
// are timed in. The fit is the step's matrix rate over the op model's
// (GpuEfficiency::sustained_matrix).
#pragma once

#include "costmodel/gpu_calibration.h"
#include "devices/registry.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace yirage::costmodel {

/// Whether `path`'s header (after its comment lines) is bench/sustained.py's.
bool is_sustained_file(const std::filesystem::path& path);

/// One GEMM timed in bursts and back to back.
struct SustainedRow {
  std::string device;  // as the file names it
  std::int64_t m = 0, n = 0, k = 0;
  std::string layout;      // nn, tn, nt (16-bit products); fp8_rowwise
  double burst_s = 0;      // triton's do_bench median, L2 flushed
  double sustained_s = 0;  // back to back, after the clock settled
};

/// The rows of a sustained file; problems are reported as file:line:col
/// (devices::InputError).
std::vector<SustainedRow> load_sustained(const std::filesystem::path& path);

/// Fits sustained_matrix for each device of `efficiencies` (the op-level fit, by registry
/// name) that `files` have rows of: rows alternate in file order, the even ones fitted (the
/// factor s minimising the squared relative error of the op model's time over s against the
/// sustained time), the odd ones held out (against the op model's time as it is).
/// Only the 16-bit rows (layouts nn, tn, nt) are fitted.
std::map<std::string, SustainedFit> fit_sustained(
    const std::vector<std::filesystem::path>& files,
    const devices::DeviceRegistry& registry,
    const std::map<std::string, GpuEfficiency>& efficiencies);

}  // namespace yirage::costmodel
