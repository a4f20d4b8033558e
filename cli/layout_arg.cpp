#include "cli/layout_arg.h"

#include "report/summary.h"

#include "cli/plan_file.h"
#include "cli/run.h"

#include <algorithm>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

std::variant<PlanInputs, int> load_plan_inputs(Context& cx,
                                               const std::vector<std::string>& files,
                                               const std::string& layout,
                                               const std::string& plan_file) {
  devices::DeviceRegistry registry = cx.load_registry();
  PlanInputs in{cx.load_cluster(files[0], registry), cx.load_task(files[1]), {}, layout};
  check_fit(in.cluster, in.task);
  if (!plan_file.empty()) {
    if (!layout.empty()) {
      cx.err << "error: give --plan or --layout, not both\n";
      return kExitBadInput;
    }
    in.layout = read_plan_file(plan_file, in.cluster, in.task).layout;
  }
  in.calibrations = costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  in.calibrations.inherit_derived(in.cluster.device_types);
  return in;
}

std::variant<planner::PlanEstimate, int> estimate_layout_arg(Context& cx,
                                                             const planner::TrainContext& tc,
                                                             const std::string& text) {
  planner::Layout l;
  if (std::string err = planner::parse_layout(text, &l); !err.empty()) {
    cx.err << "error: --layout: " << err << "\n";
    return kExitBadInput;
  }
  auto e = planner::estimate_training(tc, l);
  if (auto* r = std::get_if<planner::Rejected>(&e)) {
    cx.out << "layout " << l.str() << " cannot run: " << r->reason << "\n";
    return kExitNoAnswer;
  }
  return std::get<planner::PlanEstimate>(e);
}

std::variant<planner::HeteroPipelinePlan, int> estimate_pipeline_layout_arg(
    Context& cx,
    const devices::ClusterSpec& cluster,
    const devices::TaskSpec& task,
    const costmodel::CalibrationSet& calibrations,
    const std::string& text) {
  planner::HeteroPipelineResult r =
      planner::evaluate_hetero_pipeline(cluster, task, calibrations, text);
  if (r.malformed) {
    cx.err << "error: --layout: " << r.why << "\n";
    return kExitBadInput;
  }
  if (!r.plan) {
    cx.out << "layout " << text << " cannot run: " << r.why << "\n";
    return kExitNoAnswer;
  }
  return *r.plan;
}

std::variant<planner::InferEstimate, int> estimate_infer_layout_arg(Context& cx,
                                                                    const planner::InferContext& ic,
                                                                    const std::string& text) {
  planner::InferLayout l;
  if (std::string err = planner::parse_infer_layout(text, &l); !err.empty()) {
    cx.err << "error: --layout: " << err << "\n";
    return kExitBadInput;
  }
  if (l.replicas == 0)
    l.replicas = std::max<std::int64_t>(1, ic.cluster.total_devices() / (l.tp * l.pp));
  auto e = planner::estimate_inference(ic, l);
  if (auto* r = std::get_if<planner::InferRejected>(&e)) {
    cx.out << "layout " << l.str() << " cannot run: " << r->reason << "\n";
    return kExitNoAnswer;
  }
  auto& estimate = std::get<planner::InferEstimate>(e);
  planner::serve_capacity(ic, estimate);
  return estimate;
}

}  // namespace yirage::cli
