#include "gui/sweep.h"

namespace yirage::gui {

std::vector<std::int64_t> node_counts(std::int64_t lo, std::int64_t hi) {
  return report::doubling_counts(lo, hi);
}

std::optional<double> cost_of(const SweepPoint& p, SweepCost cost) {
  return report::sweep_cost(p, cost);
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
  std::vector<devices::ClusterSpec> types;
  for (const devices::NodeGroup* g : devices::groups_by_device(cluster))
    types.push_back(devices::with_group_alone(cluster, *g));
  std::vector<report::SweepScenario> all;
  for (std::size_t k = 0; k < types.size(); ++k) {
    for (std::int64_t n : counts) {
      report::SweepScenario s;
      s.type = k;
      s.nodes = n;
      report::evaluate_scenario(s, types[k], task, calibrations);
      all.push_back(std::move(s));
    }
  }
  report::mark_front(all, cost);
  for (const report::SweepScenario& s : all) {
    const devices::NodeGroup& g = types[s.type].groups.front();
    SweepPoint p;
    static_cast<report::SweepScenario&>(p) = s;
    p.device = g.device;
    p.devices = s.nodes * g.devices_per_node;
    r.points.push_back(std::move(p));
  }
  return r;
}

}  // namespace yirage::gui
