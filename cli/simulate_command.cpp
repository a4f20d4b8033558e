// `yirage-plan simulate CLUSTER TASK [--top K] [--layout L] [--trace FILE]`: the best plans
// (or one layout) replayed step by step in the SimGrid simulator, next to the analytical
// estimate, with the links that saturated and a Chrome trace of the first plan's step.
#include "report/hetero_report.h"
#include "report/simulate_report.h"
#include "report/structured_output.h"
#include "report/summary.h"

#include "cli/context.h"
#include "cli/layout_arg.h"
#include "cli/output_file.h"
#include "cli/plan_file.h"
#include "cli/run.h"
#include "costmodel/sim/chrome_trace.h"
#include "planner/hetero.h"
#include "planner/node_groups.h"
#include "planner/search.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <sstream>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

struct SimulateArgs {
  std::vector<std::string> files;
  std::size_t top = 3;
  std::string layout;
  std::string plan_file;
  std::string trace;
};

// A mixed cluster's training plan (the best, or the pipeline --layout gives: one pipeline
// across the node groups, or data parallelism across them) replayed whole.
int simulate_mixed(Context& cx,
                   const SimulateArgs& a,
                   const devices::ClusterSpec& cluster,
                   const devices::TaskSpec& task,
                   const costmodel::CalibrationSet& calibrations,
                   std::vector<SimulatedPlan>& simulated) {
  SimulatedPlan s;
  planner::StepProgramResult p;
  if (!a.layout.empty()) {
    auto e = estimate_pipeline_layout_arg(cx, cluster, task, calibrations, a.layout);
    if (const int* code = std::get_if<int>(&e))
      return *code;
    const planner::HeteroPipelinePlan& plan = std::get<planner::HeteroPipelinePlan>(e);
    s.layout = plan.str();
    s.estimate = plan.step.total;
    s.added = plan.step.optimizer;
    p = planner::hetero_pipeline_program(cluster, task, calibrations, plan);
  } else {
    planner::HeteroResult r = planner::search_hetero_training(cluster, task, calibrations);
    if (!r.plan && !r.pipeline) {
      cx.out << "no plan for " << task.name << " on " << cluster.name << ": " << r.why << "\n";
      return kExitNoAnswer;
    }
    if (pipeline_is_best(r)) {
      s.layout = r.pipeline->str();
      s.estimate = r.pipeline->step.total;
      s.added = r.pipeline->step.optimizer;
      p = planner::hetero_pipeline_program(cluster, task, calibrations, *r.pipeline);
    } else {
      s.layout = "data parallelism across the groups (";
      for (const planner::GroupShare& g : r.plan->groups) {
        s.layout += (&g == &r.plan->groups.front() ? "" : " | ") + g.group + ": " +
                    g.plan.layout.str() + ", batch " + std::to_string(g.batch);
        s.added = std::max(s.added, g.plan.step.optimizer);
      }
      s.layout += ")";
      s.estimate = r.plan->step;
      p = planner::hetero_data_parallel_program(cluster, task, calibrations, *r.plan);
    }
  }
  if (!p.step) {
    s.why = p.why;
  } else {
    s.step = std::move(p.step);
    s.result = costmodel::simulate(cluster, s.step->program);
    s.simulated = s.result.makespan.value + s.added;
  }
  simulated.push_back(std::move(s));
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
      return kExitNoAnswer;
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
      return kExitNoAnswer;
    }
    planner::HeteroInferResult r = planner::search_hetero_inference(cluster, task, calibrations);
    if (!r.plan) {
      cx.out << "no plan for " << task.name << " on " << cluster.name << ": " << r.why << "\n";
      return kExitNoAnswer;
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
      return kExitNoAnswer;
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
      return kExitNoAnswer;
    }
    std::ostringstream trace;
    costmodel::write_chrome_trace(first->step->program, first->result, trace);
    if (std::string err = write_output(a.trace, trace.str()); !err.empty()) {
      cx.err << "error: --trace: " << err << "\n";
      return kExitBadInput;
    }
  }
  if (cx.structured()) {
    nlohmann::ordered_json j;
    j["cluster"] = cluster.name;
    j["task"] = task.name;
    j["plans"] = nlohmann::ordered_json::array();
    for (const SimulatedPlan& s : simulated)
      j["plans"].push_back(simulated_json(s));
    return write_document(cx, "simulation", j);
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

int simulate(Context& cx, const SimulateArgs& given) {
  auto loaded = load_plan_inputs(cx, given.files, given.layout, given.plan_file);
  if (const int* code = std::get_if<int>(&loaded))
    return *code;
  if (!given.trace.empty()) {
    if (std::string why = output_problem(given.trace); !why.empty()) {
      cx.err << "error: --trace: " << why << "\n";
      return kExitBadInput;
    }
  }
  auto& [cluster, task, calibrations, layout] = std::get<PlanInputs>(loaded);
  // The memory bound of a simulation: SimGrid replays every device as a host, and the step
  // program holds every rank's operations. 16384 devices take about 20 s and 0.6 GB.
  constexpr std::int64_t kMaxSimulatedDevices = 65536;
  if (cluster.total_devices() > kMaxSimulatedDevices) {
    throw devices::InputError({devices::diagnostic_at(
        cluster.loc, "simulate replays every device: " + std::to_string(cluster.total_devices()) +
                         " devices are more than its limit of " +
                         std::to_string(kMaxSimulatedDevices) +
                         " (the planner, without simulate, takes any cluster)")});
  }
  SimulateArgs a = given;
  a.layout = layout;
  std::vector<SimulatedPlan> simulated;
  if (task.mode == devices::Mode::kTrain && !planner::unsupported_reason(cluster, task).empty()) {
    if (int code = simulate_mixed(cx, a, cluster, task, calibrations, simulated); code != kExitOk) {
      return code;
    }
  } else if (task.mode != devices::Mode::kTrain) {
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
  // Each simulation replays a whole step: a bound keeps one command from running for hours.
  cmd->add_option("--top", a->top, "How many of the best plans to simulate (1-100)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--layout", a->layout, "Simulate this layout instead")->type_name("LAYOUT");
  cmd->add_option("--plan", a->plan_file, "Simulate the layout of this plan file (--save-plan)")
      ->type_name("FILE");
  cmd->add_option("--trace", a->trace, "Write the first plan's step as Chrome trace JSON")
      ->type_name("FILE");
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return simulate(cx, *a);
    };
  });
}

}  // namespace yirage::cli
