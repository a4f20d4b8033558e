// `yirage-plan estimate`: the cost of one collective on a cluster (and, with --device, of one
// operation on a device), with its breakdown; --json carries latency_s and energy_j.
#include "report/structured_output.h"
#include "report/table.h"

#include "cli/context.h"
#include "cli/estimate_ops.h"
#include "cli/run.h"
#include "costmodel/calibration.h"
#include "costmodel/collective.h"
#include "costmodel/validation.h"
#include "devices/support/text.h"

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

struct EstimateArgs {
  std::string cluster;
  std::string collective;
  std::string size;
  std::int64_t ranks = 0;
  std::int64_t ranks_per_node = 0;
  bool uncalibrated = false;
  OpArgs op;
};

std::optional<costmodel::Collective> parse_collective(const std::string& name) {
  for (costmodel::Collective c : costmodel::all_collectives()) {
    if (costmodel::collective_name(c) == name)
      return c;
  }
  return std::nullopt;
}

std::vector<std::string> collective_names() {
  std::vector<std::string> out;
  for (costmodel::Collective c : costmodel::all_collectives()) {
    out.push_back(costmodel::collective_name(c));
  }
  return out;
}

void print_collective(std::ostream& out,
                      const costmodel::CommGroup& g,
                      const costmodel::CollectiveEstimate& e) {
  using devices::format;
  out << costmodel::collective_name(e.op) << " of "
      << devices::format_quantity(e.bytes, devices::Dim::kBytes) << " over " << e.ranks
      << " ranks (" << g.nodes << (g.nodes == 1 ? " node" : " nodes") << " x " << g.ranks_per_node
      << ", " << g.device << ")\n";
  out << "  latency: " << format(e.latency()) << " = " << format(e.best.latency_term) << " fixed + "
      << format(e.best.bandwidth_term) << " transfer\n";
  out << "  algorithm: " << costmodel::algorithm_name(e.best.algorithm) << ", protocol "
      << costmodel::protocol_name(e.best.protocol) << "; bound by " << e.bound_by << "\n";
  out << "  algbw: " << format(e.alg_bw) << ", busbw: " << format(e.bus_bw) << " (nccl-tests)\n";
  out << "  energy: " << format(e.energy) << " (every rank at TDP: an upper bound)\n";
  out << "  model: "
      << (g.calibration.empty() ? "uncalibrated (NCCL's constants)"
                                : "calibrated by " + g.calibration)
      << "\n";
  if (!e.note.empty())
    out << "  note: " << e.note << "\n";
  Table t({"  candidate", "protocol", ">fixed", ">transfer", ">total"});
  for (const costmodel::CollectiveCandidate& c : e.candidates) {
    t.add_row({"  " + costmodel::algorithm_name(c.algorithm), costmodel::protocol_name(c.protocol),
               format(c.latency_term), format(c.bandwidth_term), format(c.time())});
  }
  t.print(out);
}

nlohmann::ordered_json collective_json(const costmodel::CommGroup& g,
                                       const costmodel::CollectiveEstimate& e) {
  nlohmann::ordered_json j;
  j["collective"] = costmodel::collective_name(e.op);
  j["bytes"] = e.bytes;
  j["ranks"] = e.ranks;
  j["nodes"] = g.nodes;
  j["latency_s"] = e.latency().value;
  j["energy_j"] = e.energy.value;
  j["algorithm"] = costmodel::algorithm_name(e.best.algorithm);
  j["protocol"] = costmodel::protocol_name(e.best.protocol);
  j["fixed_s"] = e.best.latency_term.value;
  j["transfer_s"] = e.best.bandwidth_term.value;
  j["algbw_Bps"] = e.alg_bw.value;
  j["busbw_Bps"] = e.bus_bw.value;
  j["bound_by"] = e.bound_by;
  j["calibration"] = g.calibration;
  return j;
}

int estimate_collective(Context& cx, const EstimateArgs& a) {
  std::optional<costmodel::Collective> op = parse_collective(a.collective);
  if (!op) {
    cx.err << "error: unknown collective '" << a.collective << "'"
           << devices::did_you_mean(a.collective, collective_names())
           << " (collectives: " << devices::join_choices(collective_names()) << ")\n";
    return kExitBadInput;
  }
  devices::ParsedQuantity size = devices::parse_quantity(a.size, devices::Dim::kBytes);
  if (!size.error.empty() || size.value <= 0) {
    cx.err << "error: --size: " << (size.error.empty() ? "must be positive" : size.error) << "\n";
    return kExitBadInput;
  }
  devices::DeviceRegistry registry = cx.load_registry();
  devices::ClusterSpec cluster = cx.load_cluster(a.cluster, registry);
  std::int64_t ranks = a.ranks > 0 ? a.ranks : cluster.total_devices();
  costmodel::CommGroupResult g = costmodel::make_comm_group(
      cluster, ranks, a.ranks_per_node > 0 ? std::optional(a.ranks_per_node) : std::nullopt);
  if (!g.group) {
    cx.err << "error: " << g.reason << "\n";
    return kExitBadInput;
  }
  if (!a.uncalibrated) {
    costmodel::apply_calibration(
        *g.group, costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration"));
  }
  costmodel::CollectiveEstimate e = costmodel::estimate_collective(*g.group, *op, size.value);
  if (cx.json || cx.yaml) {
    write_structured(cx.out, cx.yaml, collective_json(*g.group, e));
  } else {
    print_collective(cx.out, *g.group, e);
  }
  return kExitOk;
}

int run_estimate(Context& cx, const EstimateArgs& a) {
  if (!a.collective.empty()) {
    if (a.cluster.empty() || a.size.empty()) {
      cx.err << "error: --collective needs --cluster FILE and --size SIZE\n";
      return kExitBadInput;
    }
    return estimate_collective(cx, a);
  }
  if (!a.op.op.empty()) {
    OpArgs op = a.op;
    op.uncalibrated = a.uncalibrated;
    return estimate_op(cx, op);
  }
  cx.err << "error: give --collective NAME (with --cluster and --size) or --op NAME (with "
            "--device and --shape); see `yirage-plan estimate --help`\n";
  return kExitBadInput;
}

}  // namespace

void add_estimate_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "estimate", "Estimate one collective on a cluster, or one operation on a device");
  auto a = std::make_shared<EstimateArgs>();
  cmd->add_option("--cluster", a->cluster, "Cluster file (for --collective)");
  cmd->add_option("--collective", a->collective,
                  "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, "
                  "send_recv");
  cmd->add_option("--size", a->size, "Message size per rank, e.g. 256MiB");
  cmd->add_option("--ranks", a->ranks, "Participating devices (default: the whole cluster)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  cmd->add_option("--ranks-per-node", a->ranks_per_node, "At most this many ranks per node")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  cmd->add_flag("--uncalibrated", a->uncalibrated, "Ignore data/calibration/");
  add_op_options(*cmd, a->op);
  cmd->footer(op_help());
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return run_estimate(cx, *a);
    };
  });
}

}  // namespace yirage::cli
