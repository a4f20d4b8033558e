#include "gui/sweep.h"

#include "planner/infer_estimate.h"
#include "planner/search.h"

#include <algorithm>
#include <tuple>

namespace yirage::gui {
namespace {

// The best plan of one node type at one count (cli/sweep_command.cpp's evaluate).
SweepPoint plan_one(devices::ClusterSpec c,
                    const devices::TaskSpec& task,
                    const costmodel::CalibrationSet& calibrations,
                    std::int64_t nodes) {
  devices::NodeGroup& g = c.groups.front();
  g.nodes = nodes;
  SweepPoint s{g.device, nodes, g.devices(), {}, {}, 0, c.usd_per_hour(), std::nullopt, false};
  if (task.mode == devices::Mode::kTrain) {
    planner::SearchResult r =
        planner::search_training(planner::TrainContext{c, task, calibrations});
    if (r.plans.empty()) {
      s.why = "no layout of " + std::to_string(r.candidates) + " fits";
      return s;
    }
    s.layout = r.plans.front().layout.str();
    s.tokens_per_s = r.plans.front().tokens_per_s;
  } else {
    planner::InferSearchResult r =
        planner::search_inference(planner::InferContext{c, task, calibrations});
    if (r.plans.empty()) {
      s.why = "no layout of " + std::to_string(r.candidates) + " can run";
      return s;
    }
    s.layout = r.plans.front().layout.str();
    s.tokens_per_s = r.plans.front().tokens_per_s;
  }
  // USD per hour over tokens per hour, per million tokens: the CLI sweep's figure.
  if (s.usd_per_hour && s.tokens_per_s > 0)
    s.usd_per_mtok = *s.usd_per_hour / (s.tokens_per_s * 3600) * 1e6;
  return s;
}

}  // namespace

std::vector<std::int64_t> node_counts(std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> out;
  lo = std::max<std::int64_t>(lo, 1);
  for (std::int64_t n = lo; n < hi; n *= 2)
    out.push_back(n);
  out.push_back(std::max(lo, hi));
  return out;
}

std::optional<double> cost_of(const SweepPoint& p, SweepCost cost) {
  if (p.layout.empty() || p.tokens_per_s <= 0)
    return std::nullopt;
  return cost == SweepCost::kPerHour ? p.usd_per_hour : p.usd_per_mtok;
}

SweepResult sweep_nodes(const devices::ClusterSpec& cluster,
                        const devices::TaskSpec& task,
                        const costmodel::CalibrationSet& calibrations,
                        std::vector<std::int64_t> counts,
                        SweepCost cost) {
  SweepResult r;
  r.cost = cost;
  if (!cluster.network) {
    counts = {cluster.groups.front().nodes};
    r.note = "the cluster has no network to join more nodes: its own count only";
  }
  std::vector<const devices::NodeGroup*> groups;
  for (const devices::NodeGroup& g : cluster.groups)
    groups.push_back(&g);
  std::sort(groups.begin(), groups.end(), [](const auto* x, const auto* y) {
    return std::tie(x->device, x->name) < std::tie(y->device, y->name);
  });
  for (const devices::NodeGroup* g : groups) {
    devices::ClusterSpec one = cluster;
    one.groups = {*g};
    one.device_types = {cluster.device(*g)};
    for (std::int64_t n : counts)
      r.points.push_back(plan_one(one, task, calibrations, n));
  }
  // The front over the answers with a cost (report/pareto.h, as `sweep --svg` draws it).
  std::vector<report::ParetoPoint> priced;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    if (std::optional<double> c = cost_of(r.points[i], cost)) {
      priced.push_back({*c, r.points[i].tokens_per_s, r.points[i].device, r.points[i].layout});
      index.push_back(i);
    }
  }
  for (std::size_t i : report::pareto_front(priced))
    r.points[index[i]].front = true;
  return r;
}

}  // namespace yirage::gui
