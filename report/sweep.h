// A sweep's scenarios (a node type at a node count and a global batch) and the best plan of
// each, as `yirage-plan sweep` prints them and the GUI's Pareto tab draws them: one search
// per scenario, and the front of throughput against cost over the priced answers.
#pragma once

#include "costmodel/calibration.h"
#include "devices/cluster_spec.h"
#include "devices/task_spec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yirage::report {

struct SweepScenario {
  std::size_t type = 0;  // index into the caller's node types
  std::int64_t nodes = 0;
  std::int64_t batch = 0;  // 0: the task's
  // The answer.
  bool runs = false;
  std::string why;  // when it does not
  std::string layout;
  double time_s = 0;  // training: the step; inference: TPOT, else TTFT
  double tokens_per_s = 0;
  std::optional<double> mfu;
  std::optional<double> usd_per_hour;  // the cluster's, where every device has a price
  std::optional<double> usd_per_mtok;  // USD per million tokens at that throughput
  std::optional<double> days;          // the whole run of the task's training tokens
  std::optional<double> run_usd;
  bool front = false;
};

/// The node counts LO, 2 LO, 4 LO, ... below HI, then HI (LO at least 1).
std::vector<std::int64_t> doubling_counts(std::int64_t lo, std::int64_t hi);

/// Searches the best plan of `type` (a cluster of one node group) at `s.nodes` nodes with
/// `s.batch` (0: the task's batch) and fills in the answer.
void evaluate_scenario(SweepScenario& s,
                       const devices::ClusterSpec& type,
                       const devices::TaskSpec& task,
                       const costmodel::CalibrationSet& calibrations);

enum class SweepCost { kPerMillionTokens, kPerHour };

/// A scenario's place on the cost axis: none where it has no answer or no price.
std::optional<double> sweep_cost(const SweepScenario& s, SweepCost cost);

/// Marks `front` on the answers no other one beats on both tokens/s and `cost`.
void mark_front(std::vector<SweepScenario>& all, SweepCost cost);

}  // namespace yirage::report
