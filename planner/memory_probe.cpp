#include "planner/memory_probe.h"

#include "planner/plan.h"

#include <algorithm>
#include <set>

namespace yirage::planner {

ProbePeaks load_probe_peaks(const std::filesystem::path& path) {
  ProbePeaks peaks;
  std::set<std::tuple<std::string, std::string, std::string>> unknown;
  read_steps_csv(path,
                 {"cluster", "task", "layout", "rank", "world", "status", "peak_allocated_bytes"},
                 [&](const StepsCsvRow& c) {
                   auto key = std::make_tuple(c.at("cluster"), c.at("task"), c.at("layout"));
                   std::optional<double> a = c.number("peak_allocated_bytes", 1e15, false);
                   if (!a || *a <= 0) {
                     unknown.insert(key);
                     return;
                   }
                   double& peak = peaks[key];
                   peak = std::max(peak, *a);
                 });
  for (const auto& key : unknown)
    peaks.erase(key);
  return peaks;
}

std::size_t subtract_leftover(const ProbePeaks& probe, std::vector<MeasuredStep>& rows) {
  std::size_t changed = 0;
  for (MeasuredStep& r : rows) {
    if (r.status != "ok" || r.peak_allocated <= 0 || r.leftover > 0)
      continue;
    auto it = probe.find({r.cluster, r.task, r.layout});
    Layout l;
    if (it == probe.end() || !parse_layout(r.layout, &l).empty() || (l.dp > 1 && l.zero <= 1))
      continue;
    double excess = r.peak_allocated - it->second;
    if (excess <= 0.02 * it->second)
      continue;
    r.leftover = excess;
    r.peak_allocated -= excess;
    if (r.peak_reserved > 0)
      r.peak_reserved = std::max(r.peak_allocated, r.peak_reserved - excess);
    ++changed;
  }
  return changed;
}

std::filesystem::path probe_beside(const std::filesystem::path& csv) {
  return csv.parent_path() / "memory_probe" / "rank_peaks.csv";
}

}  // namespace yirage::planner
