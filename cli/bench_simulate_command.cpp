// `yirage-plan bench-simulate [CLUSTER TASK] [--layout L]`: how fast SimGrid replays one
// training step of a plan, and how much memory it takes, next to the target (30 s for the
// best plan on the 1,024-GPU example, on a 2-core machine). The step is the one `simulate`
// replays: the planner's program for the best plan (or the given layout).
#include "cli/context.h"
#include "cli/run.h"
#include "cli/summary.h"
#include "cli/table.h"
#include "costmodel/sim/simulate.h"
#include "planner/search.h"
#include "planner/step_program.h"

#include <CLI/CLI.hpp>

#include <chrono>

namespace yirage::cli {
namespace {

struct BenchSimArgs {
  std::vector<std::string> files = {
      (devices::data_dir() / "clusters" / "h100-128x8.yaml").string(),
      (devices::data_dir() / "tasks" / "llama3-70b-train.yaml").string()};
  std::string layout;
};

int bench(Context& cx, const BenchSimArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  devices::ClusterSpec cluster = cx.load_cluster(a.files[0], registry);
  devices::TaskSpec task = cx.load_task(a.files[1]);
  check_fit(cluster, task);
  std::string why = planner::unsupported_reason(cluster, task);
  if (why.empty() && task.mode != devices::Mode::kTrain)
    why = "bench-simulate times training steps";
  if (!why.empty()) {
    cx.err << "yirage-plan: " << why << "\n";
    return kExitUnavailable;
  }
  costmodel::CalibrationSet calibrations =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  planner::TrainContext tc{cluster, task, calibrations};
  planner::Layout l;
  if (!a.layout.empty()) {
    if (std::string err = planner::parse_layout(a.layout, &l); !err.empty()) {
      cx.err << "error: --layout: " << err << "\n";
      return kExitBadInput;
    }
    auto e = planner::estimate_training(tc, l);
    if (auto* r = std::get_if<planner::Rejected>(&e)) {
      cx.out << "layout " << l.str() << " cannot run: " << r->reason << "\n";
      return kExitCheckFailed;
    }
  } else {
    planner::SearchResult r = planner::search_training(tc);
    if (r.plans.empty()) {
      cx.out << "no plan fits\n";
      return kExitCheckFailed;
    }
    l = r.plans.front().layout;
  }
  auto start = std::chrono::steady_clock::now();
  planner::StepProgramResult p = planner::training_step_program(tc, l);
  double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!p.step) {
    cx.err << "yirage-plan: " << l.str() << ": " << p.why << "\n";
    return kExitUnavailable;
  }
  costmodel::SimResult r = costmodel::simulate(cluster, p.step->program);
  cx.out << task.name << " on " << cluster.name << " (" << cluster.total_devices() << " devices), "
         << (a.layout.empty() ? "the best plan " : "the layout ") << l.str() << ": "
         << p.step->program.tasks.size() << " tasks, "
         << format_count(static_cast<double>(r.transfers)) << " transfers simulated "
         << (r.aggregation.empty() ? "exactly (no aggregation)" : "with aggregation")
         << "; replayed step " << devices::format(r.makespan) << "\n";
  if (!r.aggregation.empty())
    cx.out << "aggregated: " << r.aggregation << "\n";
  Table t({"measure", ">yirage", ">target", ">ratio"});
  t.add_row({"simulation wall time", devices::format(devices::Seconds{r.wall_seconds}), "30 s",
             devices::format_number(r.wall_seconds / 30.0, 3)});
  t.add_row({"program build time", devices::format(devices::Seconds{build_s}), "-", "-"});
  t.add_row({"peak memory (simulating process)",
             devices::format_quantity(r.peak_memory_bytes, devices::Dim::kBytes), "-", "-"});
  t.print(cx.out);
  return kExitOk;
}

}  // namespace

void add_bench_simulate_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "bench-simulate", "Time the SimGrid simulation of a plan's training step (the best plan)");
  auto a = std::make_shared<BenchSimArgs>();
  cmd->add_option("CLUSTER TASK", a->files,
                  "Cluster and task files (default: Llama 3 70B on the 1,024-GPU example)")
      ->expected(2);
  cmd->add_option("--layout", a->layout, "Simulate this training layout instead of the best")
      ->type_name("LAYOUT");
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return bench(cx, *a);
    };
  });
}

}  // namespace yirage::cli
