// What an earlier job left allocated under a measured step. bench/run_plan.py runs several
// jobs in one process, and a job can leave memory the caching allocator still counts as
// allocated (DDP's buckets, held from C++): every later job's peaks then include it. A memory
// probe (bench/memory_probe.py) runs each layout alone, one rank at a time on one GPU under
// PyTorch's fake process group, and measures what the job itself allocates; where a row's
// allocated peak exceeds that, the excess was there before the job began.
#pragma once

#include "planner/step_validation.h"

#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace yirage::planner {

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

/// The probe table beside a steps CSV (memory_probe/rank_peaks.csv), if there is one.
std::filesystem::path probe_beside(const std::filesystem::path& csv);

}  // namespace yirage::planner
