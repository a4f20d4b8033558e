#include "report/hetero_report.h"

#include "report/layout_json.h"
#include "report/plan_report.h"
#include "report/summary.h"
#include "report/table.h"

namespace yirage::report {
namespace {

using devices::format_number;
using devices::format_quantity;

void print_data_parallel(std::ostream& out, const planner::HeteroPlan& h) {
  out << "data parallelism across the node groups, uneven batch shares: step " << secs(h.step)
      << "\n";
  Table t({"  group", "device", ">devices", ">batch", "layout", ">step", ">tokens/s", ">MFU",
           ">memory/device"});
  for (const planner::GroupShare& g : h.groups) {
    const planner::PlanEstimate& p = g.plan;
    t.add_row({"  " + g.group, g.device, std::to_string(g.devices), std::to_string(g.batch),
               p.layout.str(), secs(p.step.total), format_count(p.tokens_per_s), pct(p.mfu),
               bytes(p.memory.total()) + " / " + bytes(p.memory.capacity)});
  }
  t.print(out);
  double slowest = h.step - h.cross_sync;
  out << "  step " << secs(h.step) << " = slowest group " << secs(slowest)
      << " + gradient all-reduce across the groups " << secs(h.cross_sync) << "\n";
  out << "  throughput " << format_count(h.tokens_per_s) << " tokens/s, MFU " << pct(h.mfu)
      << " of the groups' combined peak\n";
}

}  // namespace

void print_hetero_pipeline(std::ostream& out, const planner::HeteroPipelinePlan& h) {
  out << "one pipeline across the node groups (1F1B), " << h.dp
      << (h.dp == 1 ? " replica" : " replicas") << ": step " << secs(h.step.total) << "\n";
  out << "  layout dp=" << h.dp << ",mb=" << h.micro_batch
      << ",recompute=" << planner::recompute_name(h.recompute) << ",zero=" << h.zero << ": "
      << h.micro_batches << " micro-batches per step\n";
  Table t({"  group", "device", ">devices", ">tp", ">stages", ">layers", ">stage time",
           ">memory/device"});
  for (const planner::PipelinePart& p : h.parts) {
    t.add_row({"  " + p.group, p.device, std::to_string(p.devices), std::to_string(p.tp),
               std::to_string(p.stages), std::to_string(p.layers), secs(p.stage_time),
               bytes(p.memory.total()) + " / " + bytes(p.memory.capacity)});
  }
  t.print(out);
  const planner::StepBreakdown& b = h.step;
  out << "  step " << secs(b.total) << " = compute " << secs(b.compute) << " + TP comm "
      << secs(b.tp_comm) << " + PP comm " << secs(b.pp_comm) << " + bubble " << secs(b.bubble)
      << " + exposed DP comm " << secs(b.dp_comm) << " + optimizer " << secs(b.optimizer)
      << " (the slowest stage's)\n";
  out << "  " << binding_sentence(b, "tensor") << "\n";
  out << "  throughput " << format_count(h.tokens_per_s) << " tokens/s, MFU " << pct(h.mfu)
      << " of the groups' combined peak\n";
  out << "  energy per step "
      << (h.energy.value > 0 ? devices::format(h.energy) + " (every device at TDP: an upper bound)"
                             : std::string("not known (a device has no TDP)"))
      << "; money per step "
      << (h.usd_per_step ? format_number(*h.usd_per_step, 4) + " USD"
                         : std::string("not known (a device has no published price)"))
      << "\n";
  out << "  searched " << h.candidates
      << " layouts (dp, micro-batch, recomputation, ZeRO, the groups' order and tensor "
         "parallelism); layers split by each group's priced layer time within its memory; "
         "no interleaving or expert parallelism across device types\n";
}

bool pipeline_is_best(const planner::HeteroResult& r) {
  if (!r.pipeline)
    return false;
  return !r.plan || r.pipeline->step.total < r.plan->step;
}

void print_hetero_training(std::ostream& out, const planner::HeteroResult& r) {
  bool pipe = pipeline_is_best(r);
  if (pipe)
    print_hetero_pipeline(out, *r.pipeline);
  else
    print_data_parallel(out, *r.plan);
  out << "alternative: ";
  if (pipe) {
    out << (r.plan ? "data parallelism across the node groups, step " + secs(r.plan->step)
                   : "data parallelism across the node groups cannot run: " + r.why)
        << "\n";
  } else {
    out << (r.pipeline ? "one pipeline across the node groups, step " +
                             secs(r.pipeline->step.total) + " (" + r.pipeline->str() + ")"
                       : "one pipeline across the node groups cannot run: " + r.pipeline_why)
        << "\n";
  }
}

nlohmann::ordered_json hetero_pipeline_json(const planner::HeteroPipelinePlan& h) {
  const planner::StepBreakdown& b = h.step;
  nlohmann::ordered_json p;
  p["layout"] = layout_json(h.str());
  p["step_s"] = b.total;
  p["breakdown_s"] = {{"compute", b.compute}, {"tp_comm", b.tp_comm}, {"pp_comm", b.pp_comm},
                      {"bubble", b.bubble},   {"dp_comm", b.dp_comm}, {"optimizer", b.optimizer}};
  p["micro_batches"] = h.micro_batches;
  p["tokens_per_s"] = h.tokens_per_s;
  p["mfu"] = h.mfu;
  p["energy_j"] = h.energy.value;
  p["usd_per_step"] = h.usd_per_step ? nlohmann::ordered_json(*h.usd_per_step) : nullptr;
  for (const planner::PipelinePart& g : h.parts) {
    p["parts"].push_back({{"group", g.group},
                          {"device", g.device},
                          {"devices", g.devices},
                          {"tp", g.tp},
                          {"stages", g.stages},
                          {"layers", g.layers},
                          {"stage_time_s", g.stage_time},
                          {"memory_bytes", g.memory.total()},
                          {"usable_bytes", g.memory.capacity}});
  }
  return p;
}

nlohmann::ordered_json hetero_training_json(const planner::HeteroResult& r) {
  nlohmann::ordered_json plans = nlohmann::ordered_json::array();
  nlohmann::ordered_json refused = nlohmann::ordered_json::array();
  if (r.plan) {
    const planner::HeteroPlan& h = *r.plan;
    nlohmann::ordered_json d;
    d["strategy"] = "data_parallel";
    d["step_s"] = h.step;
    d["cross_group_sync_s"] = h.cross_sync;
    d["tokens_per_s"] = h.tokens_per_s;
    d["mfu"] = h.mfu;
    for (const planner::GroupShare& g : h.groups) {
      nlohmann::ordered_json gj = plan_json(g.plan);
      gj["group"] = g.group;
      gj["device"] = g.device;
      gj["batch"] = g.batch;
      d["groups"].push_back(gj);
    }
    plans.push_back(d);
  } else {
    refused.push_back({{"strategy", "data_parallel"}, {"reason", r.why}});
  }
  if (r.pipeline) {
    nlohmann::ordered_json p = {{"strategy", "pipeline"}};
    p.update(hetero_pipeline_json(*r.pipeline));
    plans.insert(pipeline_is_best(r) ? plans.begin() : plans.end(), p);
  } else {
    refused.push_back({{"strategy", "pipeline"}, {"reason", r.pipeline_why}});
  }
  return {{"plans", plans}, {"refused", refused}};
}

}  // namespace yirage::report
