#include "report/plan_report.h"

#include "report/layout_json.h"
#include "report/summary.h"
#include "report/table.h"

#include <algorithm>
#include <array>

namespace yirage::report {
using devices::format_number;
using devices::format_quantity;

void print_plan_table(std::ostream& out,
                      const std::vector<planner::PlanEstimate>& plans,
                      std::size_t top) {
  Table t({">#", "layout", ">step", ">tokens/s", ">MFU", ">HFU", ">memory/device", ">energy/step",
           ">USD/step"});
  for (std::size_t i = 0; i < plans.size() && i < top; ++i) {
    const planner::PlanEstimate& p = plans[i];
    t.add_row({std::to_string(i + 1), p.layout.str(), secs(p.step.total),
               format_count(p.tokens_per_s), pct(p.mfu), pct(p.hfu),
               bytes(p.memory.total()) + " / " + bytes(p.memory.capacity),
               p.energy.value > 0 ? devices::format(p.energy) : "-",
               p.usd_per_step ? format_number(*p.usd_per_step, 4) : "-"});
  }
  t.print(out);
}

namespace {

// The whole run a task's training tokens take at plan `p`: days, and USD where priced.
struct Run {
  double days = 0;
  std::optional<double> usd;
};

std::optional<Run> whole_run(const planner::PlanEstimate& p, const devices::TaskSpec& task) {
  if (!task.training_tokens || p.tokens_per_s <= 0)
    return std::nullopt;
  Run r;
  r.days = *task.training_tokens / p.tokens_per_s / 86400;
  if (p.usd_per_step) {
    double steps =
        *task.training_tokens / static_cast<double>(task.global_batch * task.sequence_length);
    r.usd = *p.usd_per_step * steps;
  }
  return r;
}

// What the "TP comm" part holds besides tensor parallelism: expert all-to-alls, the
// context-parallel ring.
std::string inner_parallelism(const planner::Layout& l, const char* tp, const char* sep) {
  std::string s = tp;
  if (l.ep > 1)
    s += std::string(l.cp > 1 ? ", " : sep) + "EP";
  if (l.cp > 1)
    s += std::string(sep) + "CP";
  return s;
}

}  // namespace

std::string binding_sentence(const planner::PlanEstimate& p) {
  // "tensor-parallel", "tensor- and expert-parallel", "tensor-, expert- and context-parallel"
  std::vector<std::string> kinds = {"tensor"};
  if (p.layout.ep > 1)
    kinds.push_back("expert");
  if (p.layout.cp > 1)
    kinds.push_back("context");
  std::string inner;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0)
      inner += i + 1 == kinds.size() ? "- and " : "-, ";
    inner += kinds[i];
  }
  return binding_sentence(p.step, inner);
}

std::string binding_sentence(const planner::StepBreakdown& b, const std::string& inner) {
  std::string collectives = inner + "-parallel collectives inside the layers";
  std::array<std::pair<double, const char*>, 6> parts = {{
      {b.compute, "compute on the slowest pipeline stage"},
      {b.tp_comm, collectives.c_str()},
      {b.pp_comm, "pipeline sends"},
      {b.bubble, "the pipeline bubble"},
      {b.dp_comm, "data-parallel gradient synchronisation"},
      {b.optimizer, "the optimizer step"},
  }};
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string s = std::string("The step is bound by ") + parts[0].second + " (" +
                  pct(parts[0].first / b.total) + ")";
  if (parts[1].first > 0.05 * b.total) {
    s += ", then " + std::string(parts[1].second) + " (" + pct(parts[1].first / b.total) + ")";
  }
  return s + ".";
}

void print_plan_detail(std::ostream& out,
                       const planner::PlanEstimate& p,
                       const devices::TaskSpec& task,
                       const std::string& model_note) {
  const planner::StepBreakdown& b = p.step;
  out << "plan " << p.layout.str() << ": " << p.micro_batches << " micro-batches per step\n";
  out << "  step " << secs(b.total) << " = compute " << secs(b.compute) << " + "
      << inner_parallelism(p.layout, "TP", " and ") << " comm " << secs(b.tp_comm) << " + PP comm "
      << secs(b.pp_comm) << " + bubble " << secs(b.bubble) << " + exposed DP comm "
      << secs(b.dp_comm) << " + optimizer " << secs(b.optimizer) << "\n";
  out << "  " << binding_sentence(p) << "\n";
  const planner::MemoryUse& m = p.memory;
  out << "  memory per device: weights " << bytes(m.weights) << ", gradients " << bytes(m.gradients)
      << ", optimizer " << bytes(m.optimizer) << ", activations " << bytes(m.activations) << " = "
      << bytes(m.total()) << " of " << bytes(m.capacity) << " usable\n";
  if (p.layout.offload) {
    out << "  optimizer offloaded: " << bytes(m.host)
        << " of state per device in host memory; the host CPUs' step is priced at their peak "
           "memory bandwidth (a lower bound)\n";
  }
  out << "  throughput " << format_count(p.tokens_per_s) << " tokens/s, MFU " << pct(p.mfu)
      << ", HFU " << pct(p.hfu) << "\n";
  out << "  energy per step "
      << (p.energy.value > 0 ? devices::format(p.energy) + " (every device at TDP: an upper bound)"
                             : std::string("not known (no TDP)"))
      << "; money per step "
      << (p.usd_per_step ? format_number(*p.usd_per_step, 4) + " USD"
                         : std::string("not known (no published price)"))
      << "\n";
  if (std::optional<Run> run = whole_run(p, task)) {
    out << "  whole run of " << format_count(*task.training_tokens)
        << " tokens: " << format_number(run->days, 3) << " days";
    if (run->usd)
      out << ", " << format_number(*run->usd, 4) << " USD";
    out << "\n";
  }
  const devices::Objective& o = task.objective;
  if (o.max_step_time || o.max_devices || o.max_cost_per_hour || o.min_throughput) {
    out << "  objective: "
        << (p.objective_miss.empty() ? std::string("met (the task's limits)")
                                     : "missed: " + p.objective_miss)
        << "\n";
  }
  out << "  fusions:";
  for (const std::string& f : p.fusions)
    out << " " << f << ";";
  out << "\n  model: " << model_note << "\n";
}

nlohmann::ordered_json plan_json(const planner::PlanEstimate& p) {
  const planner::StepBreakdown& b = p.step;
  nlohmann::ordered_json j;
  j["layout"] = layout_json(p.layout.str());
  j["step_s"] = b.total;
  j["breakdown_s"] = {{"compute", b.compute}, {"tp_comm", b.tp_comm}, {"pp_comm", b.pp_comm},
                      {"bubble", b.bubble},   {"dp_comm", b.dp_comm}, {"optimizer", b.optimizer}};
  j["micro_batches"] = p.micro_batches;
  j["tokens_per_s"] = p.tokens_per_s;
  j["mfu"] = p.mfu;
  j["hfu"] = p.hfu;
  j["memory_bytes"] = {{"weights", p.memory.weights},
                       {"gradients", p.memory.gradients},
                       {"optimizer", p.memory.optimizer},
                       {"activations", p.memory.activations},
                       {"total", p.memory.total()},
                       {"usable", p.memory.capacity},
                       {"host", p.memory.host}};
  j["energy_j"] = p.energy.value;
  j["usd_per_step"] = p.usd_per_step ? nlohmann::ordered_json(*p.usd_per_step) : nullptr;
  j["objective_miss"] = p.objective_miss.empty() ? nlohmann::ordered_json(nullptr)
                                                 : nlohmann::ordered_json(p.objective_miss);
  j["binding"] = binding_sentence(p);
  j["fusions"] = p.fusions;
  return j;
}

void print_infer_table(std::ostream& out,
                       const devices::TaskSpec& task,
                       const std::vector<planner::InferEstimate>& plans,
                       std::size_t top) {
  bool serve = task.mode == devices::Mode::kServe;
  bool generate = task.mode == devices::Mode::kGenerate;
  std::vector<std::string> head = {">#",        "layout",   ">TTFT",     ">TPOT",
                                   ">tokens/s", ">weights", ">KV cache", ">usable",
                                   "objective", ">J/token", ">USD/Mtok"};
  if (generate)
    head.insert(head.begin() + 4, ">latency");
  if (serve)
    head.insert(head.begin() + 4, ">capacity");
  Table t(head);
  for (std::size_t i = 0; i < plans.size() && i < top; ++i) {
    const planner::InferEstimate& p = plans[i];
    bool decode = task.mode == devices::Mode::kDecode;
    std::vector<std::string> row = {
        std::to_string(i + 1),
        p.layout.str(),
        decode ? "-" : secs(p.ttft),
        task.mode == devices::Mode::kPrefill || (generate && p.tpot == 0) ? "-" : secs(p.tpot),
        format_count(p.tokens_per_s),
        bytes(p.weights),
        bytes(p.kv_cache),
        bytes(p.capacity),
        p.meets_objective ? "met" : "missed",
        p.joules_per_token > 0 ? format_number(p.joules_per_token, 3) : "-",
        p.usd_per_million_tokens ? format_number(*p.usd_per_million_tokens, 4) : "-"};
    if (generate)
      row.insert(row.begin() + 4, secs(p.latency));
    if (serve) {
      row.insert(row.begin() + 4,
                 format_number(p.capacity_rate, 3) + " req/s @" + std::to_string(p.capacity_batch));
    }
    t.add_row(row);
  }
  t.print(out);
  if (generate && !plans.empty()) {
    out << "  best: " << plans.front().layout.str() << " prefills its batch of "
        << plans.front().layout.batch << " prompts of " << task.sequence_length << " tokens in "
        << secs(plans.front().ttft) << ", then decodes " << task.output_length
        << " tokens each; tokens/s counts output tokens\n";
  }
  if (serve && !plans.empty()) {
    const planner::InferEstimate& b = plans.front();
    const std::optional<std::int64_t>& chunk = task.serve->prefill_chunk;
    out << "  best: " << b.layout.str() << " serves the offered "
        << format_number(task.serve->request_rate.value, 3) << " req/s spending "
        << pct(b.prefill_share)
        << (chunk ? " of each replica's time on iterations that carry a prompt chunk of " +
                        std::to_string(*chunk) +
                        " tokens (chunked prefill: prompts queue for chunks, every running "
                        "sequence gets a token per iteration)"
                  : std::string(" of each replica's time in prefill (one prompt at a time, "
                                "queued; continuous batching of the decodes)"))
        << "; it sustains up to " << format_number(b.capacity_rate, 3)
        << " req/s within the objective at batch " << b.capacity_batch << "\n"
        << "  TTFT and TPOT are at the offered rate; capacity, tokens/s, J/token and USD/Mtok "
           "at that capacity\n";
  }
}

nlohmann::ordered_json plan_run_json(const planner::PlanEstimate& p,
                                     const devices::TaskSpec& task) {
  nlohmann::ordered_json j = plan_json(p);
  if (std::optional<Run> run = whole_run(p, task)) {
    j["run"] = {{"tokens", *task.training_tokens},
                {"days", run->days},
                {"usd", run->usd ? nlohmann::ordered_json(*run->usd) : nullptr}};
  }
  return j;
}

nlohmann::ordered_json infer_json(const planner::InferEstimate& p) {
  nlohmann::ordered_json j;
  j["layout"] = layout_json(p.layout.str());
  // A decode step has no first token and a prefill no output tokens: null, not 0.
  j["ttft_s"] = p.mode == devices::Mode::kDecode ? nlohmann::ordered_json(nullptr)
                                                 : nlohmann::ordered_json(p.ttft);
  // A static batch of one output token has no decode step either.
  bool no_steps =
      p.mode == devices::Mode::kPrefill || (p.mode == devices::Mode::kGenerate && p.tpot == 0);
  j["tpot_s"] = no_steps ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.tpot);
  j["tokens_per_s"] = p.tokens_per_s;
  if (p.mode == devices::Mode::kServe) {
    j["prefill_share"] = p.prefill_share;
    j["prefill_chunk"] = p.prefill_chunk ? nlohmann::ordered_json(*p.prefill_chunk)
                                         : nlohmann::ordered_json(nullptr);
    j["offered_tokens_per_s"] = p.offered_tokens_per_s;
    j["capacity"] = {{"requests_per_s", p.capacity_rate}, {"batch", p.capacity_batch}};
  }
  if (p.mode == devices::Mode::kGenerate)
    j["latency_s"] = p.latency;
  j["memory_bytes"] = {{"weights", p.weights},
                       {"kv_cache", p.kv_cache},
                       {"workspace", p.workspace},
                       {"usable", p.capacity}};
  j["meets_objective"] = p.meets_objective;
  j["joules_per_token"] = p.joules_per_token;
  j["usd_per_million_tokens"] =
      p.usd_per_million_tokens ? nlohmann::ordered_json(*p.usd_per_million_tokens) : nullptr;
  return j;
}

void print_hetero_infer(std::ostream& out,
                        const devices::TaskSpec& task,
                        const planner::HeteroInferPlan& h) {
  bool serve = task.mode == devices::Mode::kServe;
  bool decode = task.mode == devices::Mode::kDecode;
  bool prefill = task.mode == devices::Mode::kPrefill;
  Table t({"  group", "device", ">devices", serve ? ">requests/s" : ">sequences", "layout", ">TTFT",
           ">TPOT", ">tokens/s", ">weights", ">KV cache", ">usable", "objective"});
  for (const planner::InferShare& g : h.groups) {
    const planner::InferEstimate& p = g.plan;
    t.add_row({"  " + g.group, g.device, std::to_string(g.devices), format_number(g.share, 3),
               p.layout.str(), decode ? "-" : secs(p.ttft), prefill ? "-" : secs(p.tpot),
               format_count(p.tokens_per_s), bytes(p.weights), bytes(p.kv_cache), bytes(p.capacity),
               p.meets_objective ? "met" : "missed"});
  }
  t.print(out);
  out << "  total " << format_count(h.tokens_per_s) << " tokens/s";
  if (!decode)
    out << ", worst TTFT " << secs(h.ttft);
  if (!prefill)
    out << ", worst TPOT " << secs(h.tpot);
  out << "; objective " << (h.meets_objective ? "met by every group" : "missed") << "\n";
  out << "  note: " << h.note << "\n";
}

// What the estimates rest on, per device type: calibrated or peak rates, calibrated or NCCL
// collectives.
std::string model_note(const devices::ClusterSpec& c,
                       const costmodel::CalibrationSet& calibrations,
                       devices::Mode mode) {
  std::string calibrated;
  std::string peak;
  std::string nccl;
  std::vector<const devices::NodeGroup*> groups;
  for (const devices::NodeGroup& g : c.groups)
    groups.push_back(&g);
  std::sort(groups.begin(), groups.end(), [](const auto* a, const auto* b) {
    return std::tie(a->device, a->name) < std::tie(b->device, b->name);
  });  // deterministic whatever the order of the file
  for (const devices::NodeGroup* gp : groups) {
    const devices::NodeGroup& g = *gp;
    std::string& list = calibrations.find_gpu(g.device) ? calibrated : peak;
    const std::string& base = c.device(g).base;
    std::string name = base.empty() ? g.device : g.device + " (" + base + "'s fit)";
    if (list.find(name) == std::string::npos)
      list += (list.empty() ? "" : ", ") + name;
    if (!calibrations.has_collectives(g.device, devices::fabric_name(g.fabric.kind)) &&
        nccl.find(g.device) == std::string::npos) {
      nccl += (nccl.empty() ? "" : ", ") + g.device;
    }
  }
  std::string note;
  if (!calibrated.empty())
    note += "operations calibrated for " + calibrated;
  if (!peak.empty()) {
    note += std::string(note.empty() ? "" : "; ") + "operations at peak rates (uncalibrated) for " +
            peak;
  }
  note += nccl.empty() ? "; collectives calibrated"
                       : "; collectives from NCCL's constants (uncalibrated) for " + nccl;
  return note + " (data/calibration/); " +
         (mode == devices::Mode::kTrain
              ? "`yirage-plan validate-training` measures the step model against recorded runs"
              : "`yirage-plan validate data/benchmarks/*/infer_steps*.csv` measures the "
                "inference model against recorded steps");
}

}  // namespace yirage::report
