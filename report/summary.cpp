#include "report/summary.h"

#include "report/table.h"

#include "planner/workload/memory_floor.h"
#include "planner/workload/model_size.h"

#include <cmath>

namespace yirage::report {

using devices::ClusterSpec;
using devices::DeviceSpec;
using devices::format;
using devices::format_number;
using devices::NodeGroup;
using devices::TaskSpec;

std::string format_count(double n) {
  struct Scale {
    double factor;
    const char* word;
  };

  for (Scale s : {Scale{1e12, "trillion"}, Scale{1e9, "billion"}, Scale{1e6, "million"}}) {
    if (std::fabs(n) >= s.factor)
      return format_number(n / s.factor) + " " + s.word;
  }
  return format_number(n);
}

ClusterTotals cluster_totals(const ClusterSpec& c) {
  ClusterTotals t;
  double power = 0;
  bool all_powered = true;
  for (const NodeGroup& g : c.groups) {
    const DeviceSpec& d = c.device(g);
    auto n = static_cast<double>(g.devices());
    t.bf16 += n * d.peak_rate(devices::DType::kBf16).value_or(devices::FlopsPerSec{}).value;
    t.memory += n * d.memory_capacity.value.value;
    t.bandwidth += n * d.memory_bandwidth.value.value;
    if (d.tdp)
      power += n * d.tdp->value.value;
    all_powered = all_powered && d.tdp.has_value();
  }
  if (all_powered)
    t.power = power;
  t.price = c.usd_per_hour();
  return t;
}

namespace {

std::string fabric_text(const NodeGroup& g) {
  if (g.fabric.kind == devices::FabricKind::kNone || g.devices_per_node == 1)
    return "-";
  return devices::fabric_name(g.fabric.kind) + " " + format(g.fabric.bandwidth) + ", " +
         format(g.fabric.latency);
}

void print_groups(std::ostream& out, const ClusterSpec& c) {
  Table t({"  group", "device", ">nodes", ">per node", ">devices", "fabric (per device)", "NIC"});
  for (const NodeGroup& g : c.groups) {
    devices::BytesPerSec nic = c.nic_bandwidth(g);
    t.add_row({"  " + g.name, g.device, std::to_string(g.nodes), std::to_string(g.devices_per_node),
               std::to_string(g.devices()), fabric_text(g),
               nic.value > 0 ? devices::format_bit_rate(nic) : "-"});
  }
  t.print(out);
}

void print_totals(std::ostream& out, const ClusterSpec& c) {
  ClusterTotals t = cluster_totals(c);
  out << "  devices: " << c.total_devices() << " in " << c.total_nodes()
      << (c.total_nodes() == 1 ? " node" : " nodes") << "\n";
  out << "  peak bf16 (dense): " << devices::format_quantity(t.bf16, devices::Dim::kFlopsPerSec)
      << " in all\n";
  out << "  device memory: " << devices::format_quantity(t.memory, devices::Dim::kBytes)
      << " in all, " << devices::format_quantity(t.bandwidth, devices::Dim::kBytesPerSec) << "\n";
  out << "  power: "
      << (t.power ? devices::format_quantity(*t.power, devices::Dim::kWatts) + " TDP in all"
                  : std::string("not known (a device type has no published TDP)"))
      << "\n";
  out << "  price: "
      << (t.price ? devices::format_quantity(*t.price, devices::Dim::kUsdPerHour)
                  : std::string("not known (give the node group a `price`, the device a "
                                "`price`, or pass --price-per-hour)"))
      << "\n";
}

}  // namespace

void print_cluster(std::ostream& out, const ClusterSpec& c) {
  out << "cluster " << c.name << "  (" << c.loc.file << ")\n";
  print_groups(out, c);
  if (c.network) {
    const devices::Network& n = *c.network;
    out << "  network: " << devices::topology_name(n.topology) << ", "
        << devices::format_bit_rate(n.nic_bandwidth) << " per device, " << format(n.latency)
        << ", oversubscription " << format_number(n.oversubscription) << ":1\n";
  } else {
    out << "  network: none (one node)\n";
  }
  print_totals(out, c);
}

std::string architecture_text(const devices::ModelSpec& m) {
  std::string s = std::to_string(m.layers) + " layers, hidden " + std::to_string(m.hidden) + ", " +
                  std::to_string(m.heads) + " heads";
  if (m.mla) {
    s += " (MLA, KV rank " + std::to_string(m.mla->kv_lora_rank) + ")";
  } else {
    s += " (" + std::to_string(m.kv_heads) + " KV, head dim " + std::to_string(m.head_dim) + ")";
  }
  if (m.ffn > 0) {
    s +=
        ", FFN " + std::to_string(m.ffn) + (m.ffn_kind == devices::FfnKind::kGated ? " gated" : "");
  }
  if (m.moe) {
    s += ", " + std::to_string(m.moe->experts) + " experts of " +
         std::to_string(m.moe->expert_ffn) + " (top " + std::to_string(m.moe->top_k);
    if (m.moe->shared_experts > 0)
      s += ", " + std::to_string(m.moe->shared_experts) + " shared";
    s += ")";
  }
  return s + ", vocab " + std::to_string(m.vocab);
}

namespace {

void print_parameters(std::ostream& out, const TaskSpec& t) {
  planner::ParameterCount p = planner::count_parameters(t.model);
  out << "  parameters: " << format_count(p.total);
  if (t.model.moe)
    out << " in all, " << format_count(p.active) << " active per token";
  if (t.model.published) {
    out << " (published: " << format_count(t.model.published->total);
    if (t.model.published->active > 0)
      out << ", " << format_count(t.model.published->active);
    out << ")";
  }
  out << "\n";
  out << "  weights: "
      << devices::format_quantity(planner::weight_bytes(t.model, t.precision), devices::Dim::kBytes)
      << " at " << devices::dtype_name(t.precision) << "\n";
}

void print_workload(std::ostream& out, const TaskSpec& t) {
  std::int64_t seq = t.mode == devices::Mode::kServe && t.serve
                         ? t.serve->prompt_length + t.serve->output_length
                         : t.sequence_length;
  out << "  FLOPs per token at sequence " << seq << ": forward "
      << devices::format_quantity(planner::forward_flops_per_token(t.model, seq),
                                  devices::Dim::kFlops);
  if (t.mode == devices::Mode::kTrain) {
    out << ", training "
        << devices::format_quantity(planner::training_flops_per_token(t.model, seq),
                                    devices::Dim::kFlops);
  }
  out << "\n  " << devices::mode_name(t.mode) << ": ";
  if (t.mode == devices::Mode::kServe) {
    out << format(t.serve->request_rate) << ", prompt " << t.serve->prompt_length
        << " tokens, output " << t.serve->output_length << " tokens";
  } else if (t.mode == devices::Mode::kGenerate) {
    out << "batch " << t.global_batch << ", prompt " << t.sequence_length << " tokens, output "
        << t.output_length << " tokens";
  } else {
    out << "sequence " << t.sequence_length << ", batch " << t.global_batch << " ("
        << format_count(static_cast<double>(t.sequence_length * t.global_batch)) << " tokens)";
  }
  out << ", " << devices::precision_text(t);
  if (t.mode == devices::Mode::kTrain)
    out << ", " << devices::optimizer_name(t.optimizer);
  out << "\n";
}

}  // namespace

void print_task(std::ostream& out, const TaskSpec& t, const ClusterSpec& c) {
  out << "task " << t.name << "  (" << t.loc.file << ")\n";
  out << "  model " << t.model.name << (t.model_preset.empty() ? " (inline)" : " (preset)") << ": "
      << architecture_text(t.model) << "\n";
  print_parameters(out, t);
  print_workload(out, t);
  planner::MemoryFloor f = planner::memory_floor(t);
  double memory = cluster_totals(c).memory;
  out << "  memory floor: " << devices::format_quantity(f.bytes, devices::Dim::kBytes) << " ("
      << format_number(f.bytes_per_param) << " B per parameter: " << f.what << "), "
      << format_number(100 * f.bytes / memory, 3) << "% of the cluster's "
      << devices::format_quantity(memory, devices::Dim::kBytes) << "\n";
}

void check_fit(const ClusterSpec& c, const TaskSpec& t) {
  std::vector<devices::Diagnostic> problems;
  bool supported = false;
  double memory = 0;
  for (const NodeGroup& g : c.groups) {
    const DeviceSpec& d = c.device(g);
    supported = supported || d.peak_rate(t.precision).has_value();
    memory += static_cast<double>(g.devices()) * d.memory_capacity.value.value;
  }
  if (!supported) {
    problems.push_back(devices::diagnostic_at(
        t.precision_loc,
        "no device of cluster '" + c.name + "' computes in " + devices::dtype_name(t.precision)));
  }
  planner::MemoryFloor f = planner::memory_floor(t);
  if (f.bytes > memory) {
    problems.push_back(devices::diagnostic_at(
        t.model_loc, "model '" + t.model.name + "' needs at least " +
                         devices::format_quantity(f.bytes, devices::Dim::kBytes) + " for its " +
                         f.what + " (" + format_number(f.bytes_per_param) +
                         " B per parameter), but cluster '" + c.name + "' has " +
                         devices::format_quantity(memory, devices::Dim::kBytes) +
                         " of device memory in all"));
  }
  if (!problems.empty())
    throw devices::NoAnswerError(problems);
}

std::string secs(double s) {
  return devices::format(devices::Seconds{s});
}

std::string bytes(double b) {
  return devices::format_quantity(b, devices::Dim::kBytes);
}

std::string pct(double v) {
  return devices::format_number(100 * v, 3) + "%";
}

}  // namespace yirage::report
