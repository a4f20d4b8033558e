#include "cli/simulate_report.h"

#include "cli/plan_report.h"
#include "cli/summary.h"
#include "cli/table.h"

#include <cmath>

namespace yirage::cli {
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

SimulatedPlan simulate_plan(const planner::TrainContext& cx, const planner::PlanEstimate& plan) {
  SimulatedPlan s;
  s.plan = plan;
  planner::StepProgramResult p = planner::training_step_program(cx, plan.layout);
  if (!p.step) {
    s.why = p.why;
    return s;
  }
  s.step = std::move(p.step);
  s.result = costmodel::simulate(cx.cluster, s.step->program);
  s.simulated = s.result.makespan.value + plan.step.optimizer;
  return s;
}

void print_simulated(std::ostream& out, const std::vector<SimulatedPlan>& plans) {
  Table t({">#", "layout", ">estimate", ">simulated", ">difference", "most contended link"});
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const SimulatedPlan& s = plans[i];
    if (!s.step) {
      t.add_row({std::to_string(i + 1), s.plan.layout.str(), secs(s.plan.step.total), "-", "-",
                 "not simulated: " + s.why});
      continue;
    }
    t.add_row({std::to_string(i + 1), s.plan.layout.str(), secs(s.plan.step.total),
               secs(s.simulated), signed_pct(s.simulated / s.plan.step.total - 1),
               contended(s.result)});
  }
  t.print(out);
}

void print_simulation_detail(std::ostream& out, const SimulatedPlan& s) {
  if (!s.step)
    return;
  const costmodel::SimResult& r = s.result;
  out << "simulation of " << s.plan.layout.str() << ": " << s.step->program.tasks.size()
      << " tasks, " << r.transfers << " transfers, " << r.devices.size() << " devices\n";
  out << "  step " << secs(s.simulated) << " = replayed " << secs(r.makespan.value)
      << " + optimizer " << secs(s.plan.step.optimizer) << " (estimate " << secs(s.plan.step.total)
      << ", " << signed_pct(s.simulated / s.plan.step.total - 1) << ")\n";
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
  j["layout"] = s.plan.layout.str();
  j["estimate_s"] = s.plan.step.total;
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

}  // namespace yirage::cli
