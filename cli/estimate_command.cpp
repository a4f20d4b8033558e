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

#include <array>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

struct EstimateArgs {
  std::string cluster;
  std::string collective;
  std::string size;
  std::string sizes;  // "LO:HI", doubling, as nccl-tests' -b LO -e HI -f 2
  std::string launch = "eager";
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

// `v` with two decimals, as nccl-tests prints times and bandwidths.
std::string fixed2(double v) {
  std::array<char, 48> buf{};
  std::snprintf(buf.data(), buf.size(), "%.2f", v);
  return buf.data();
}

// nccl-tests' name of an element type.
std::string nccl_type(devices::DType t) {
  switch (t) {
    case devices::DType::kFp64:
      return "double";
    case devices::DType::kFp32:
    case devices::DType::kTf32:
      return "float";
    case devices::DType::kBf16:
      return "bfloat16";
    case devices::DType::kFp16:
      return "half";
    case devices::DType::kFp8:
      return "f8e4m3";
    case devices::DType::kInt8:
      return "int8";
  }
  return "?";
}

// The sizes of a sweep: LO, 2 LO, ... up to HI (nccl-tests' -b LO -e HI -f 2).
std::vector<double> sweep_sizes(double lo, double hi) {
  std::vector<double> out;
  for (double s = lo; s <= hi * (1 + 1e-12) && out.size() < 64; s *= 2)
    out.push_back(s);
  return out;
}

// One estimate per size, printed as nccl-tests prints its out-of-place columns.
void print_sweep(std::ostream& out,
                 const costmodel::CommGroup& g,
                 costmodel::Collective op,
                 devices::DType dtype,
                 const std::vector<costmodel::CollectiveEstimate>& rows,
                 const std::string& launch) {
  out << "# " << costmodel::collective_name(op) << " over " << g.ranks << " ranks (" << g.nodes
      << (g.nodes == 1 ? " node" : " nodes") << " x " << g.ranks_per_node << ", " << g.device
      << "), " << launch << " launches; "
      << (g.calibration.empty() ? "uncalibrated (NCCL's constants)"
                                : "calibrated by " + g.calibration)
      << "\n";
  bool reduces = op == costmodel::Collective::kAllReduce ||
                 op == costmodel::Collective::kReduceScatter ||
                 op == costmodel::Collective::kReduce;
  bool rooted = op == costmodel::Collective::kBroadcast || op == costmodel::Collective::kReduce;
  Table t({">size", ">count", "type", "redop", ">root", ">time", ">algbw", ">busbw", "algorithm"});
  t.add_row({"(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", ""});
  double elem = devices::dtype_bytes(dtype);
  for (const costmodel::CollectiveEstimate& e : rows) {
    t.add_row({devices::format_number(e.bytes, 15),
               devices::format_number(std::floor(e.bytes / elem), 15), nccl_type(dtype),
               reduces ? "sum" : "none", rooted ? "0" : "-1", fixed2(e.latency().value * 1e6),
               fixed2(e.alg_bw.value / 1e9), fixed2(e.bus_bw.value / 1e9),
               costmodel::algorithm_name(e.best.algorithm) + "/" +
                   costmodel::protocol_name(e.best.protocol)});
  }
  t.print(out);
}

nlohmann::ordered_json sweep_json(const costmodel::CommGroup& g,
                                  costmodel::Collective op,
                                  const std::vector<costmodel::CollectiveEstimate>& rows,
                                  const std::string& launch) {
  nlohmann::ordered_json j;
  j["collective"] = costmodel::collective_name(op);
  j["ranks"] = g.ranks;
  j["nodes"] = g.nodes;
  j["launch"] = launch;
  j["calibration"] = g.calibration;
  j["rows"] = nlohmann::ordered_json::array();
  for (const costmodel::CollectiveEstimate& e : rows) {
    nlohmann::ordered_json r;
    r["bytes"] = e.bytes;
    r["time_s"] = e.latency().value;
    r["algbw_Bps"] = e.alg_bw.value;
    r["busbw_Bps"] = e.bus_bw.value;
    r["algorithm"] = costmodel::algorithm_name(e.best.algorithm);
    r["protocol"] = costmodel::protocol_name(e.best.protocol);
    j["rows"].push_back(r);
  }
  return j;
}

// "LO:HI" as two positive byte counts, LO <= HI.
std::optional<std::pair<double, double>> parse_sizes(Context& cx, const std::string& text) {
  std::size_t colon = text.find(':');
  if (colon == std::string::npos) {
    cx.err << "error: --sizes: expected LO:HI (e.g. 8B:4GiB), got '" << text << "'\n";
    return std::nullopt;
  }
  devices::ParsedQuantity lo = devices::parse_quantity(text.substr(0, colon), devices::Dim::kBytes);
  devices::ParsedQuantity hi =
      devices::parse_quantity(text.substr(colon + 1), devices::Dim::kBytes);
  for (const auto* q : {&lo, &hi}) {
    if (!q->error.empty() || q->value <= 0) {
      cx.err << "error: --sizes: " << (q->error.empty() ? "sizes must be positive" : q->error)
             << "\n";
      return std::nullopt;
    }
  }
  if (lo.value > hi.value) {
    cx.err << "error: --sizes: " << text << " runs downwards; give LO:HI with LO <= HI\n";
    return std::nullopt;
  }
  return std::pair{lo.value, hi.value};
}

int estimate_collective(Context& cx, const EstimateArgs& a) {
  std::optional<costmodel::Collective> op = parse_collective(a.collective);
  if (!op) {
    cx.err << "error: unknown collective '" << a.collective << "'"
           << devices::did_you_mean(a.collective, collective_names())
           << " (collectives: " << devices::join_choices(collective_names()) << ")\n";
    return kExitBadInput;
  }
  std::optional<costmodel::Launch> launch = costmodel::parse_launch(a.launch);
  if (!launch) {
    cx.err << "error: unknown --launch '" << a.launch << "'"
           << devices::did_you_mean(a.launch, costmodel::launch_names())
           << " (launch styles: " << devices::join_choices(costmodel::launch_names()) << ")\n";
    return kExitBadInput;
  }
  std::optional<devices::DType> dtype = parse_dtype(a.op.dtype);
  if (!dtype) {
    cx.err << "error: unknown --dtype '" << a.op.dtype << "'\n";
    return kExitBadInput;
  }
  std::vector<double> sizes;
  if (!a.sizes.empty()) {
    std::optional<std::pair<double, double>> range = parse_sizes(cx, a.sizes);
    if (!range)
      return kExitBadInput;
    sizes = sweep_sizes(range->first, range->second);
  } else {
    devices::ParsedQuantity size = devices::parse_quantity(a.size, devices::Dim::kBytes);
    if (!size.error.empty() || size.value <= 0) {
      cx.err << "error: --size: " << (size.error.empty() ? "must be positive" : size.error) << "\n";
      return kExitBadInput;
    }
    sizes = {size.value};
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
        *g.group, costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration"),
        *launch);
  }
  std::vector<costmodel::CollectiveEstimate> rows;
  for (double bytes : sizes)
    rows.push_back(costmodel::estimate_collective(*g.group, *op, bytes));
  if (!a.sizes.empty()) {
    if (cx.structured()) {
      if (int rc =
              write_document(cx, "collective_sweep", sweep_json(*g.group, *op, rows, a.launch));
          rc != kExitOk)
        return rc;
    } else {
      print_sweep(cx.out, *g.group, *op, *dtype, rows, a.launch);
    }
  } else if (cx.structured()) {
    nlohmann::ordered_json j = collective_json(*g.group, rows.front());
    j["launch"] = a.launch;
    if (int rc = write_document(cx, "collective", j); rc != kExitOk)
      return rc;
  } else {
    print_collective(cx.out, *g.group, rows.front());
  }
  return kExitOk;
}

int run_estimate(Context& cx, const EstimateArgs& a) {
  if (!a.collective.empty()) {
    if (a.cluster.empty() || a.size.empty() == a.sizes.empty()) {
      cx.err << "error: --collective needs --cluster FILE and one of --size SIZE or --sizes "
                "LO:HI\n";
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
  cmd->add_option("--sizes", a->sizes,
                  "A sweep LO:HI doubling from LO, printed as nccl-tests prints (e.g. 8B:4GiB)");
  cmd->add_option("--launch", a->launch,
                  "How the calls are launched: eager (back to back, as nccl-tests and training "
                  "steps), graph (CUDA-graph replays, as decode steps) or synced (one call "
                  "at a time, waited for)")
      ->capture_default_str();
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
