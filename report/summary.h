// Human summaries of a cluster and a task, and the checks that need both files: the
// task's precision must run somewhere, and its model state must fit in the cluster.
#pragma once

#include "devices/cluster_spec.h"
#include "devices/task_spec.h"

#include <optional>
#include <ostream>

namespace yirage::report {

/// A cluster's sums over its devices: peak dense bf16 FLOP/s, memory and its bandwidth, TDP
/// (none when a device type has no published TDP) and USD per hour (none without prices).
struct ClusterTotals {
  double bf16 = 0;
  double memory = 0;
  double bandwidth = 0;
  std::optional<double> power;
  std::optional<double> price;
};

ClusterTotals cluster_totals(const devices::ClusterSpec& c);

void print_cluster(std::ostream& out, const devices::ClusterSpec& c);
void print_task(std::ostream& out, const devices::TaskSpec& t, const devices::ClusterSpec& c);

/// Throws `NoAnswerError` (pointing into the task file) when no device of the cluster supports
/// the task's precision, or when the model's memory floor exceeds the cluster's memory.
void check_fit(const devices::ClusterSpec& c, const devices::TaskSpec& t);

/// "80 layers, hidden 8192, 64 heads (8 KV, head dim 128), FFN 28672 gated, vocab 128256"
std::string architecture_text(const devices::ModelSpec& m);

/// "8.03 billion", "12.3 million", "512"
std::string format_count(double n);

/// "3.365 s", "704.7 us": seconds as the reports print them.
std::string secs(double s);
/// "49.8 GB": bytes as the reports print them.
std::string bytes(double b);
/// "59.2%": a fraction as a percentage to three figures.
std::string pct(double v);

}  // namespace yirage::report
