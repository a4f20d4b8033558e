// `yirage-plan bench-simulate [CLUSTER TASK] [--layout L]`: how fast SimGrid replays the
// step of a plan, and how much memory it takes, next to the target (30 s for the best plan
// on the 1,024-GPU example, on a 2-core machine). The step is the one `simulate` replays:
// the best plan's (or the given layout's). Without files: every bundled task on the
// 1,024-GPU example, one row each.
#include "report/simulate_report.h"
#include "report/summary.h"
#include "report/table.h"

#include "cli/context.h"
#include "cli/layout_arg.h"
#include "cli/run.h"
#include "planner/search.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

constexpr double kTargetSeconds = 30;

struct BenchSimArgs {
  std::vector<std::string> files;
  std::string layout;
};

// The best plan of `task` (or --layout) replayed, or the exit code after printing why not.
std::variant<SimulatedPlan, int> replay_best(Context& cx,
                                             const devices::ClusterSpec& cluster,
                                             const devices::TaskSpec& task,
                                             const costmodel::CalibrationSet& calibrations,
                                             const std::string& layout) {
  if (task.mode == devices::Mode::kTrain) {
    planner::TrainContext tc{cluster, task, calibrations};
    if (!layout.empty()) {
      auto e = estimate_layout_arg(cx, tc, layout);
      if (const int* code = std::get_if<int>(&e))
        return *code;
      return simulate_plan(tc, std::get<planner::PlanEstimate>(e));
    }
    planner::SearchResult r = planner::search_training(tc);
    if (r.plans.empty())
      return kExitNoAnswer;
    return simulate_plan(tc, r.plans.front());
  }
  planner::InferContext ic{cluster, task, calibrations};
  if (!layout.empty()) {
    auto e = estimate_infer_layout_arg(cx, ic, layout);
    if (const int* code = std::get_if<int>(&e))
      return *code;
    return simulate_plan(ic, std::get<planner::InferEstimate>(e));
  }
  planner::InferSearchResult r = planner::search_inference(ic);
  if (r.plans.empty())
    return kExitNoAnswer;
  return simulate_plan(ic, r.plans.front());
}

// A row for machines: what the table shows, null where the replay did not run.
nlohmann::ordered_json row_json(const std::string& task,
                                const std::string& layout,
                                const std::string& why,
                                const SimulatedPlan* s) {
  nlohmann::ordered_json r = {{"task", task}, {"layout", layout}};
  bool ran = s != nullptr && s->step;
  const costmodel::SimResult* res = ran ? &s->result : nullptr;
  r["tasks"] = ran ? nlohmann::ordered_json(s->step->program.tasks.size()) : nullptr;
  r["transfers"] = ran ? nlohmann::ordered_json(res->transfers) : nullptr;
  r["aggregated"] = ran ? nlohmann::ordered_json(!res->aggregation.empty()) : nullptr;
  r["replayed_step_s"] = ran ? nlohmann::ordered_json(res->makespan.value) : nullptr;
  r["simulation_s"] = ran ? nlohmann::ordered_json(res->wall_seconds) : nullptr;
  r["peak_memory_bytes"] = ran ? nlohmann::ordered_json(res->peak_memory_bytes) : nullptr;
  r["of_target"] = ran ? nlohmann::ordered_json(res->wall_seconds / kTargetSeconds) : nullptr;
  r["not_simulated"] = ran ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(why);
  return r;
}

int bench(Context& cx, const BenchSimArgs& a) {
  std::filesystem::path data = devices::data_dir();
  std::string cluster_file =
      a.files.empty() ? (data / "clusters" / "h100-128x8.yaml").string() : a.files[0];
  std::vector<std::string> task_files;
  if (a.files.empty()) {
    for (const auto& e : std::filesystem::directory_iterator(data / "tasks")) {
      if (e.path().extension() == ".yaml")
        task_files.push_back(e.path().string());
    }
    std::sort(task_files.begin(), task_files.end());
  } else {
    task_files.push_back(a.files[1]);
  }
  devices::DeviceRegistry registry = cx.load_registry();
  devices::ClusterSpec cluster = cx.load_cluster(cluster_file, registry);
  if (cluster.groups.size() != 1) {
    cx.err << "yirage-plan: bench-simulate times plans of homogeneous clusters\n";
    return kExitNoAnswer;
  }
  costmodel::CalibrationSet calibrations =
      costmodel::CalibrationSet::load_dir(data / "calibration");
  Table t({"task", "layout", ">tasks", ">transfers", "aggregated", ">replayed step", ">simulation",
           ">peak memory", ">of 30 s"});
  std::vector<std::string> aggregations;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const std::string& file : task_files) {
    devices::TaskSpec task = cx.load_task(file);
    check_fit(cluster, task);
    auto r = replay_best(cx, cluster, task, calibrations, a.layout);
    if (const int* code = std::get_if<int>(&r)) {
      if (!a.files.empty())
        return *code;
      t.add_row({task.name, "no plan fits", "-", "-", "-", "-", "-", "-", "-"});
      rows.push_back(row_json(task.name, "", "no plan fits", nullptr));
      continue;
    }
    const SimulatedPlan& s = std::get<SimulatedPlan>(r);
    if (!s.step) {
      t.add_row({task.name, s.layout, "-", "-", "-", "not simulated: " + s.why, "-", "-", "-"});
      rows.push_back(row_json(task.name, s.layout, s.why, &s));
      continue;
    }
    const costmodel::SimResult& res = s.result;
    rows.push_back(row_json(task.name, s.layout, "", &s));
    if (!res.aggregation.empty())
      aggregations.push_back(task.name + ": " + res.aggregation);
    t.add_row({task.name, s.layout, format_count(static_cast<double>(s.step->program.tasks.size())),
               format_count(static_cast<double>(res.transfers)),
               res.aggregation.empty() ? "no" : "yes", secs(res.makespan.value),
               secs(res.wall_seconds),
               // (resident memory is whole pages: always decimal units, never "297.375 MiB")
               devices::format_number(res.peak_memory_bytes / 1e6, 4) + " MB",
               devices::format_number(res.wall_seconds / kTargetSeconds, 3)});
  }
  if (cx.structured()) {
    nlohmann::ordered_json j;
    j["cluster"] = cluster.name;
    j["devices"] = cluster.total_devices();
    j["target_s"] = kTargetSeconds;
    j["rows"] = rows;
    j["aggregations"] = aggregations;
    return write_document(cx, "bench_simulate", j);
  }
  cx.out << "SimGrid replay of the best plan's step on " << cluster.name << " ("
         << cluster.total_devices() << " devices); simulation: the simulator's wall time, "
         << "peak memory: the simulating process's\n";
  t.print(cx.out);
  for (const std::string& n : aggregations)
    cx.out << "aggregated, " << n << "\n";
  return kExitOk;
}

}  // namespace

void add_bench_simulate_command(CLI::App& app, Context& cx) {
  CLI::App* cmd =
      app.add_subcommand("bench-simulate",
                         "Time the SimGrid simulation of the best plans' step (every bundled task "
                         "on the 1,024-GPU example by default)");
  auto a = std::make_shared<BenchSimArgs>();
  cmd->add_option("CLUSTER TASK", a->files,
                  "Cluster and task files (default: every bundled task "
                  "on the 1,024-GPU example)")
      ->expected(2);
  cmd->add_option("--layout", a->layout, "Simulate this layout instead of the best")
      ->type_name("LAYOUT");
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return bench(cx, *a);
    };
  });
}

}  // namespace yirage::cli
