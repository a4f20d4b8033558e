// GEMMs interleaved with other work at set duty cycles (bench/duty.py's duty.csv): a GPU at
// its power limit gives its GEMMs a higher clock the less of its busy time they take. The
// fit is the GEMM time at a duty over the time back to back (GpuEfficiency::duty_slope and
// duty_floor).
#pragma once

#include "costmodel/gpu_calibration.h"
#include "devices/registry.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace yirage::costmodel {

/// Whether `path`'s header (after its comment lines) is bench/duty.py's.
bool is_duty_file(const std::filesystem::path& path);

/// One pattern of a duty file: a GEMM and its fillers repeated for seconds.
struct DutyRow {
  std::string device;  // as the file names it
  std::string gemm;    // "MxNxK", "attention:BxHxSxD", or "none" for a filler timed alone
  std::string filler;  // copy, rmsnorm (memory-bound kernels) or idle (the host waits)
  double duty = 0;     // the GEMM's share of the wall time, from CUDA events
  double gemm_s = 0;   // the GEMM's median time in the pattern (0 for "none")
};

/// The rows of a duty file; problems are reported as file:line:col (devices::InputError).
std::vector<DutyRow> load_duty(const std::filesystem::path& path);

/// Fits duty_slope and duty_floor for each device of `registry` that `files` have rows of.
/// Per GEMM shape the reference is its row at duty 1 (back to back); the rows with
/// memory-bound fillers alternate in file order, the even ones fitted (slope and floor
/// minimising the squared relative error of the GEMM time), the odd ones held out (against
/// the time back to back as it is). Rows of fused attention (`attention:BxHxSxD`) and rows
/// with idle gaps are not fitted: a GPU idling between
/// GEMMs gave them less of its clock headroom (see docs/step-model.md), so the model credits
/// idle time nothing.
std::map<std::string, DutyFit> fit_duty(const std::vector<std::filesystem::path>& files,
                                        const devices::DeviceRegistry& registry);

}  // namespace yirage::costmodel
