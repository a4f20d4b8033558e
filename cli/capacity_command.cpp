// `yirage-plan capacity CLUSTER TASK --target ...`: the smallest cluster of the template's
// node type that meets a target: training or serving throughput, the task's own latency
// objective (TTFT / TPOT), or a whole training run within a number of days. Searches node
// counts (doubling, then bisecting) with the same planner as the main form. Bisection
// assumes throughput grows with the cluster; where the batch must divide evenly it may not,
// and a smaller cluster between the last miss and the answer can exist.
#include "cli/context.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "cli/summary.h"
#include "planner/infer_estimate.h"
#include "planner/search.h"

#include <CLI/CLI.hpp>

#include <cmath>

namespace yirage::cli {
namespace {

struct CapacityArgs {
  std::vector<std::string> files;
  std::string tokens_per_s;  // "1e6" tokens per second
  double days = 0;           // a training run within this many days
  bool slo = false;          // the task's own objective (TTFT, TPOT, min throughput)
  std::int64_t max_nodes = 4096;
};

struct Outcome {
  bool feasible = false;
  bool meets = false;
  double tokens_per_s = 0;
  std::string layout;
};

Outcome evaluate(const devices::ClusterSpec& c,
                 const devices::TaskSpec& t,
                 const costmodel::CalibrationSet& cal,
                 const CapacityArgs& a,
                 double want) {
  Outcome o;
  if (t.mode == devices::Mode::kTrain) {
    planner::TrainContext tc{c, t, cal};
    planner::SearchResult r = planner::search_training(tc);
    if (r.plans.empty())
      return o;
    o.feasible = true;
    o.tokens_per_s = r.plans.front().tokens_per_s;
    o.layout = r.plans.front().layout.str();
    o.meets = o.tokens_per_s >= want;
    return o;
  }
  planner::InferContext ic{c, t, cal};
  planner::InferSearchResult r = planner::search_inference(ic);
  if (r.plans.empty())
    return o;
  o.feasible = true;
  o.tokens_per_s = r.plans.front().tokens_per_s;
  o.layout = r.plans.front().layout.str();
  o.meets = (!a.slo || r.plans.front().meets_objective) && o.tokens_per_s >= want;
  return o;
}

devices::ClusterSpec with_nodes(devices::ClusterSpec c, std::int64_t nodes) {
  c.groups.front().nodes = nodes;
  return c;
}

int capacity(Context& cx, const CapacityArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  devices::ClusterSpec tpl = cx.load_cluster(a.files[0], registry);
  devices::TaskSpec task = cx.load_task(a.files[1]);
  if (tpl.groups.size() != 1) {
    cx.err << "yirage-plan: capacity search over templates of several node groups is not "
              "available yet in this version\n";
    return kExitUnavailable;
  }
  double want = 0;
  if (!a.tokens_per_s.empty()) {
    devices::ParsedQuantity q = devices::parse_quantity(a.tokens_per_s + " tok/s");
    if (!q.error.empty()) {
      cx.err << "error: --tokens-per-s: " << q.error << "\n";
      return kExitBadInput;
    }
    want = q.value;
  }
  if (a.days > 0) {
    if (task.mode != devices::Mode::kTrain || !task.training_tokens) {
      cx.err << "error: --days needs a training task with training_tokens\n";
      return kExitBadInput;
    }
    want = std::max(want, *task.training_tokens / (a.days * 86400));
  }
  if (want <= 0 && !a.slo) {
    cx.err << "error: give a target: --tokens-per-s N, --days N (training) or --slo\n";
    return kExitBadInput;
  }
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  if (tpl.total_nodes() > 1 && !tpl.network) {
    cx.err << "error: the template needs a network to grow beyond one node\n";
    return kExitBadInput;
  }
  Progress progress(cx.err, "capacity", cx.err_is_terminal);
  // Double until the target is met, then bisect between the last miss and the first hit.
  std::int64_t lo = 0;
  std::int64_t hi = 1;
  Outcome hit;
  Outcome best;
  while (true) {
    if (hi > a.max_nodes) {
      cx.out << "no cluster of up to " << a.max_nodes << " nodes of " << tpl.groups.front().device
             << " meets the target";
      if (best.feasible) {
        cx.out << "; the best reached " << format_count(best.tokens_per_s) << " tokens/s ("
               << best.layout << ")";
        if (task.mode == devices::Mode::kTrain) {
          cx.out << ": the global batch of " << task.global_batch
                 << " sequences caps data parallelism";
        }
      }
      cx.out << "\n";
      return kExitCheckFailed;
    }
    if (hi > 1 && !tpl.network) {
      cx.out << "one node does not meet the target, and the template has no network to grow\n";
      return kExitCheckFailed;
    }
    hit = evaluate(with_nodes(tpl, hi), task, cal, a, want);
    progress.step(std::to_string(hi) + " nodes: " + format_count(hit.tokens_per_s) + " tokens/s");
    if (hit.meets)
      break;
    if (hit.feasible && hit.tokens_per_s > best.tokens_per_s)
      best = hit;
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    std::int64_t mid = (lo + hi) / 2;
    Outcome o = evaluate(with_nodes(tpl, mid), task, cal, a, want);
    progress.step(std::to_string(mid) + " nodes: " + format_count(o.tokens_per_s) + " tokens/s");
    if (o.meets) {
      hi = mid;
      hit = o;
    } else {
      lo = mid;
    }
  }
  const devices::NodeGroup& g = tpl.groups.front();
  cx.out << "smallest cluster meeting the target: " << hi << (hi == 1 ? " node" : " nodes")
         << " of " << g.devices_per_node << " x " << g.device << " (" << hi * g.devices_per_node
         << " devices)\n";
  cx.out << "  best plan there: " << hit.layout << ", " << format_count(hit.tokens_per_s)
         << " tokens/s";
  if (want > 0)
    cx.out << " (target " << format_count(want) << ")";
  cx.out << "\n";
  if (a.days > 0) {
    cx.out << "  training run: "
           << devices::format_number(*task.training_tokens / hit.tokens_per_s / 86400, 3)
           << " days\n";
  }
  return kExitOk;
}

}  // namespace

void add_capacity_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "capacity", "The smallest cluster of a template's node type that meets a target");
  auto a = std::make_shared<CapacityArgs>();
  cmd->add_option("CLUSTER TASK", a->files, "Cluster template and task files")
      ->expected(2)
      ->required();
  cmd->add_option("--tokens-per-s", a->tokens_per_s, "Throughput target, e.g. 1e6");
  cmd->add_option("--days", a->days, "Finish the task's training_tokens within this many days");
  cmd->add_flag("--slo", a->slo, "Meet the task's own objective (TTFT, TPOT, min_throughput)");
  cmd->add_option("--max-nodes", a->max_nodes, "Largest cluster to consider")
      ->capture_default_str();
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return capacity(cx, *a);
    };
  });
}

}  // namespace yirage::cli
