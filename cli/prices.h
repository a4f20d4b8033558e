// `--price-per-hour`, shared by the main form and `check`: one price per device-hour for
// every node group, and the refusal of `minimize: cost` and `max_cost_per_hour` on a cluster
// with an unpriced group.
#pragma once

#include "devices/cluster_spec.h"
#include "devices/task_spec.h"

#include <CLI/CLI.hpp>

#include <string>

namespace yirage::cli {

/// Adds `--price-per-hour USD` to `app`, stored in `*price` (0: not given).
void add_price_option(CLI::App& app, double* price);

/// Sets every node group's price to `price_per_hour` when it is above 0. Returns the message
/// (file:line:col of the task's key, the groups without a price, what to add) when the task
/// asks for cost and a group has no price, else empty.
std::string apply_prices(double price_per_hour,
                         devices::ClusterSpec& cluster,
                         const devices::TaskSpec& task);

}  // namespace yirage::cli
