// The main form, `yirage-plan CLUSTER TASK [--layout L] [--top N]`: validate both files,
// search the plan space (or evaluate one layout), print the ranked plans and the best one's
// breakdown. What the planner cannot do yet (inference, heterogeneous clusters) is said
// plainly, with exit code kExitUnavailable.
#include "cli/context.h"
#include "cli/plan_report.h"
#include "cli/run.h"
#include "cli/summary.h"
#include "planner/infer_estimate.h"
#include "planner/search.h"

#include <CLI/CLI.hpp>

namespace yirage::cli {
namespace {

struct PlanArgs {
  std::vector<std::string> files;
  std::string layout;
  std::size_t top = 10;
};

std::string model_note(const devices::ClusterSpec& c,
                       const costmodel::CalibrationSet& calibrations) {
  const std::string& d = c.groups.front().device;
  return std::string(calibrations.find_gpu(d) ? "operations calibrated"
                                              : "operations uncalibrated (peak rates)") +
         " for " + d + "; collectives " +
         (calibrations.find(d, devices::fabric_name(c.groups.front().fabric.kind))
              ? "calibrated"
              : "from NCCL's constants") +
         " (data/calibration/); not yet checked against measured training runs or serving";
}

int evaluate_layout(Context& cx,
                    const planner::TrainContext& tc,
                    const PlanArgs& a,
                    const std::string& note) {
  planner::Layout l;
  if (std::string err = planner::parse_layout(a.layout, &l); !err.empty()) {
    cx.err << "error: --layout: " << err << "\n";
    return kExitBadInput;
  }
  auto e = planner::estimate_training(tc, l);
  if (auto* r = std::get_if<planner::Rejected>(&e)) {
    cx.out << "layout " << l.str() << " cannot run: " << r->reason << "\n";
    return kExitCheckFailed;
  }
  const auto& p = std::get<planner::PlanEstimate>(e);
  if (cx.json) {
    cx.out << plan_json(p).dump(2) << "\n";
  } else {
    print_plan_detail(cx.out, p, tc.task, note);
  }
  return kExitOk;
}

int explain_nothing_fits(Context& cx, const planner::SearchResult& r) {
  const planner::Rejected* closest = nullptr;
  for (const planner::Rejected& x : r.rejected) {
    if (x.shortfall > 0 && (closest == nullptr || x.shortfall < closest->shortfall))
      closest = &x;
  }
  cx.out << "no layout of the " << r.candidates << " searched fits";
  if (closest != nullptr) {
    cx.out << "; the closest, " << closest->layout.str() << ", " << closest->reason << " ("
           << devices::format_quantity(closest->shortfall, devices::Dim::kBytes) << " short)";
  }
  cx.out << "\n";
  return kExitCheckFailed;
}

int plan_inference(Context& cx,
                   const devices::ClusterSpec& cluster,
                   const devices::TaskSpec& task,
                   const costmodel::CalibrationSet& calibrations,
                   const PlanArgs& a) {
  if (!a.layout.empty()) {
    cx.err << "error: --layout is not available yet for inference tasks\n";
    return kExitUnavailable;
  }
  planner::InferContext ic{cluster, task, calibrations};
  planner::InferSearchResult r = planner::search_inference(ic);
  if (r.plans.empty()) {
    const planner::InferRejected* closest = nullptr;
    for (const auto& x : r.rejected) {
      if (closest == nullptr || (x.shortfall > 0 && x.shortfall < closest->shortfall)) {
        closest = &x;
      }
    }
    cx.out << "no layout of the " << r.candidates << " searched can run " << task.name;
    if (closest != nullptr)
      cx.out << "; " << closest->layout.str() << ": " << closest->reason;
    cx.out << "\n";
    return kExitCheckFailed;
  }
  if (cx.json) {
    nlohmann::ordered_json j;
    j["cluster"] = cluster.name;
    j["task"] = task.name;
    j["candidates"] = r.candidates;
    for (std::size_t i = 0; i < r.plans.size() && i < a.top; ++i) {
      j["plans"].push_back(infer_json(r.plans[i]));
    }
    cx.out << j.dump(2) << "\n";
    return kExitOk;
  }
  cx.out << task.name << " (" << devices::mode_name(task.mode) << ") on " << cluster.name << " ("
         << cluster.total_devices() << " x " << cluster.groups.front().device
         << "): " << r.candidates << " layouts, " << r.plans.size() << " can run\n";
  print_infer_table(cx.out, task, r.plans, a.top);
  cx.out << "  model: " << model_note(cluster, calibrations) << "\n";
  return kExitOk;
}

int plan(Context& cx, const PlanArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  devices::ClusterSpec cluster = cx.load_cluster(a.files[0], registry);
  devices::TaskSpec task = cx.load_task(a.files[1]);
  check_fit(cluster, task);
  if (std::string why = planner::unsupported_reason(cluster, task); !why.empty()) {
    cx.err << "yirage-plan: both files are valid, but " << why
           << ". `yirage-plan check CLUSTER TASK` summarises the inputs.\n";
    return kExitUnavailable;
  }
  costmodel::CalibrationSet calibrations =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  if (task.mode != devices::Mode::kTrain)
    return plan_inference(cx, cluster, task, calibrations, a);
  planner::TrainContext tc{cluster, task, calibrations};
  std::string note = model_note(cluster, calibrations);
  if (!a.layout.empty())
    return evaluate_layout(cx, tc, a, note);
  planner::SearchResult r = planner::search_training(tc);
  if (r.plans.empty())
    return explain_nothing_fits(cx, r);
  if (cx.json) {
    nlohmann::ordered_json j;
    j["cluster"] = cluster.name;
    j["task"] = task.name;
    j["candidates"] = r.candidates;
    j["feasible"] = r.plans.size();
    for (std::size_t i = 0; i < r.plans.size() && i < a.top; ++i) {
      j["plans"].push_back(plan_json(r.plans[i]));
    }
    cx.out << j.dump(2) << "\n";
    return kExitOk;
  }
  cx.out << task.name << " on " << cluster.name << " (" << cluster.total_devices() << " x "
         << cluster.groups.front().device << "): " << r.candidates << " layouts, " << r.plans.size()
         << " fit in memory and were costed\n";
  print_plan_table(cx.out, r.plans, a.top);
  print_plan_detail(cx.out, r.plans.front(), task, note);
  return kExitOk;
}

}  // namespace

void add_plan_form(CLI::App& app, Context& cx) {
  auto a = std::make_shared<PlanArgs>();
  app.add_option("CLUSTER TASK", a->files, "Cluster and task files: find the best plans")
      ->expected(2);
  app.add_option("--layout", a->layout,
                 "Evaluate one layout, e.g. tp=8,pp=4,dp=32,mb=1,recompute=selective,zero=1");
  app.add_option("--top", a->top, "How many plans to list")->capture_default_str();
  app.callback([&cx, &app, a] {
    if (!app.get_subcommands().empty() || a->files.empty())
      return;
    cx.action = [&cx, a] {
      return plan(cx, *a);
    };
  });
}

}  // namespace yirage::cli
