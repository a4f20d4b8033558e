#include "report/sweep.h"

#include "report/pareto.h"

#include "planner/infer_estimate.h"
#include "planner/search.h"

#include <algorithm>

namespace yirage::report {

std::vector<std::int64_t> doubling_counts(std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> out;
  lo = std::max<std::int64_t>(lo, 1);
  for (std::int64_t n = lo; n < hi; n *= 2)
    out.push_back(n);
  out.push_back(std::max(lo, hi));
  return out;
}

void evaluate_scenario(SweepScenario& s,
                       const devices::ClusterSpec& type,
                       const devices::TaskSpec& task,
                       const costmodel::CalibrationSet& calibrations) {
  devices::ClusterSpec c = type;
  c.groups.front().nodes = s.nodes;
  devices::TaskSpec t = task;
  if (s.batch > 0)
    t.global_batch = s.batch;
  s.usd_per_hour = c.usd_per_hour();
  if (t.mode == devices::Mode::kTrain) {
    planner::SearchResult r = planner::search_training(planner::TrainContext{c, t, calibrations});
    if (r.plans.empty()) {
      s.why = "no layout of " + std::to_string(r.candidates) + " fits";
      return;
    }
    const planner::PlanEstimate& p = r.plans.front();
    s.runs = true;
    s.layout = p.layout.str();
    s.time_s = p.step.total;
    s.tokens_per_s = p.tokens_per_s;
    s.mfu = p.mfu;
    if (t.training_tokens && p.tokens_per_s > 0) {
      s.days = *t.training_tokens / p.tokens_per_s / 86400;
      if (s.usd_per_hour)
        s.run_usd = *s.days * 24 * *s.usd_per_hour;
    }
  } else {
    planner::InferSearchResult r =
        planner::search_inference(planner::InferContext{c, t, calibrations});
    if (r.plans.empty()) {
      s.why = "no layout of " + std::to_string(r.candidates) + " can run";
      return;
    }
    const planner::InferEstimate& p = r.plans.front();
    s.runs = true;
    s.layout = p.layout.str();
    s.time_s = p.tpot > 0 ? p.tpot : p.ttft;
    s.tokens_per_s = p.tokens_per_s;
  }
  if (s.usd_per_hour && s.tokens_per_s > 0)
    s.usd_per_mtok = *s.usd_per_hour / (s.tokens_per_s * 3600) * 1e6;
}

std::optional<double> sweep_cost(const SweepScenario& s, SweepCost cost) {
  if (!s.runs || s.tokens_per_s <= 0)
    return std::nullopt;
  return cost == SweepCost::kPerHour ? s.usd_per_hour : s.usd_per_mtok;
}

void mark_front(std::vector<SweepScenario>& all, SweepCost cost) {
  std::vector<ParetoPoint> points;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < all.size(); ++i) {
    all[i].front = false;
    if (std::optional<double> c = sweep_cost(all[i], cost)) {
      points.push_back({*c, all[i].tokens_per_s, "", ""});
      index.push_back(i);
    }
  }
  for (std::size_t i : pareto_front(points))
    all[index[i]].front = true;
}

}  // namespace yirage::report
