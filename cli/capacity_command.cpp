// `yirage-plan capacity CLUSTER TASK --target ...`: the smallest cluster of the template's
// node type that meets a target: training or serving throughput, the task's own latency
// objective (TTFT / TPOT), or a whole training run within a number of days. Searches node
// counts (doubling, then bisecting) with the same planner as the main form. Bisection
// assumes throughput grows with the cluster; where the batch must divide evenly it may not,
// and a smaller cluster between the last miss and the answer can exist.
#include "report/layout_json.h"
#include "report/summary.h"
#include "report/table.h"

#include "cli/context.h"
#include "cli/prices.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "planner/infer_estimate.h"
#include "planner/search.h"

#include <CLI/CLI.hpp>

#include <cmath>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

struct CapacityArgs {
  std::vector<std::string> files;
  std::string tokens_per_s;  // "1e6" tokens per second
  double days = 0;           // a training run within this many days
  bool slo = false;          // the task's own objective (TTFT, TPOT, min throughput)
  std::int64_t max_nodes = 4096;
  double price_per_hour = 0;
};

struct Outcome {
  bool feasible = false;
  bool meets = false;
  double tokens_per_s = 0;
  std::string layout;
};

Outcome evaluate(const devices::ClusterSpec& c,
                 const devices::TaskSpec& t,
                 const costmodel::CalibrationSet& cal,
                 const CapacityArgs& a,
                 double want) {
  Outcome o;
  if (t.mode == devices::Mode::kTrain) {
    planner::TrainContext tc{c, t, cal};
    planner::SearchResult r = planner::search_training(tc);
    if (r.plans.empty())
      return o;
    o.feasible = true;
    o.tokens_per_s = r.plans.front().tokens_per_s;
    o.layout = r.plans.front().layout.str();
    o.meets = o.tokens_per_s >= want;
    return o;
  }
  planner::InferContext ic{c, t, cal};
  planner::InferSearchResult r = planner::search_inference(ic);
  if (r.plans.empty())
    return o;
  o.feasible = true;
  o.tokens_per_s = r.plans.front().tokens_per_s;
  o.layout = r.plans.front().layout.str();
  o.meets = (!a.slo || r.plans.front().meets_objective) && o.tokens_per_s >= want;
  return o;
}

devices::ClusterSpec with_nodes(devices::ClusterSpec c, std::int64_t nodes) {
  c.groups.front().nodes = nodes;
  return c;
}

// The smallest node count of a one-group template that meets the target.
struct Sized {
  bool met = false;
  std::int64_t nodes = 0;
  Outcome hit;   // at `nodes`, when met
  Outcome best;  // the best reached, when not
  std::string why;
};

Sized smallest(const devices::ClusterSpec& tpl,
               const devices::TaskSpec& task,
               const costmodel::CalibrationSet& cal,
               const CapacityArgs& a,
               double want,
               Progress& progress) {
  Sized r;
  // One cluster size evaluated, and reported on the progress line.
  auto at = [&](std::int64_t nodes) {
    Outcome o = evaluate(with_nodes(tpl, nodes), task, cal, a, want);
    progress.step(tpl.groups.front().device + " x " + std::to_string(nodes) +
                  " nodes: " + format_count(o.tokens_per_s) + " tokens/s");
    return o;
  };
  // Double until the target is met, then bisect between the last miss and the first hit.
  std::int64_t lo = 0;
  std::int64_t hi = 1;
  while (true) {
    if (hi > a.max_nodes) {
      r.why = "no cluster of up to " + std::to_string(a.max_nodes) + " nodes of " +
              tpl.groups.front().device + " meets the target";
      if (r.best.feasible) {
        r.why += "; the best reached " + format_count(r.best.tokens_per_s) + " tokens/s (" +
                 r.best.layout + ")";
        if (task.mode == devices::Mode::kTrain) {
          r.why += ": the global batch of " + std::to_string(task.global_batch) +
                   " sequences caps data parallelism";
        }
      }
      return r;
    }
    if (hi > 1 && !tpl.network) {
      r.why = "one node does not meet the target, and the template has no network to grow";
      return r;
    }
    r.hit = at(hi);
    if (r.hit.meets)
      break;
    if (r.hit.feasible && r.hit.tokens_per_s > r.best.tokens_per_s)
      r.best = r.hit;
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    std::int64_t mid = (lo + hi) / 2;
    Outcome o = at(mid);
    if (o.meets) {
      hi = mid;
      r.hit = o;
    } else {
      lo = mid;
    }
  }
  r.met = true;
  r.nodes = hi;
  return r;
}

void print_hit(std::ostream& out,
               const Sized& r,
               const devices::NodeGroup& g,
               const devices::TaskSpec& task,
               const CapacityArgs& a,
               double want) {
  out << "smallest cluster meeting the target: " << r.nodes << (r.nodes == 1 ? " node" : " nodes")
      << " of " << g.devices_per_node << " x " << g.device << " (" << r.nodes * g.devices_per_node
      << " devices)\n";
  out << "  best plan there: " << r.hit.layout << ", " << format_count(r.hit.tokens_per_s)
      << " tokens/s";
  if (want > 0)
    out << " (target " << format_count(want) << ")";
  out << "\n";
  if (a.days > 0) {
    out << "  training run: "
        << devices::format_number(*task.training_tokens / r.hit.tokens_per_s / 86400, 3)
        << " days\n";
  }
}

// One node type's answer, for --json: its size where it meets the target, else the best it
// reached.
nlohmann::ordered_json node_type_json(const devices::ClusterSpec& tpl,
                                      const devices::NodeGroup& g,
                                      const Sized& r,
                                      const devices::TaskSpec& task) {
  nlohmann::ordered_json j;
  j["device"] = g.device;
  j["devices_per_node"] = g.devices_per_node;
  j["meets_target"] = r.met;
  const Outcome& o = r.met ? r.hit : r.best;
  j["nodes"] = r.met ? nlohmann::ordered_json(r.nodes) : nullptr;
  j["devices"] = r.met ? nlohmann::ordered_json(r.nodes * g.devices_per_node) : nullptr;
  j["tokens_per_s"] = o.feasible ? nlohmann::ordered_json(o.tokens_per_s) : nullptr;
  j["layout"] = o.feasible ? layout_json(o.layout) : nlohmann::ordered_json(nullptr);
  const devices::DeviceSpec& d = tpl.device(g);
  double n = static_cast<double>(r.nodes * g.devices_per_node);
  std::optional<double> price = tpl.price_per_hour(g);
  j["power_w"] = r.met && d.tdp ? nlohmann::ordered_json(d.tdp->value.value * n) : nullptr;
  j["usd_per_hour"] = r.met && price ? nlohmann::ordered_json(*price * n) : nullptr;
  j["run_days"] = r.met && task.training_tokens && o.tokens_per_s > 0
                      ? nlohmann::ordered_json(*task.training_tokens / o.tokens_per_s / 86400)
                      : nullptr;
  if (!r.met)
    j["why"] = r.why.empty() ? "does not meet the target" : r.why;
  return j;
}

// The capacity document: the target, every node type sized, and the one chosen (null: none
// meets the target, `no_answer` says why).
nlohmann::ordered_json capacity_json(const devices::ClusterSpec& tpl,
                                     const devices::TaskSpec& task,
                                     const CapacityArgs& a,
                                     double want,
                                     nlohmann::ordered_json types,
                                     const std::string& chosen,
                                     const std::string& ranked_by) {
  nlohmann::ordered_json j = {{"cluster", tpl.name}, {"task", task.name}};
  j["target"] = {{"tokens_per_s", want > 0 ? nlohmann::ordered_json(want) : nullptr},
                 {"days", a.days > 0 ? nlohmann::ordered_json(a.days) : nullptr},
                 {"slo", a.slo}};
  j["node_types"] = std::move(types);
  j["chosen"] = chosen.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(chosen);
  j["ranked_by"] = ranked_by;
  return j;
}

// A template of several node groups offers several node types: each is sized on its own
// (its node shape, the template's network) and the cheapest that meets the target wins: by
// price per hour where every candidate has one, else by power at TDP (said so).
int capacity_by_type(Context& cx,
                     const devices::ClusterSpec& tpl,
                     const devices::TaskSpec& task,
                     const costmodel::CalibrationSet& cal,
                     const CapacityArgs& a,
                     double want,
                     Progress& progress) {
  std::vector<const devices::NodeGroup*> groups = devices::groups_by_device(tpl);

  struct Candidate {
    const devices::NodeGroup* group;
    Sized sized;
    double power = 0;  // W at TDP, 0 if unknown
    std::optional<double> price;
  };

  std::vector<Candidate> met;
  nlohmann::ordered_json types = nlohmann::ordered_json::array();
  Table t(
      {"node type", ">nodes", ">devices", ">tokens/s", "best plan", ">power at TDP", ">USD/hour"});
  for (const devices::NodeGroup* g : groups) {
    Sized r = smallest(devices::with_group_alone(tpl, *g), task, cal, a, want, progress);
    const devices::DeviceSpec& d = tpl.device(*g);
    types.push_back(node_type_json(tpl, *g, r, task));
    if (!r.met) {
      t.add_row({std::to_string(g->devices_per_node) + " x " + g->device, "-", "-",
                 r.best.feasible ? format_count(r.best.tokens_per_s) : "-", "does not meet it", "-",
                 "-"});
      continue;
    }
    double n = static_cast<double>(r.nodes * g->devices_per_node);
    Candidate c{g, r, d.tdp ? d.tdp->value.value * n : 0, std::nullopt};
    if (std::optional<double> price = tpl.price_per_hour(*g))
      c.price = *price * n;
    t.add_row({std::to_string(g->devices_per_node) + " x " + g->device, std::to_string(r.nodes),
               std::to_string(r.nodes * g->devices_per_node), format_count(r.hit.tokens_per_s),
               r.hit.layout, c.power > 0 ? devices::format(devices::Watts{c.power}) : "-",
               c.price ? devices::format_number(*c.price, 4) : "-"});
    met.push_back(c);
  }
  if (met.empty()) {
    std::string why = "no node type of the template meets the target within " +
                      std::to_string(a.max_nodes) + " nodes";
    if (cx.structured()) {
      nlohmann::ordered_json j = capacity_json(tpl, task, a, want, types, "", "none");
      j["no_answer"] = why;
      int rc = write_document(cx, "capacity", j);
      return rc == kExitOk ? kExitNoAnswer : rc;
    }
    cx.out << "node types of " << tpl.name << ", each sized alone:\n";
    t.print(cx.out);
    cx.out << why << "\n";
    return kExitNoAnswer;
  }
  // By price where every candidate has one, else by power at TDP where every one has that,
  // else by device count.
  bool priced = std::all_of(met.begin(), met.end(), [](const Candidate& c) { return c.price; });
  bool powered =
      std::all_of(met.begin(), met.end(), [](const Candidate& c) { return c.power > 0; });
  auto devices_of = [](const Candidate& c) {
    return c.sized.nodes * c.group->devices_per_node;
  };
  // Equally cheap: the faster first.
  auto cheaper = [&](const Candidate& x, const Candidate& y) {
    double cx = priced ? *x.price : powered ? x.power : static_cast<double>(devices_of(x));
    double cy = priced ? *y.price : powered ? y.power : static_cast<double>(devices_of(y));
    if (cx != cy)
      return cx < cy;
    return x.sized.hit.tokens_per_s > y.sized.hit.tokens_per_s;
  };
  const Candidate& best = *std::min_element(met.begin(), met.end(), cheaper);
  if (cx.structured()) {
    return write_document(cx, "capacity",
                          capacity_json(tpl, task, a, want, types, best.group->device,
                                        priced    ? "price"
                                        : powered ? "power"
                                                  : "devices"));
  }
  cx.out << "node types of " << tpl.name << ", each sized alone:\n";
  t.print(cx.out);
  cx.out << (priced    ? "cheapest by price per hour: "
             : powered ? "cheapest by power at TDP (no published price for every type): "
                       : "fewest devices (neither a price nor a TDP for every type): ");
  print_hit(cx.out, best.sized, *best.group, task, a, want);
  return kExitOk;
}

int capacity(Context& cx, const CapacityArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  devices::ClusterSpec tpl = cx.load_cluster(a.files[0], registry);
  devices::TaskSpec task = cx.load_task(a.files[1]);
  if (std::string why = apply_prices(a.price_per_hour, tpl, task); !why.empty()) {
    cx.err << why << "\n";
    return kExitBadInput;
  }
  double want = 0;
  if (!a.tokens_per_s.empty()) {
    devices::ParsedQuantity q = devices::parse_quantity(a.tokens_per_s + " tok/s");
    if (!q.error.empty()) {
      cx.err << "error: --tokens-per-s: " << q.error << "\n";
      return kExitBadInput;
    }
    want = q.value;
  }
  if (a.days > 0) {
    if (task.mode != devices::Mode::kTrain || !task.training_tokens) {
      cx.err << "error: --days needs a training task with training_tokens\n";
      return kExitBadInput;
    }
    want = std::max(want, *task.training_tokens / (a.days * 86400));
  }
  if (want <= 0 && !a.slo) {
    cx.err << "error: give a target: --tokens-per-s N, --days N (training) or --slo\n";
    return kExitBadInput;
  }
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  cal.inherit_derived(tpl.device_types);
  if (tpl.total_nodes() > 1 && !tpl.network) {
    cx.err << "error: the template needs a network to grow beyond one node\n";
    return kExitBadInput;
  }
  Progress progress(cx.err, "capacity", cx.err_is_terminal);
  if (tpl.groups.size() == 1) {
    Sized r = smallest(tpl, task, cal, a, want, progress);
    if (cx.structured()) {
      nlohmann::ordered_json types =
          nlohmann::ordered_json::array({node_type_json(tpl, tpl.groups.front(), r, task)});
      nlohmann::ordered_json j = capacity_json(tpl, task, a, want, types,
                                               r.met ? tpl.groups.front().device : "", "one type");
      if (!r.met)
        j["no_answer"] = r.why;
      int rc = write_document(cx, "capacity", j);
      return rc != kExitOk ? rc : r.met ? kExitOk : kExitNoAnswer;
    }
    if (!r.met) {
      cx.out << r.why << "\n";
      return kExitNoAnswer;
    }
    print_hit(cx.out, r, tpl.groups.front(), task, a, want);
    return kExitOk;
  }
  return capacity_by_type(cx, tpl, task, cal, a, want, progress);
}
}  // namespace

void add_capacity_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "capacity",
      "The smallest cluster of a template's node type (or the cheapest of its types) that "
      "meets a target");
  auto a = std::make_shared<CapacityArgs>();
  cmd->add_option("CLUSTER TASK", a->files, "Cluster template and task files")
      ->expected(2)
      ->required();
  cmd->add_option("--tokens-per-s", a->tokens_per_s, "Throughput target, e.g. 1e6");
  cmd->add_option("--days", a->days, "Finish the task's training_tokens within this many days");
  cmd->add_flag("--slo", a->slo, "Meet the task's own objective (TTFT, TPOT, min_throughput)");
  // Bounded so that a cluster of the template's nodes stays within the device count a
  // cluster file may give (devices/support/yaml_reader.h, kMaxWholeNumber).
  cmd->add_option("--max-nodes", a->max_nodes, "Largest cluster to consider")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000}))
      ->capture_default_str();
  add_price_option(*cmd, &a->price_per_hour);
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return capacity(cx, *a);
    };
  });
}

}  // namespace yirage::cli
