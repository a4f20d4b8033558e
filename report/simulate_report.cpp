#include "report/simulate_report.h"

#include "report/layout_json.h"
#include "report/plan_report.h"
#include "report/summary.h"
#include "report/table.h"

#include <cmath>

namespace yirage::report {
namespace {

// To a hundredth of a percent: "+1.23%", "-0.65%", "0%".
std::string signed_pct(double v) {
  double hundredths = std::round(v * 1e4);
  if (hundredths == 0)
    return "0%";
  return (hundredths > 0 ? "+" : "") + devices::format_number(hundredths / 100, 4) + "%";
}

std::string contended(const costmodel::SimResult& r) {
  if (r.most_contended.empty() || r.most_contended.front().contended.value <= 0)
    return "none";
  const costmodel::SimLinkUsage& l = r.most_contended.front();
  return l.name + " " + secs(l.contended.value) + " (" + std::to_string(l.max_flows) + " flows)";
}

}  // namespace

namespace {

void replay(const devices::ClusterSpec& cluster, planner::StepProgramResult p, SimulatedPlan& s) {
  if (!p.step) {
    s.why = p.why;
    return;
  }
  s.step = std::move(p.step);
  s.result = costmodel::simulate(cluster, s.step->program);
  s.simulated = s.result.makespan.value + s.added;
}

}  // namespace

SimulatedPlan simulate_plan(const planner::TrainContext& cx, const planner::PlanEstimate& plan) {
  SimulatedPlan s;
  s.layout = plan.layout.str();
  s.estimate = plan.step.total;
  s.added = plan.step.optimizer;
  replay(cx.cluster, planner::training_step_program(cx, plan.layout), s);
  return s;
}

SimulatedPlan simulate_plan(const planner::InferContext& cx, const planner::InferEstimate& plan) {
  SimulatedPlan s;
  s.layout = plan.layout.str();
  s.estimate = planner::step_pass(cx, plan.layout).total;
  replay(cx.cluster, planner::inference_step_program(cx, plan.layout), s);
  return s;
}

void print_simulated(std::ostream& out, const std::vector<SimulatedPlan>& plans) {
  Table t({">#", "layout", ">estimate", ">simulated", ">difference", "most contended link"});
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const SimulatedPlan& s = plans[i];
    if (!s.step) {
      t.add_row(
          {std::to_string(i + 1), s.layout, secs(s.estimate), "-", "-", "not simulated: " + s.why});
      continue;
    }
    t.add_row({std::to_string(i + 1), s.layout, secs(s.estimate), secs(s.simulated),
               signed_pct(s.simulated / s.estimate - 1), contended(s.result)});
  }
  t.print(out);
}

void print_simulation_detail(std::ostream& out, const SimulatedPlan& s) {
  if (!s.step)
    return;
  const costmodel::SimResult& r = s.result;
  out << "simulation of " << s.layout << ": " << s.step->program.tasks.size() << " tasks, "
      << r.transfers << " transfers, " << r.devices.size() << " devices\n";
  out << "  step " << secs(s.simulated) << " = replayed " << secs(r.makespan.value);
  if (s.added > 0)
    out << " + optimizer " << secs(s.added);
  out << " (estimate " << secs(s.estimate) << ", " << signed_pct(s.simulated / s.estimate - 1)
      << ")\n";
  bool any = false;
  for (const costmodel::SimLinkUsage& l : r.most_contended) {
    if (l.contended.value <= 0)
      continue;
    if (!any)
      out << "  links saturated while shared (what the analytical model does not see):\n";
    any = true;
    out << "    " << l.name << ": " << secs(l.contended.value) << " shared and saturated, "
        << secs(l.saturated.value) << " saturated, up to " << l.max_flows << " flows, "
        << devices::format_quantity(l.bytes.value, devices::Dim::kBytes) << " moved\n";
  }
  if (!any)
    out << "  no link was saturated while shared: the step is uncontended\n";
  if (!r.aggregation.empty())
    out << "  aggregated: " << r.aggregation << "\n";
  for (const std::string& n : s.step->notes)
    out << "  note: " << n << "\n";
  for (const std::string& n : r.notes)
    out << "  note: " << n << "\n";
}

nlohmann::ordered_json simulated_json(const SimulatedPlan& s) {
  nlohmann::ordered_json j;
  j["layout"] = layout_json(s.layout);
  j["estimate_s"] = s.estimate;
  if (!s.step) {
    j["simulated_s"] = nullptr;
    j["not_simulated"] = s.why;
    return j;
  }
  j["simulated_s"] = s.simulated;
  j["replayed_s"] = s.result.makespan.value;
  j["tasks"] = s.step->program.tasks.size();
  j["transfers"] = s.result.transfers;
  j["aggregation"] = s.result.aggregation;
  for (const costmodel::SimLinkUsage& l : s.result.most_contended) {
    j["most_contended"].push_back({{"link", l.name},
                                   {"contended_s", l.contended.value},
                                   {"saturated_s", l.saturated.value},
                                   {"max_flows", l.max_flows},
                                   {"bytes", l.bytes.value}});
  }
  j["notes"] = s.step->notes;
  return j;
}

}  // namespace yirage::report
