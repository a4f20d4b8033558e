// The node-count sweep behind the Pareto tab: for each node type of a cluster (each node
// group alone) and each node count, the best plan of the task, as `yirage-plan sweep` finds
// it (one search per scenario), and which answers are on the front of throughput against
// cost. No Qt here: the window runs sweep_nodes() on a worker thread, tests call it directly.
#pragma once

#include "report/sweep.h"

#include "costmodel/calibration.h"
#include "devices/cluster_spec.h"
#include "devices/task_spec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yirage::gui {

using SweepCost = report::SweepCost;

/// One node type at one node count, and its best plan (report/sweep.h, as `yirage-plan
/// sweep` finds it), with the node type's device and the devices at that count.
struct SweepPoint : report::SweepScenario {
  std::string device;
  std::int64_t devices = 0;
};

struct SweepResult {
  std::vector<SweepPoint> points;  // by node type (device, group name), then node count
  SweepCost cost = SweepCost::kPerMillionTokens;
  std::string note;  // why the sweep is smaller than asked, or empty
};

/// The node counts from `lo` to `hi` as the CLI's `--nodes LO:HI` lists them: LO, 2 LO,
/// 4 LO, ... and HI.
std::vector<std::int64_t> node_counts(std::int64_t lo, std::int64_t hi);

/// Sweeps `counts` for every node type of `cluster` (its groups, each alone). A cluster
/// without a network keeps its own count: more nodes have nothing to join them.
SweepResult sweep_nodes(const devices::ClusterSpec& cluster,
                        const devices::TaskSpec& task,
                        const costmodel::CalibrationSet& calibrations,
                        std::vector<std::int64_t> counts,
                        SweepCost cost);

/// The cost a point is placed at on the chosen axis, when it has one.
std::optional<double> cost_of(const SweepPoint& p, SweepCost cost);

}  // namespace yirage::gui
