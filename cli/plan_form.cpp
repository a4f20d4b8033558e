// The main form, `yirage-plan CLUSTER TASK [--layout L] [--top N]`: validate both files,
// search the plan space (or evaluate one layout), print the ranked plans and the best one's
// breakdown. What the planner cannot do yet is said
// plainly, with exit code kExitNoAnswer.
#include "report/hetero_report.h"
#include "report/plan_plot.h"
#include "report/plan_report.h"
#include "report/simulate_report.h"
#include "report/structured_output.h"
#include "report/summary.h"

#include "cli/context.h"
#include "cli/layout_arg.h"
#include "cli/output_file.h"
#include "cli/plan_export.h"
#include "cli/plan_file.h"
#include "cli/plan_kernels.h"
#include "cli/prices.h"
#include "cli/run.h"
#include "planner/hetero.h"
#include "planner/infer_estimate.h"
#include "planner/infer_trust.h"
#include "planner/search.h"
#include "planner/step_trust.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <functional>
#include <sstream>
#include <string_view>
#include <tuple>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

struct PlanArgs {
  std::vector<std::string> files;
  std::string layout;
  std::size_t top = 10;
  std::string plan_file;         // --plan: evaluate the layout of a plan file
  std::string save_plan;         // --save-plan: write the best (or given) plan
  std::size_t simulate_top = 0;  // --simulate-top: re-rank the best K by simulation
  std::string emit_kernels;      // --emit-kernels: the best plan's fused kernels go here
  std::string export_as;         // --export megatron|torch: the plan as a job's arguments
  double price_per_hour = 0;     // --price-per-hour: USD per device-hour for every group
  std::string plot;              // --plot: the best plans' time and memory as SVG
};

// How many of the best plans --plot draws.
constexpr std::size_t kPlotted = 8;

// --plot FILE, if asked: the SVG `svg` makes, written whole or not at all (exit 2).
int write_plot(Context& cx, const PlanArgs& a, const std::function<std::string()>& svg) {
  if (a.plot.empty())
    return kExitOk;
  if (std::string why = write_output(a.plot, svg()); !why.empty()) {
    cx.err << "error: --plot: " << why << "\n";
    return kExitBadInput;
  }
  if (!cx.structured())
    cx.out << "  time and memory of the best plans drawn in " << a.plot << "\n";
  return kExitOk;
}

// After --save-plan (exit code `rc`): --emit-kernels, if asked.
int emit(int rc,
         Context& cx,
         const PlanArgs& a,
         const std::string& plan,
         const devices::ClusterSpec& cluster,
         const costmodel::CalibrationSet& calibrations,
         const std::vector<KernelSite>& sites) {
  if (rc != kExitOk)
    return rc;
  return emit_plan_kernels(cx, a.emit_kernels, plan, cluster, calibrations, sites);
}

// A homogeneous cluster's one device type.
std::vector<KernelSite> one_site(const devices::ClusterSpec& cluster,
                                 const std::vector<planner::CompoundChoice>& compounds) {
  return {{cluster.groups.front().name, cluster.groups.front().device, compounds}};
}

std::vector<KernelSite> pipeline_sites(const planner::HeteroPipelinePlan& plan) {
  std::vector<KernelSite> s;
  for (const planner::PipelinePart& p : plan.parts)
    s.push_back({p.group, p.device, p.compounds});
  return s;
}

// --simulate-top K: the best K plans replayed in SimGrid, re-ranked by the simulated step
// (plans the replay cannot simulate keep their estimate and go last).
std::vector<SimulatedPlan> rerank_by_simulation(const planner::TrainContext& tc,
                                                const std::vector<planner::PlanEstimate>& plans,
                                                std::size_t k) {
  std::vector<SimulatedPlan> out;
  for (std::size_t i = 0; i < plans.size() && i < k; ++i)
    out.push_back(simulate_plan(tc, plans[i]));
  std::stable_sort(out.begin(), out.end(), [](const SimulatedPlan& x, const SimulatedPlan& y) {
    if (x.step.has_value() != y.step.has_value())
      return x.step.has_value();
    return x.step && x.simulated < y.simulated;
  });
  return out;
}

// The names every plan document opens with.
nlohmann::ordered_json names_json(const devices::ClusterSpec& cluster,
                                  const devices::TaskSpec& task) {
  return {{"cluster", cluster.name}, {"task", task.name}};
}

// Writes the plan file of --save-plan, if asked; an unwritable path is exit 2.
int save_plan(Context& cx,
              const PlanArgs& a,
              const devices::ClusterSpec& cluster,
              const devices::TaskSpec& task,
              const std::string& layout,
              const nlohmann::ordered_json& estimate) {
  if (a.save_plan.empty())
    return kExitOk;
  std::string error = write_output(a.save_plan, plan_file_yaml(cluster, task, layout, estimate));
  if (!error.empty()) {
    cx.err << "error: --save-plan: " << error << "\n";
    return kExitBadInput;
  }
  if (!cx.structured())
    cx.out << "plan " << layout << " written to " << a.save_plan << "\n";
  return kExitOk;
}

// The step model's measured error on the cluster's device under the task's framework.
// The device whose measured steps say how far a plan on `c` can be trusted: the first group's,
// or the registry device it was derived from.
std::string measured_as(const devices::ClusterSpec& c) {
  const devices::DeviceSpec& d = c.device(c.groups.front());
  return d.base.empty() ? d.name : d.base;
}

planner::StepTrust trust(const Context& cx, const planner::TrainContext& tc) {
  return planner::step_trust(devices::data_dir() / "benchmarks", measured_as(tc.cluster),
                             tc.task.framework, cx.load_registry(),
                             devices::ModelRegistry::load_bundled(), tc.calibrations);
}

std::string trust_text(const planner::StepTrust& t, const planner::PlanEstimate& p) {
  return planner::step_trust_text(t, p.layout.tp > 1, planner::keeps_gpu_busy(p.step));
}

// One kind of layout's error: rows, MAPE, bias, how far one moves when measured again.
nlohmann::ordered_json stats_json(const planner::StepStats& s) {
  if (s.rows == 0)
    return nullptr;
  return {{"rows", s.rows},
          {"mape_percent", s.mape},
          {"bias_percent", s.bias},
          {"repeat_rows", s.repeat_rows},
          {"repeat_spread_percent", s.repeat_rows > 0 ? nlohmann::ordered_json(s.repeat_spread)
                                                      : nlohmann::ordered_json(nullptr)}};
}

// The step model's error where it was measured, for plan `p`.
nlohmann::ordered_json trust_json(const planner::StepTrust& t, const planner::PlanEstimate& p) {
  nlohmann::ordered_json j;
  j["device"] = t.device;
  j["framework"] = planner::framework_name(t.framework);
  j["measured_steps"] = t.rows;
  j["mape_percent"] = t.rows > 0 ? nlohmann::ordered_json(t.mape) : nullptr;
  j["bias_percent"] = t.rows > 0 ? nlohmann::ordered_json(t.bias) : nullptr;
  j["by_gpus"] = nlohmann::ordered_json::array();
  for (const planner::StepStats& s : t.by_gpus)
    j["by_gpus"].push_back({{"group", s.group}, {"rows", s.rows}, {"mape_percent", s.mape}});
  j["with_tensor_parallelism"] = stats_json(t.with_tp);
  j["without_tensor_parallelism"] = stats_json(t.without_tp);
  j["busy_share"] = planner::kBusyShare;
  j["gpu_busy"] = stats_json(t.busy);
  j["gpu_idle"] = stats_json(t.idle);
  j["plan_keeps_gpu_busy"] = planner::keeps_gpu_busy(p.step);
  j["text"] = trust_text(t, p);
  return j;
}

int evaluate_layout(Context& cx,
                    const planner::TrainContext& tc,
                    const PlanArgs& a,
                    const std::string& note) {
  auto e = estimate_layout_arg(cx, tc, a.layout);
  if (const int* code = std::get_if<int>(&e))
    return *code;
  const auto& p = std::get<planner::PlanEstimate>(e);
  planner::StepTrust t = trust(cx, tc);
  if (cx.structured()) {
    nlohmann::ordered_json j = names_json(tc.cluster, tc.task);
    j["trust"] = trust_json(t, p);
    j["plans"] = nlohmann::ordered_json::array({plan_run_json(p, tc.task)});
    if (int rc = write_document(cx, "training", j); rc != kExitOk)
      return rc;
  } else {
    print_plan_detail(cx.out, p, tc.task, note + "\n  step model: " + trust_text(t, p));
  }
  return emit(save_plan(cx, a, tc.cluster, tc.task, p.layout.str(), plan_json(p)), cx, a,
              p.layout.str(), tc.cluster, tc.calibrations, one_site(tc.cluster, p.compounds));
}

// The inference model's measured error on the cluster's device with the task's weights.
planner::InferTrust infer_trust(const Context& cx, const planner::InferContext& ic) {
  return planner::infer_trust(devices::data_dir() / "benchmarks", measured_as(ic.cluster), ic.task,
                              cx.load_registry(), devices::ModelRegistry::load_bundled(),
                              ic.calibrations);
}

nlohmann::ordered_json infer_trust_json(const planner::InferTrust& t) {
  auto stat = [](std::size_t rows, double mape, double bias) {
    return rows > 0 ? nlohmann::ordered_json{{"rows", rows},
                                             {"mape_percent", mape},
                                             {"bias_percent", bias}}
                    : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json j;
  j["device"] = t.device;
  j["weights"] = t.eight_bit ? "8-bit" : "16-bit";
  j["framework"] = planner::framework_name(t.framework);
  j["ttft"] = stat(t.same.ttft_rows, t.same.ttft_mape, t.same.ttft_bias);
  j["tpot"] = stat(t.same.tpot_rows, t.same.tpot_mape, t.same.tpot_bias);
  j["text"] = planner::infer_trust_text(t);
  return j;
}

// `--layout tp=..,pp=..,replicas=..,batch=..` for an inference task: that layout alone.
int evaluate_infer_layout(Context& cx, const planner::InferContext& ic, const PlanArgs& a) {
  auto e = estimate_infer_layout_arg(cx, ic, a.layout);
  if (const int* code = std::get_if<int>(&e))
    return *code;
  const auto& p = std::get<planner::InferEstimate>(e);
  planner::InferTrust t = infer_trust(cx, ic);
  if (cx.structured()) {
    nlohmann::ordered_json j = names_json(ic.cluster, ic.task);
    j["trust"] = infer_trust_json(t);
    j["plans"] = nlohmann::ordered_json::array({infer_json(p)});
    if (int rc = write_document(cx, "inference", j); rc != kExitOk)
      return rc;
  } else {
    cx.out << ic.task.name << " (" << devices::mode_name(ic.task.mode) << ") on " << ic.cluster.name
           << ", the given layout:\n";
    print_infer_table(cx.out, ic.task, {p}, 1);
    cx.out << "  inference model: " << planner::infer_trust_text(t) << "\n";
  }
  return emit(save_plan(cx, a, ic.cluster, ic.task, p.layout.str(), infer_json(p)), cx, a,
              p.layout.str(), ic.cluster, ic.calibrations, one_site(ic.cluster, p.compounds));
}

// No answer (exit 3): a line of text, or with --json a document with no plans that says why.
int no_answer(Context& cx,
              std::string_view kind,
              nlohmann::ordered_json j,
              const std::string& why) {
  if (cx.structured()) {
    if (!j.contains("plans"))
      j["plans"] = nlohmann::ordered_json::array();
    j["no_answer"] = why;
    if (int rc = write_document(cx, kind, j); rc != kExitOk)
      return rc;
  } else {
    cx.out << why << "\n";
  }
  return kExitNoAnswer;
}

int explain_nothing_fits(Context& cx,
                         const planner::TrainContext& tc,
                         const planner::SearchResult& r) {
  const planner::Rejected* closest = nullptr;
  for (const planner::Rejected& x : r.rejected) {
    if (x.shortfall > 0 && (closest == nullptr || x.shortfall < closest->shortfall))
      closest = &x;
  }
  std::ostringstream why;
  why << "no layout of the " << r.candidates << " searched fits";
  if (closest != nullptr) {
    why << "; the closest, " << closest->layout.str() << ", " << closest->reason << " ("
        << devices::format_quantity(closest->shortfall, devices::Dim::kBytes) << " short)";
  } else if (!r.rejected.empty()) {
    why << "; for example " << r.rejected.front().layout.str() << ": " << r.rejected.front().reason;
  }
  nlohmann::ordered_json j = names_json(tc.cluster, tc.task);
  j["candidates"] = r.candidates;
  j["feasible"] = 0;
  return no_answer(cx, "training", j, why.str());
}

int plan_inference(Context& cx,
                   const devices::ClusterSpec& cluster,
                   const devices::TaskSpec& task,
                   const costmodel::CalibrationSet& calibrations,
                   const PlanArgs& a) {
  planner::InferContext ic{cluster, task, calibrations};
  if (!a.layout.empty())
    return evaluate_infer_layout(cx, ic, a);
  planner::InferSearchResult r = planner::search_inference(ic);
  if (r.plans.empty()) {
    const planner::InferRejected* closest = nullptr;
    for (const auto& x : r.rejected) {
      if (closest == nullptr || (x.shortfall > 0 && x.shortfall < closest->shortfall)) {
        closest = &x;
      }
    }
    std::string why =
        "no layout of the " + std::to_string(r.candidates) + " searched can run " + task.name;
    if (closest != nullptr)
      why += "; " + closest->layout.str() + ": " + closest->reason;
    nlohmann::ordered_json j = names_json(cluster, task);
    j["candidates"] = r.candidates;
    return no_answer(cx, "inference", j, why);
  }
  auto plot = [&] {
    return inference_plot_svg(task.name + " on " + cluster.name, r.plans,
                              std::min(a.top, kPlotted));
  };
  if (cx.structured()) {
    nlohmann::ordered_json j = names_json(cluster, task);
    j["candidates"] = r.candidates;
    j["trust"] = infer_trust_json(infer_trust(cx, ic));
    j["plans"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < r.plans.size() && i < a.top; ++i) {
      j["plans"].push_back(infer_json(r.plans[i]));
    }
    if (int rc = write_document(cx, "inference", j); rc != kExitOk)
      return rc;
    if (int rc = write_plot(cx, a, plot); rc != kExitOk)
      return rc;
    return emit(
        save_plan(cx, a, cluster, task, r.plans.front().layout.str(), infer_json(r.plans.front())),
        cx, a, r.plans.front().layout.str(), cluster, calibrations,
        one_site(cluster, r.plans.front().compounds));
  }
  cx.out << task.name << " (" << devices::mode_name(task.mode) << ") on " << cluster.name << " ("
         << cluster.total_devices() << " x " << cluster.groups.front().device
         << "): " << r.candidates << " layouts, " << r.plans.size() << " can run\n";
  print_infer_table(cx.out, task, r.plans, a.top);
  cx.out << "  model: " << model_note(cluster, calibrations, task.mode) << "\n";
  cx.out << "  inference model: " << planner::infer_trust_text(infer_trust(cx, ic)) << "\n";
  if (int rc = write_plot(cx, a, plot); rc != kExitOk)
    return rc;
  return emit(
      save_plan(cx, a, cluster, task, r.plans.front().layout.str(), infer_json(r.plans.front())),
      cx, a, r.plans.front().layout.str(), cluster, calibrations,
      one_site(cluster, r.plans.front().compounds));
}

// `--layout "dp=..,mb=..,recompute=..,zero=.. | group: tp=..,pp=..,layers=.. | ..."` on a
// mixed cluster: that pipeline across the groups alone.
int evaluate_hetero_layout(Context& cx,
                           const devices::ClusterSpec& cluster,
                           const devices::TaskSpec& task,
                           const costmodel::CalibrationSet& calibrations,
                           const PlanArgs& a) {
  auto e = estimate_pipeline_layout_arg(cx, cluster, task, calibrations, a.layout);
  if (const int* code = std::get_if<int>(&e))
    return *code;
  const planner::HeteroPipelinePlan& plan = std::get<planner::HeteroPipelinePlan>(e);
  if (cx.structured()) {
    nlohmann::ordered_json j = names_json(cluster, task);
    nlohmann::ordered_json p = {{"strategy", "pipeline"}};
    p.update(hetero_pipeline_json(plan));
    j["plans"] = nlohmann::ordered_json::array({p});
    if (int rc = write_document(cx, "mixed_training", j); rc != kExitOk)
      return rc;
  } else {
    print_hetero_pipeline(cx.out, plan);
    cx.out << "  model: " << model_note(cluster, calibrations, devices::Mode::kTrain) << "\n";
  }
  return emit(save_plan(cx, a, cluster, task, plan.str(), hetero_pipeline_json(plan)), cx, a,
              plan.str(), cluster, calibrations, pipeline_sites(plan));
}

int plan_hetero(Context& cx,
                const devices::ClusterSpec& cluster,
                const devices::TaskSpec& task,
                const costmodel::CalibrationSet& calibrations,
                const PlanArgs& a) {
  if (!a.layout.empty())
    return evaluate_hetero_layout(cx, cluster, task, calibrations, a);
  planner::HeteroResult r = planner::search_hetero_training(cluster, task, calibrations);
  if (!a.save_plan.empty() && !pipeline_is_best(r)) {
    cx.err << "yirage-plan: --save-plan on a mixed cluster saves pipelines across the node "
              "groups; the best plan here is data parallelism across them, which has no plan "
              "file form yet\n";
    return kExitNoAnswer;
  }
  if (!r.plan && !r.pipeline) {
    nlohmann::ordered_json j = names_json(cluster, task);
    j.update(hetero_training_json(r));
    return no_answer(cx, "mixed_training", j,
                     "no plan for " + task.name + " on " + cluster.name +
                         ":\n  data parallelism across the node groups: " + r.why +
                         "\n  one pipeline across the node groups: " + r.pipeline_why);
  }
  if (cx.structured()) {
    nlohmann::ordered_json j = names_json(cluster, task);
    j.update(hetero_training_json(r));
    if (int rc = write_document(cx, "mixed_training", j); rc != kExitOk)
      return rc;
  } else {
    cx.out << task.name << " on " << cluster.name << " (" << cluster.total_devices()
           << " devices in " << cluster.groups.size() << " node groups)\n";
    print_hetero_training(cx.out, r);
    cx.out << "  model: " << model_note(cluster, calibrations, devices::Mode::kTrain) << "\n";
  }
  if (!pipeline_is_best(r)) {
    std::vector<KernelSite> sites;
    std::string layouts;
    for (const planner::GroupShare& g : r.plan->groups) {
      sites.push_back({g.group, g.device, g.plan.compounds});
      layouts += (layouts.empty() ? "" : " | ") + g.group + ": " + g.plan.layout.str();
    }
    return emit(kExitOk, cx, a, layouts, cluster, calibrations, sites);
  }
  return emit(save_plan(cx, a, cluster, task, r.pipeline->str(), hetero_pipeline_json(*r.pipeline)),
              cx, a, r.pipeline->str(), cluster, calibrations, pipeline_sites(*r.pipeline));
}

int plan_hetero_inference(Context& cx,
                          const devices::ClusterSpec& cluster,
                          const devices::TaskSpec& task,
                          const costmodel::CalibrationSet& calibrations,
                          const PlanArgs& a) {
  planner::HeteroInferResult r = planner::search_hetero_inference(cluster, task, calibrations);
  if (!r.plan) {
    return no_answer(cx, "mixed_inference", names_json(cluster, task),
                     "no plan for " + task.name + " on " + cluster.name + ": " + r.why);
  }
  const planner::HeteroInferPlan& h = *r.plan;
  std::vector<KernelSite> sites;
  std::string layouts;
  for (const planner::InferShare& g : h.groups) {
    sites.push_back({g.group, g.device, g.plan.compounds});
    layouts += (layouts.empty() ? "" : " | ") + g.group + ": " + g.plan.layout.str();
  }
  if (cx.structured()) {
    nlohmann::ordered_json plan;
    plan["tokens_per_s"] = h.tokens_per_s;
    plan["ttft_s"] = h.ttft;
    plan["tpot_s"] = h.tpot;
    plan["meets_objective"] = h.meets_objective;
    for (const planner::InferShare& g : h.groups) {
      nlohmann::ordered_json gj = infer_json(g.plan);
      gj["group"] = g.group;
      gj["device"] = g.device;
      gj[task.mode == devices::Mode::kServe ? "requests_per_s" : "sequences"] = g.share;
      plan["groups"].push_back(gj);
    }
    nlohmann::ordered_json j = names_json(cluster, task);
    j["plans"] = nlohmann::ordered_json::array({plan});
    if (int rc = write_document(cx, "mixed_inference", j); rc != kExitOk)
      return rc;
    return emit(kExitOk, cx, a, layouts, cluster, calibrations, sites);
  }
  cx.out << task.name << " (" << devices::mode_name(task.mode) << ") on " << cluster.name << " ("
         << cluster.total_devices() << " devices in " << cluster.groups.size() << " node groups)\n";
  print_hetero_infer(cx.out, task, h);
  cx.out << "  model: " << model_note(cluster, calibrations, task.mode) << "\n";
  return emit(kExitOk, cx, a, layouts, cluster, calibrations, sites);
}

// --export: the best training plan (or the layout given) as Megatron-LM's arguments or the
// runner's command line, and nothing else on stdout (the plan file of --save-plan written).
int export_plan(Context& cx,
                const planner::TrainContext& tc,
                const PlanArgs& a,
                const std::string& cluster_file,
                const std::string& task_file) {
  std::string plan_file = a.plan_file.empty() ? a.save_plan : a.plan_file;
  if (a.export_as == "torch" && plan_file.empty()) {
    cx.err << "error: --export torch needs --save-plan FILE (or --plan FILE): bench/run_plan.py "
              "runs a plan file\n";
    return kExitBadInput;
  }
  planner::PlanEstimate p;
  if (!a.layout.empty()) {
    auto e = estimate_layout_arg(cx, tc, a.layout);
    if (const int* code = std::get_if<int>(&e))
      return *code;
    p = std::get<planner::PlanEstimate>(e);
  } else {
    planner::SearchResult r = planner::search_training(tc);
    if (r.plans.empty())
      return explain_nothing_fits(cx, tc, r);
    p = r.plans.front();
  }
  if (!a.save_plan.empty()) {
    std::string error = write_output(
        a.save_plan, plan_file_yaml(tc.cluster, tc.task, p.layout.str(), plan_json(p)));
    if (!error.empty()) {
      cx.err << "error: --save-plan: " << error << "\n";
      return kExitBadInput;
    }
  }
  cx.out << (a.export_as == "megatron"
                 ? megatron_arguments(tc.cluster, tc.task, p.layout)
                 : torch_command(tc.cluster, cluster_file, task_file, plan_file));
  return kExitOk;
}

int plan(Context& cx, const PlanArgs& given) {
  auto loaded = load_plan_inputs(cx, given.files, given.layout, given.plan_file);
  if (const int* code = std::get_if<int>(&loaded))
    return *code;
  if (!given.save_plan.empty()) {
    if (std::string why = output_problem(given.save_plan); !why.empty()) {
      cx.err << "error: --save-plan: " << why << "\n";
      return kExitBadInput;
    }
  }
  auto& [cluster, task, calibrations, layout] = std::get<PlanInputs>(loaded);
  if (std::string why = apply_prices(given.price_per_hour, cluster, task); !why.empty()) {
    cx.err << why << "\n";
    return kExitBadInput;
  }
  PlanArgs a = given;
  a.layout = layout;
  if (!a.plot.empty()) {
    std::string why = !a.layout.empty() ? "not with --layout or --plan (one plan: the text says it)"
                      : !a.export_as.empty() ? "not with --export"
                      : planner::unsupported_reason(cluster, task).empty()
                          ? ""
                          : "not yet for clusters of several device types";
    if (!why.empty()) {
      cx.err << "error: --plot draws a search's best plans; " << why << "\n";
      return kExitBadInput;
    }
  }
  if (!a.export_as.empty()) {
    if (task.mode != devices::Mode::kTrain) {
      cx.err << "error: --export takes training plans; " << task.name << " is "
             << devices::mode_name(task.mode) << "\n";
      return kExitBadInput;
    }
    if (!planner::unsupported_reason(cluster, task).empty()) {
      cx.err << "yirage-plan: --export is not available yet for mixed clusters\n";
      return kExitNoAnswer;
    }
    if (cx.structured() || !a.emit_kernels.empty() || a.simulate_top > 0) {
      cx.err << "error: --export prints the job's arguments alone: not with --json, --yaml, "
                "--emit-kernels or --simulate-top\n";
      return kExitBadInput;
    }
    return export_plan(cx, planner::TrainContext{cluster, task, calibrations}, a, a.files[0],
                       a.files[1]);
  }
  if (std::string why = planner::unsupported_reason(cluster, task); !why.empty()) {
    if (task.mode == devices::Mode::kTrain)
      return plan_hetero(cx, cluster, task, calibrations, a);
    if (!a.save_plan.empty()) {
      cx.err << "yirage-plan: --save-plan is not available yet for inference on mixed "
                "clusters\n";
      return kExitNoAnswer;
    }
    if (task.mode != devices::Mode::kTrain && a.layout.empty()) {
      return plan_hetero_inference(cx, cluster, task, calibrations, a);
    }
    cx.err << "yirage-plan: both files are valid, but " << why
           << (task.mode == devices::Mode::kTrain ? " for --layout" : " for inference")
           << ". `yirage-plan check CLUSTER TASK` summarises the inputs.\n";
    return kExitNoAnswer;
  }
  if (task.mode != devices::Mode::kTrain)
    return plan_inference(cx, cluster, task, calibrations, a);
  planner::TrainContext tc{cluster, task, calibrations};
  std::string note = model_note(cluster, calibrations, devices::Mode::kTrain);
  if (!a.layout.empty())
    return evaluate_layout(cx, tc, a, note);
  planner::SearchResult r = planner::search_training(tc);
  if (r.plans.empty())
    return explain_nothing_fits(cx, tc, r);
  // The title captured by value: clang before 16 cannot capture structured bindings.
  auto plot = [&r, &a, title = task.name + " on " + cluster.name] {
    return training_plot_svg(title, r.plans, std::min(a.top, kPlotted));
  };
  if (cx.structured()) {
    nlohmann::ordered_json j = names_json(cluster, task);
    j["candidates"] = r.candidates;
    j["feasible"] = r.plans.size();
    j["trust"] = trust_json(trust(cx, tc), r.plans.front());
    for (std::size_t i = 0; i < r.plans.size() && i < a.top; ++i) {
      j["plans"].push_back(plan_run_json(r.plans[i], task));
    }
    for (const SimulatedPlan& s : rerank_by_simulation(tc, r.plans, a.simulate_top))
      j["simulated"].push_back(simulated_json(s));
    if (int rc = write_document(cx, "training", j); rc != kExitOk)
      return rc;
    if (int rc = write_plot(cx, a, plot); rc != kExitOk)
      return rc;
    return emit(
        save_plan(cx, a, cluster, task, r.plans.front().layout.str(), plan_json(r.plans.front())),
        cx, a, r.plans.front().layout.str(), cluster, calibrations,
        one_site(cluster, r.plans.front().compounds));
  }
  cx.out << task.name << " on " << cluster.name << " (" << cluster.total_devices() << " x "
         << cluster.groups.front().device << "): " << r.candidates << " layouts, " << r.plans.size()
         << " fit in memory and were costed\n";
  print_plan_table(cx.out, r.plans, a.top);
  print_plan_detail(cx.out, r.plans.front(), task,
                    note + "\n  step model: " + trust_text(trust(cx, tc), r.plans.front()));
  if (a.simulate_top > 0) {
    std::vector<SimulatedPlan> sims = rerank_by_simulation(tc, r.plans, a.simulate_top);
    cx.out << "the best " << sims.size() << " re-ranked by SimGrid simulation of their step:\n";
    print_simulated(cx.out, sims);
  }
  if (int rc = write_plot(cx, a, plot); rc != kExitOk)
    return rc;
  return emit(
      save_plan(cx, a, cluster, task, r.plans.front().layout.str(), plan_json(r.plans.front())), cx,
      a, r.plans.front().layout.str(), cluster, calibrations,
      one_site(cluster, r.plans.front().compounds));
}

}  // namespace

void add_plan_form(CLI::App& app, Context& cx) {
  auto a = std::make_shared<PlanArgs>();
  app.add_option("CLUSTER TASK", a->files, "Cluster and task files: find the best plans")
      ->expected(2);
  app.add_option("--layout", a->layout,
                 "Evaluate one layout: training tp=8,pp=4,dp=32,mb=1,recompute=selective,zero=1; "
                 "inference tp=8,pp=1,replicas=2,batch=16 (replicas default to the whole "
                 "cluster)");
  app.add_option("--top", a->top, "How many plans to list")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app.add_option("--simulate-top", a->simulate_top,
                 "Re-rank the best K training plans by simulating their step in SimGrid (0-100)")
      ->type_name("K")
      ->check(CLI::Range(0, 100));
  app.add_option("--save-plan", a->save_plan,
                 "Write the best plan (or the --layout given) to this plan file (YAML)");
  app.add_option("--emit-kernels", a->emit_kernels,
                 "Write the kernels of the best plan's fused operations for each device type "
                 "(CUDA, HIP, CPU) with a manifest to this directory")
      ->type_name("DIR");
  app.add_option("--export", a->export_as,
                 "Print the best training plan (or the --layout or --plan given) as a job: "
                 "megatron (Megatron-LM's pretrain_gpt.py arguments) or torch (the "
                 "bench/run_plan.py command line, with --save-plan)")
      ->check(CLI::IsMember({"megatron", "torch"}));
  app.add_option("--plan", a->plan_file,
                 "Evaluate the layout of a plan file written by --save-plan");
  add_price_option(app, &a->price_per_hour);
  app.add_option("--plot", a->plot,
                 "Draw the best plans' step (or token) time and memory per device as SVG to "
                 "FILE (training and inference searches on one device type)")
      ->type_name("FILE");
  app.callback([&cx, &app, a] {
    if (!app.get_subcommands().empty() || a->files.empty())
      return;
    cx.action = [&cx, a] {
      return plan(cx, *a);
    };
  });
}

}  // namespace yirage::cli
