// `yirage-plan simulate CLUSTER TASK [--top K] [--layout L] [--trace FILE]`: the best plans
// (or one layout) replayed step by step in the SimGrid simulator, next to the analytical
// estimate, with the links that saturated and a Chrome trace of the first plan's step.
#include "cli/atomic_write.h"
#include "cli/context.h"
#include "cli/hetero_report.h"
#include "cli/layout_arg.h"
#include "cli/run.h"
#include "cli/simulate_report.h"
#include "cli/structured_output.h"
#include "cli/summary.h"
#include "costmodel/sim/chrome_trace.h"
#include "planner/hetero.h"
#include "planner/node_groups.h"
#include "planner/search.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <sstream>

namespace yirage::cli {
namespace {

struct SimulateArgs {
  std::vector<std::string> files;
  std::size_t top = 3;
  std::string layout;
  std::string trace;
};

// A mixed cluster: its best training plan, one pipeline across the node groups or data
// parallelism across them, replayed whole.
int simulate_mixed(Context& cx,
                   const devices::ClusterSpec& cluster,
                   const devices::TaskSpec& task,
                   const costmodel::CalibrationSet& calibrations) {
  planner::HeteroResult r = planner::search_hetero_training(cluster, task, calibrations);
  if (!r.plan && !r.pipeline) {
    cx.out << "no plan for " << task.name << " on " << cluster.name << ": " << r.why << "\n";
    return kExitCheckFailed;
  }
  bool pipeline = pipeline_is_best(r);
  planner::StepProgramResult p =
      pipeline ? planner::hetero_pipeline_program(cluster, task, calibrations, *r.pipeline)
               : planner::hetero_data_parallel_program(cluster, task, calibrations, *r.plan);
  if (!p.step) {
    cx.err << "yirage-plan: " << p.why << "\n";
    return kExitUnavailable;
  }
  costmodel::SimResult s = costmodel::simulate(cluster, p.step->program);
  double optimizer = 0;
  double estimate = 0;
  if (pipeline) {
    optimizer = r.pipeline->step.optimizer;
    estimate = r.pipeline->step.total;
  } else {
    for (const planner::GroupShare& g : r.plan->groups)
      optimizer = std::max(optimizer, g.plan.step.optimizer);
    estimate = r.plan->step;
  }
  double simulated = s.makespan.value + optimizer;
  cx.out << task.name << " on " << cluster.name << " (" << cluster.total_devices() << " devices in "
         << cluster.groups.size() << " node groups): the best plan, "
         << (pipeline ? "one pipeline across the groups (" + r.pipeline->str() + ")"
                      : std::string("data parallelism across the groups"))
         << ", replayed in SimGrid\n";
  cx.out << "  estimate " << devices::format(devices::Seconds{estimate}) << ", simulated "
         << devices::format(devices::Seconds{simulated}) << " (replayed "
         << devices::format(s.makespan) << " + the optimizer), " << p.step->program.tasks.size()
         << " tasks, " << s.transfers << " transfers\n";
  bool any = false;
  for (const costmodel::SimLinkUsage& l : s.most_contended) {
    if (l.contended.value > 0 && !any) {
      cx.out << "  most contended link " << l.name << ": "
             << devices::format(devices::Seconds{l.contended.value})
             << " saturated while shared, up to " << l.max_flows << " flows\n";
      any = true;
    }
  }
  if (!any)
    cx.out << "  no link was saturated while shared: the step is uncontended\n";
  for (const std::string& n : p.step->notes)
    cx.out << "  note: " << n << "\n";
  return kExitOk;
}

// The best plans (or --layout) of a training task, replayed.
int simulate_training(Context& cx,
                      const SimulateArgs& a,
                      const devices::ClusterSpec& cluster,
                      const devices::TaskSpec& task,
                      const costmodel::CalibrationSet& calibrations,
                      std::vector<SimulatedPlan>& simulated) {
  planner::TrainContext tc{cluster, task, calibrations};
  std::vector<planner::PlanEstimate> plans;
  if (!a.layout.empty()) {
    auto e = estimate_layout_arg(cx, tc, a.layout);
    if (const int* code = std::get_if<int>(&e))
      return *code;
    plans.push_back(std::get<planner::PlanEstimate>(e));
  } else {
    planner::SearchResult r = planner::search_training(tc);
    if (r.plans.empty()) {
      cx.out << "no plan fits: `yirage-plan " << a.files[0] << " " << a.files[1] << "` says why\n";
      return kExitCheckFailed;
    }
    for (std::size_t i = 0; i < r.plans.size() && i < a.top; ++i)
      plans.push_back(r.plans[i]);
  }
  for (const planner::PlanEstimate& p : plans)
    simulated.push_back(simulate_plan(tc, p));
  return kExitOk;
}

// The best plans (or --layout) of an inference task: one forward pass of each, replayed.
int simulate_inference(Context& cx,
                       const SimulateArgs& a,
                       const devices::ClusterSpec& cluster,
                       const devices::TaskSpec& task,
                       const costmodel::CalibrationSet& calibrations,
                       std::vector<SimulatedPlan>& simulated) {
  if (cluster.groups.size() > 1) {
    // Every node group serves its share with its own plan; the groups exchange nothing, so
    // each is replayed on its own nodes.
    if (!a.layout.empty()) {
      cx.err << "yirage-plan: on a mixed cluster simulate takes no --layout yet\n";
      return kExitUnavailable;
    }
    planner::HeteroInferResult r = planner::search_hetero_inference(cluster, task, calibrations);
    if (!r.plan) {
      cx.out << "no plan for " << task.name << " on " << cluster.name << ": " << r.why << "\n";
      return kExitCheckFailed;
    }
    for (const planner::InferShare& share : r.plan->groups) {
      auto g = std::find_if(cluster.groups.begin(), cluster.groups.end(),
                            [&](const devices::NodeGroup& n) { return n.name == share.group; });
      devices::ClusterSpec sub = planner::sub_cluster(cluster, {&*g});
      planner::InferContext gc{sub, task, calibrations};
      simulated.push_back(simulate_plan(gc, share.plan));
      simulated.back().layout = share.group + ": " + simulated.back().layout;
    }
    return kExitOk;
  }
  planner::InferContext ic{cluster, task, calibrations};
  std::vector<planner::InferEstimate> plans;
  if (!a.layout.empty()) {
    auto e = estimate_infer_layout_arg(cx, ic, a.layout);
    if (const int* code = std::get_if<int>(&e))
      return *code;
    plans.push_back(std::get<planner::InferEstimate>(e));
  } else {
    planner::InferSearchResult r = planner::search_inference(ic);
    if (r.plans.empty()) {
      cx.out << "no plan fits: `yirage-plan " << a.files[0] << " " << a.files[1] << "` says why\n";
      return kExitCheckFailed;
    }
    for (std::size_t i = 0; i < r.plans.size() && i < a.top; ++i)
      plans.push_back(r.plans[i]);
  }
  for (const planner::InferEstimate& p : plans)
    simulated.push_back(simulate_plan(ic, p));
  return kExitOk;
}

// The table, the first simulated plan's detail and its trace (written whole or not at all).
int report(Context& cx,
           const SimulateArgs& a,
           const devices::ClusterSpec& cluster,
           const devices::TaskSpec& task,
           const std::vector<SimulatedPlan>& simulated) {
  if (!a.trace.empty()) {
    const SimulatedPlan* first = nullptr;
    for (const SimulatedPlan& s : simulated) {
      if (s.step && first == nullptr)
        first = &s;
    }
    if (first == nullptr) {
      cx.err << "error: --trace: no plan could be simulated\n";
      return kExitCheckFailed;
    }
    std::ostringstream trace;
    costmodel::write_chrome_trace(first->step->program, first->result, trace);
    if (std::string err = atomic_write(a.trace, trace.str()); !err.empty()) {
      cx.err << "error: --trace: " << err << "\n";
      return kExitBadInput;
    }
  }
  if (cx.json || cx.yaml) {
    nlohmann::ordered_json j;
    j["cluster"] = cluster.name;
    j["task"] = task.name;
    for (const SimulatedPlan& s : simulated)
      j["plans"].push_back(simulated_json(s));
    write_structured(cx.out, cx.yaml, j);
    return kExitOk;
  }
  cx.out << task.name << " on " << cluster.name << " (" << cluster.total_devices()
         << " devices): " << simulated.size() << (simulated.size() == 1 ? " plan" : " plans")
         << " replayed in SimGrid"
         << (task.mode == devices::Mode::kTrain     ? ""
             : task.mode == devices::Mode::kPrefill ? " (one prefill: the TTFT)"
                                                    : " (one decode step)")
         << "\n";
  print_simulated(cx.out, simulated);
  for (const SimulatedPlan& s : simulated) {
    if (s.step) {
      print_simulation_detail(cx.out, s);
      break;
    }
  }
  if (!a.trace.empty())
    cx.out << "trace of the first simulated plan written to " << a.trace
           << " (Chrome trace JSON)\n";
  return kExitOk;
}

int simulate(Context& cx, const SimulateArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  devices::ClusterSpec cluster = cx.load_cluster(a.files[0], registry);
  devices::TaskSpec task = cx.load_task(a.files[1]);
  check_fit(cluster, task);
  costmodel::CalibrationSet calibrations =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  if (task.mode == devices::Mode::kTrain && !planner::unsupported_reason(cluster, task).empty()) {
    if (!a.layout.empty() || !a.trace.empty()) {
      cx.err << "yirage-plan: on a mixed cluster simulate takes no --layout or --trace yet\n";
      return kExitUnavailable;
    }
    return simulate_mixed(cx, cluster, task, calibrations);
  }
  std::vector<SimulatedPlan> simulated;
  if (task.mode != devices::Mode::kTrain) {
    if (int code = simulate_inference(cx, a, cluster, task, calibrations, simulated);
        code != kExitOk) {
      return code;
    }
  } else if (int code = simulate_training(cx, a, cluster, task, calibrations, simulated);
             code != kExitOk) {
    return code;
  }
  return report(cx, a, cluster, task, simulated);
}

}  // namespace

void add_simulate_command(CLI::App& app, Context& cx) {
  CLI::App* cmd =
      app.add_subcommand("simulate", "Replay the best plans' step in SimGrid next to the estimate");
  auto a = std::make_shared<SimulateArgs>();
  cmd->add_option("CLUSTER TASK", a->files, "Cluster and task files")->expected(2)->required();
  cmd->add_option("--top", a->top, "How many of the best plans to simulate")->capture_default_str();
  cmd->add_option("--layout", a->layout, "Simulate this layout instead")->type_name("LAYOUT");
  cmd->add_option("--trace", a->trace, "Write the first plan's step as Chrome trace JSON")
      ->type_name("FILE");
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return simulate(cx, *a);
    };
  });
}

}  // namespace yirage::cli
