// The `check` subcommand's summaries of a cluster and a task for machines: the same figures
// report/summary.h prints, as JSON (docs/json.md, kind "check").
#pragma once

#include "devices/cluster_spec.h"
#include "devices/task_spec.h"

#include <nlohmann/json.hpp>

namespace yirage::report {

/// The cluster's node groups (`node_groups`), its network (null for one node) and its totals
/// (`totals`: devices, nodes, peak bf16, memory, bandwidth, TDP and price, null where unknown).
nlohmann::ordered_json cluster_json(const devices::ClusterSpec& c);

/// The task's model, parameters, workload and memory floor against the cluster's memory.
nlohmann::ordered_json task_json(const devices::TaskSpec& t, const devices::ClusterSpec& c);

}  // namespace yirage::report
