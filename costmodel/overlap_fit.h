// Collectives launched beside compute (bench/overlap.py's overlap*.csv): a GEMM kernel holds
// every SM until it ends, so a collective launched beside it starts when it ends on every rank,
// r / (r + 1) of the kernel's duration later on average over r ranks. The fit is the measured
// delay over that figure (GpuEfficiency::overlap_wait).
#pragma once

#include "costmodel/gpu_calibration.h"
#include "devices/registry.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace yirage::costmodel {

/// Whether `path`'s header (after its comment lines) is bench/overlap.py's.
bool is_overlap_file(const std::filesystem::path& path);

/// One collective timed alone and beside a loop of GEMMs.
struct OverlapRow {
  std::string device;  // as the file names it
  std::int64_t ranks = 0;
  std::string collective;
  double bytes = 0;
  double gemm_s = 0;              // one GEMM kernel, alone
  double collective_alone_s = 0;  // one collective, alone
  double collective_beside_s = 0;
};

/// The GEMM rows of an overlap file; problems are reported as file:line:col
/// (devices::InputError).
std::vector<OverlapRow> load_overlap(const std::filesystem::path& path);

/// The delay the mechanism predicts for `r`, with `wait` the fitted fraction.
double overlap_delay(double wait, std::int64_t ranks, double kernel_s);

/// Fits overlap_wait for each registry device of `files`' rows: rows alternate in file order,
/// the even ones fitted (the median of their measured delay over the mechanism's), the odd
/// ones held out (the collective beside GEMMs, against the same collective priced alone).
std::map<std::string, OverlapFit> fit_overlap(const std::vector<std::filesystem::path>& files,
                                              const devices::DeviceRegistry& registry);

}  // namespace yirage::costmodel
