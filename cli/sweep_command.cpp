// `yirage-plan sweep CLUSTER TASK [--nodes LO:HI] [--device A,B] [--batch N,M]`: the best
// plan of every scenario (node type x node count x batch) of a cluster template, searched
// in parallel over the cores, as a table, as CSV (--csv) and as an SVG of the Pareto front
// of throughput against cost (--svg). The answers are the main form's: each scenario is
// one search.
#include "report/layout_json.h"
#include "report/pareto.h"
#include "report/plan_report.h"
#include "report/summary.h"
#include "report/sweep.h"
#include "report/table.h"

#include "cli/context.h"
#include "cli/output_file.h"
#include "cli/prices.h"
#include "cli/run.h"
#include "devices/cluster_loader.h"
#include "devices/support/text.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <sstream>
#include <thread>

namespace yirage::cli {

using namespace report;

namespace {

struct SweepArgs {
  std::vector<std::string> files;
  std::string nodes;    // "LO:HI", doubling from LO
  std::string devices;  // "H100-SXM,H200"
  std::string batches;  // "512,1024"
  std::string svg;
  unsigned threads = 0;  // 0: every core
  double price_per_hour = 0;
};

// One node type, count and batch, and the best plan there.
using Scenario = SweepScenario;

struct NodeType {
  devices::ClusterSpec cluster;  // one group: the template's, or with the device swapped
  std::string note;              // how its fabric was built, when not the template's
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep))
    out.push_back(item);
  if (!text.empty() && text.back() == sep)
    out.emplace_back();
  return out;
}

// Parses "A,B,C" of whole numbers of at least 1.
std::string parse_list(const std::string& flag,
                       const std::string& text,
                       std::vector<std::int64_t>* out) {
  for (const std::string& item : split(text, ',')) {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v < 1 || v > 1'000'000'000)
      return flag + ": '" + item + "' is not a whole number from 1 to 10^9";
    out->push_back(v);
  }
  return {};
}

// "LO:HI": LO, 2 LO, 4 LO, ... up to HI, and HI itself.
std::string parse_nodes(const std::string& text, std::vector<std::int64_t>* out) {
  auto colon = text.find(':');
  std::vector<std::int64_t> ends;
  if (colon == std::string::npos)
    return parse_list("--nodes", text, out);
  if (std::string err =
          parse_list("--nodes", text.substr(0, colon) + "," + text.substr(colon + 1), &ends);
      !err.empty()) {
    return err;
  }
  if (ends[0] > ends[1])
    return "--nodes " + text + ": the first count is larger than the last";
  if (ends[1] > 1'000'000)
    return "--nodes " + text + ": at most 1,000,000 nodes";
  for (std::int64_t n : doubling_counts(ends[0], ends[1]))
    out->push_back(n);
  return {};
}

// The node types: each of the template's groups alone, or its first group with each device
// of --device (the fabric rebuilt from that device's own link).
std::string node_types(const devices::ClusterSpec& tpl,
                       const devices::DeviceRegistry& registry,
                       const std::string& names,
                       std::vector<NodeType>* out) {
  if (names.empty()) {
    for (const devices::NodeGroup* g : devices::groups_by_device(tpl))
      out->push_back({devices::with_group_alone(tpl, *g), ""});
    return {};
  }
  const devices::NodeGroup& g = tpl.groups.front();
  for (const std::string& name : split(names, ',')) {
    const devices::DeviceSpec* d = registry.find(name);
    if (d == nullptr) {
      return "--device: unknown device '" + name + "'" +
             devices::did_you_mean(name, registry.all_names()) +
             " (`yirage-plan devices` lists them)";
    }
    NodeType t{tpl, ""};
    t.cluster.groups = {g};
    devices::NodeGroup& ng = t.cluster.groups.front();
    if (d->name != g.device) {
      bool assumed = false;
      std::optional<devices::Fabric> f =
          devices::device_fabric(*d, g.devices_per_node, g.fabric.latency, &assumed);
      if (!f && g.devices_per_node > 1) {
        return "--device " + d->name + ": it has no scale-up link to join " +
               std::to_string(g.devices_per_node) +
               " devices in a node; give a cluster template of its own";
      }
      ng.device = d->name;
      ng.price.reset();  // the template's price was for its own device
      if (f) {
        ng.fabric = *f;
        t.note = d->name + " nodes: " + devices::fabric_name(f->kind) + " at " +
                 devices::format(f->bandwidth) + " per device from its device file" +
                 (assumed ? ", with the template's link latency (the file gives none)" : "");
      }
    }
    t.cluster.device_types = {*d};
    out->push_back(std::move(t));
  }
  return {};
}

// Every scenario, on `threads` threads; each writes only its own slot, so the result does not
// depend on the thread count.
void evaluate_all(std::vector<Scenario>& all,
                  const std::vector<NodeType>& types,
                  const devices::TaskSpec& task,
                  const costmodel::CalibrationSet& cal,
                  unsigned threads) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < all.size(); i = next++)
      evaluate_scenario(all[i], types[all[i].type].cluster, task, cal);
  };
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < threads; ++k)
    pool.emplace_back(work);
  work();
  for (std::thread& t : pool)
    t.join();
}

std::string device_of(const NodeType& t) {
  return t.cluster.groups.front().device;
}

// The scenarios for machines (--json, --yaml, --csv): a row each, null where a scenario has
// no answer or no price.
nlohmann::ordered_json scenarios_json(const std::vector<Scenario>& all,
                                      const std::vector<NodeType>& types) {
  auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const Scenario& s : all) {
    const NodeType& t = types[s.type];
    nlohmann::ordered_json r = {
        {"device", device_of(t)},
        {"nodes", s.nodes},
        {"devices", s.nodes * t.cluster.groups.front().devices_per_node},
        {"batch", s.batch > 0 ? nlohmann::ordered_json(s.batch) : nlohmann::ordered_json(nullptr)}};
    r["layout"] = s.runs ? layout_json(s.layout) : nullptr;
    r["time_s"] = s.runs ? nlohmann::ordered_json(s.time_s) : nullptr;
    r["tokens_per_s"] = s.runs ? nlohmann::ordered_json(s.tokens_per_s) : nullptr;
    r["mfu"] = opt(s.mfu);
    r["usd_per_hour"] = opt(s.usd_per_hour);
    r["usd_per_million_tokens"] = opt(s.usd_per_mtok);
    r["run_days"] = opt(s.days);
    r["run_usd"] = opt(s.run_usd);
    r["pareto"] = s.front;
    r["no_answer"] = s.runs ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.why);
    rows.push_back(r);
  }
  return rows;
}

int sweep(Context& cx, const SweepArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  devices::ClusterSpec tpl = cx.load_cluster(a.files[0], registry);
  devices::TaskSpec task = cx.load_task(a.files[1]);
  if (std::string why = apply_prices(a.price_per_hour, tpl, task); !why.empty()) {
    cx.err << why << "\n";
    return kExitBadInput;
  }
  std::vector<std::int64_t> nodes;
  std::vector<std::int64_t> batches;
  std::vector<NodeType> types;
  std::string err;
  if (a.nodes.empty())
    nodes.push_back(tpl.groups.front().nodes);
  else
    err = parse_nodes(a.nodes, &nodes);
  if (err.empty() && !a.batches.empty()) {
    if (task.mode == devices::Mode::kServe)
      err =
          "--batch does not apply to a serve task: the search chooses its batch for the arrival "
          "rate";
    else
      err = parse_list("--batch", a.batches, &batches);
  }
  if (err.empty())
    err = node_types(tpl, registry, a.devices, &types);
  if (err.empty() && (nodes.size() > 1 || nodes.front() > 1) && !tpl.network)
    err = "the template has no network to join more than one node";
  if (!err.empty()) {
    cx.err << "error: " << err << "\n";
    return kExitBadInput;
  }
  if (batches.empty())
    batches.push_back(0);
  std::vector<Scenario> all;
  for (std::size_t k = 0; k < types.size(); ++k) {
    for (std::int64_t n : nodes) {
      for (std::int64_t b : batches) {
        Scenario s;
        s.type = k;
        s.nodes = n;
        s.batch = b;
        all.push_back(std::move(s));
      }
    }
  }
  if (all.size() > 10'000) {
    cx.err << "error: " << all.size() << " scenarios; at most 10,000 in one sweep\n";
    return kExitBadInput;
  }
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  for (const NodeType& t : types)
    cal.inherit_derived(t.cluster.device_types);
  unsigned threads = a.threads > 0 ? a.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, all.size()));
  auto start = std::chrono::steady_clock::now();
  evaluate_all(all, types, task, cal, threads);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // The Pareto front of throughput against cost per million tokens, over priced answers.
  mark_front(all, SweepCost::kPerMillionTokens);
  std::vector<ParetoPoint> points;  // the SVG's, labelled
  for (const Scenario& s : all) {
    std::optional<double> cost = sweep_cost(s, SweepCost::kPerMillionTokens);
    if (!cost)
      continue;
    std::string device = device_of(types[s.type]);
    points.push_back({*cost, s.tokens_per_s, device,
                      device + " x " + std::to_string(s.nodes) + " nodes" +
                          (s.batch > 0 ? ", batch " + std::to_string(s.batch) : "") + ": " +
                          s.layout});
  }
  bool training = task.mode == devices::Mode::kTrain;

  if (!a.svg.empty()) {
    if (points.empty()) {
      cx.err << "error: --svg: no scenario has both an answer and a price to plot (add "
                "--price-per-hour or a price to the template)\n";
      return kExitNoAnswer;
    }
    std::string title =
        task.name + " on " + tpl.name + ": " + std::to_string(all.size()) + " scenarios";
    if (std::string why =
            write_output(a.svg, pareto_svg(points, title, "USD per million tokens", "tokens/s"));
        !why.empty()) {
      cx.err << "error: --svg: " << why << "\n";
      return kExitBadInput;
    }
  }
  // --json, --yaml or --csv (global): the scenarios for machines, and nothing else on
  // standard output.
  if (cx.structured()) {
    nlohmann::ordered_json j;
    j["cluster"] = tpl.name;
    j["task"] = task.name;
    j["time"] = training ? "step" : task.mode == devices::Mode::kPrefill ? "ttft" : "tpot";
    j["rows"] = scenarios_json(all, types);
    return write_document(cx, "sweep", j);
  }

  cx.out << task.name << " (" << devices::mode_name(task.mode) << ") over " << all.size()
         << (all.size() == 1 ? " scenario" : " scenarios") << " of " << tpl.name << "\n";
  std::vector<std::string> head = {
      "device",
      ">nodes",
      ">devices",
      ">batch",
      "best layout",
      training ? ">step" : (task.mode == devices::Mode::kPrefill ? ">TTFT" : ">TPOT"),
      ">tokens/s"};
  if (training)
    head.emplace_back(">MFU");
  head.insert(head.end(), {">USD/h", ">USD/Mtok"});
  if (training)
    head.emplace_back(">run");
  head.emplace_back(">front");
  Table t(head);
  for (const Scenario& s : all) {
    const NodeType& nt = types[s.type];
    std::int64_t devs = s.nodes * nt.cluster.groups.front().devices_per_node;
    std::string batch = std::to_string(s.batch > 0 ? s.batch : task.global_batch);
    std::string price = s.usd_per_hour ? format_count(*s.usd_per_hour) : "-";
    std::vector<std::string> row = {device_of(nt), std::to_string(s.nodes), std::to_string(devs),
                                    batch, s.runs ? s.layout : s.why};
    row.push_back(s.runs ? devices::format(devices::Seconds{s.time_s}) : "-");
    row.push_back(s.runs ? format_count(s.tokens_per_s) : "-");
    if (training)
      row.push_back(s.mfu ? devices::format_number(100 * *s.mfu, 3) + "%" : "-");
    row.push_back(price);
    row.push_back(s.usd_per_mtok ? devices::format_number(*s.usd_per_mtok, 3) : "-");
    if (training)
      row.push_back(s.days ? devices::format_number(*s.days, 3) + " d" : "-");
    row.push_back(s.front ? "*" : "");
    t.add_row(row);
  }
  t.print(cx.out);
  for (const NodeType& nt : types) {
    if (!nt.note.empty())
      cx.out << "  " << nt.note << "\n";
  }
  devices::ClusterSpec every = tpl;  // every node type, for what the estimates rest on
  every.groups.clear();
  every.device_types.clear();
  for (const NodeType& nt : types) {
    every.groups.push_back(nt.cluster.groups.front());
    every.device_types.push_back(nt.cluster.device_types.front());
  }
  cx.out << "  model: " << model_note(every, cal, task.mode) << "\n";
  if (points.size() < all.size()) {
    cx.out << "  front: over the " << points.size()
           << " scenarios with an answer and a price (USD per million tokens against tokens/s)"
           << "\n";
  } else {
    cx.out << "  front (*): no other scenario has more tokens/s for fewer USD per million "
              "tokens\n";
  }
  if (!a.svg.empty())
    cx.out << "  Pareto front written to " << a.svg << "\n";
  // How long the searches took varies from run to run: on a terminal, beside the answer, as
  // the progress lines (never in pipes, files or tests).
  if (cx.err_is_terminal)
    cx.err << "sweep: " << all.size() << " searches in " << devices::format_number(wall, 3)
           << " s on " << threads << (threads == 1 ? " thread" : " threads") << "\n";

  return kExitOk;
}

}  // namespace

void add_sweep_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "The best plan of every scenario of a cluster template (node types x node counts x "
      "batches), with the Pareto front of throughput against cost");
  auto a = std::make_shared<SweepArgs>();
  cmd->add_option("CLUSTER TASK", a->files, "Cluster template and task files")
      ->expected(2)
      ->required();
  cmd->add_option("--nodes", a->nodes,
                  "Node counts: LO:HI (LO, 2 LO, 4 LO, ... and HI) or a list N,M (default: the "
                  "template's)")
      ->type_name("LO:HI");
  cmd->add_option("--device", a->devices,
                  "Node types: the template's first group with each of these devices (default: "
                  "each of the template's groups)")
      ->type_name("A,B");
  cmd->add_option("--batch", a->batches, "Global batches to try (default: the task's)")
      ->type_name("N,M");
  cmd->add_option("--svg", a->svg,
                  "Write the Pareto front (tokens/s against USD per million "
                  "tokens) as SVG to FILE")
      ->type_name("FILE");
  cmd->add_option("--threads", a->threads, "Threads to search on (default: every core)")
      ->check(CLI::Range(1u, 256u));
  add_price_option(*cmd, &a->price_per_hour);
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return sweep(cx, *a);
    };
  });
}

}  // namespace yirage::cli
