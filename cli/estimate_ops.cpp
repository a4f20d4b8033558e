#include "cli/estimate_ops.h"

#include "report/structured_output.h"
#include "report/table.h"

#include "cli/run.h"
#include "costmodel/calibration.h"
#include "costmodel/gpu_op.h"
#include "devices/support/text.h"

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

std::optional<devices::DType> parse_dtype(const std::string& s) {
  for (devices::DType t : devices::kAllDTypes) {
    if (devices::dtype_name(t) == s)
      return t;
  }
  return std::nullopt;
}

namespace {

using costmodel::KernelEstimate;
using costmodel::OpEstimate;
using devices::format;

void print_kernels(std::ostream& out, const OpEstimate& o) {
  Table t({"  kernel", "tile", ">tiles", ">waves", ">launch", ">ramp-up", ">steady", ">stall",
           ">ramp-down", ">total", "bound"});
  for (const KernelEstimate& k : o.kernels) {
    t.add_row({"  " + k.name, k.tile, std::to_string(k.tiles), std::to_string(k.waves),
               format(k.launch), format(k.ramp_up), format(k.steady), format(k.stall()),
               format(k.ramp_down), format(k.time()), k.bound()});
  }
  t.print(out);
}

void print_op(std::ostream& out, const devices::DeviceSpec& d, const OpEstimate& o) {
  out << o.op << (o.fused ? " (fused)" : "") << " on " << d.name << ": " << format(o.time) << ", "
      << devices::format_quantity(o.flops / o.time.value, devices::Dim::kFlopsPerSec)
      << " achieved, " << devices::format_quantity(o.hbm_bytes, devices::Dim::kBytes)
      << " of HBM traffic, energy " << format(o.energy) << " (at TDP: an upper bound)\n";
  print_kernels(out, o);
}

nlohmann::ordered_json op_json(const OpEstimate& o) {
  nlohmann::ordered_json j;
  j["op"] = o.op;
  j["fused"] = o.fused;
  j["latency_s"] = o.time.value;
  j["energy_j"] = o.energy.value;
  j["flops"] = o.flops;
  j["hbm_bytes"] = o.hbm_bytes;
  for (const KernelEstimate& k : o.kernels) {
    j["kernels"].push_back({{"name", k.name},
                            {"tile", k.tile},
                            {"tiles", k.tiles},
                            {"waves", k.waves},
                            {"launch_s", k.launch.value},
                            {"ramp_up_s", k.ramp_up.value},
                            {"steady_s", k.steady.value},
                            {"stall_s", k.stall().value},
                            {"ramp_down_s", k.ramp_down.value},
                            {"compute_s", k.compute.value},
                            {"memory_s", k.memory.value},
                            {"latency_s", k.time().value},
                            {"bound", k.bound()}});
  }
  return j;
}

std::vector<std::string> op_names() {
  std::vector<std::string> out;
  for (const auto& i : costmodel::gpu_ops())
    out.push_back(i.name);
  return out;
}

}  // namespace

void add_op_options(CLI::App& cmd, OpArgs& a) {
  cmd.add_option("--device", a.device, "Device name (for --op)");
  cmd.add_option("--op", a.op, "Operation (list below)");
  cmd.add_option("--shape", a.shape, "Operation shape (formats below)");
  cmd.add_option("--dtype", a.dtype, "fp32, tf32, bf16, fp16, fp8 or int8")->capture_default_str();
  cmd.add_flag("--causal", a.causal, "Causal attention");
  cmd.add_flag("--unfused", a.unfused, "Price a compound operation unfused (default: fused)");
}

std::string op_help() {
  std::string s = "Operations (--op NAME --shape SHAPE):\n";
  for (const auto& i : costmodel::gpu_ops()) {
    s += "  " + i.name + std::string(16 - std::min<std::size_t>(15, i.name.size()), ' ') + i.shape +
         ": " + i.help + "\n";
  }
  s += "Operations and collectives use the device's calibration in data/calibration/ when\n"
       "there is one (else peak rates and NCCL's constants); --uncalibrated ignores it.";
  return s;
}

int estimate_op(Context& cx, const OpArgs& a) {
  const costmodel::GpuOpInfo* info = costmodel::find_gpu_op(a.op);
  if (info == nullptr) {
    cx.err << "error: unknown operation '" << a.op << "'" << devices::did_you_mean(a.op, op_names())
           << " (operations: " << devices::join_choices(op_names()) << ")\n";
    return kExitBadInput;
  }
  std::optional<devices::DType> dtype = parse_dtype(a.dtype);
  if (!dtype) {
    cx.err << "error: unknown --dtype '" << a.dtype << "'\n";
    return kExitBadInput;
  }
  costmodel::OpShape shape;
  shape.causal = a.causal;
  if (std::string err = costmodel::parse_op_shape(*info, a.shape, &shape); !err.empty()) {
    cx.err << "error: --shape: " << err << "\n";
    return kExitBadInput;
  }
  devices::DeviceRegistry registry = cx.load_registry();
  const devices::DeviceSpec* d = registry.find(a.device);
  if (d == nullptr) {
    cx.err << "error: unknown device '" << a.device << "'"
           << devices::did_you_mean(a.device, registry.all_names()) << "\n";
    return kExitBadInput;
  }
  costmodel::GpuEfficiency eff;
  costmodel::CalibrationSet calibrations =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  if (const costmodel::GpuEfficiency* c = calibrations.find_gpu(d->name); c && !a.uncalibrated) {
    eff = *c;
  }
  std::string why;
  auto chosen = costmodel::estimate_gpu_op(*d, *dtype, eff, *info, shape, !a.unfused, &why);
  if (!chosen) {
    cx.err << "error: " << a.op << " cannot be fused on " << d->name << ": " << why
           << "; use --unfused\n";
    return kExitBadInput;
  }
  if (cx.structured()) {
    return write_document(cx, "operation", op_json(*chosen));
  }
  print_op(cx.out, *d, *chosen);
  if (info->compound) {
    std::string other_why;
    auto other = costmodel::estimate_gpu_op(*d, *dtype, eff, *info, shape, a.unfused, &other_why);
    if (other) {
      print_op(cx.out, *d, *other);
      const OpEstimate& f = chosen->fused ? *chosen : *other;
      const OpEstimate& u = chosen->fused ? *other : *chosen;
      cx.out << "fused vs unfused: " << devices::format_number(u.time.value / f.time.value, 3)
             << "x faster\n";
    } else {
      cx.out << "no fused form: " << other_why << "\n";
    }
  }
  cx.out << "model: " << eff.source << "\n";
  return kExitOk;
}

}  // namespace yirage::cli
