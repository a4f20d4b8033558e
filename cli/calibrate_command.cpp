// `yirage-plan calibrate MEASURED.csv... -o PATH`: fit the collective model's bandwidth scale
// and extra latency per device and fabric, print the fit, write data/calibration files.
#include "report/table.h"

#include "cli/calibrate_document.h"
#include "cli/context.h"
#include "cli/output_file.h"
#include "cli/run.h"
#include "codegen/cost/program_validation.h"
#include "costmodel/calibration.h"
#include "costmodel/duty_fit.h"
#include "costmodel/overlap_fit.h"
#include "costmodel/sustained_fit.h"
#include "planner/fidelity.h"
#include "planner/layer_validation.h"
#include "planner/step_calibration.h"
#include "planner/step_validation.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <ctime>
#include <map>
#include <optional>
#include <set>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

struct CalibrateArgs {
  std::vector<std::string> files;
  std::string output;
  std::string min_size = "0 B";  // every size: the small calls fit the fixed costs
  std::string steps;             // measured training iterations (vTrain format)
  std::string steps_device;      // the device they ran on
  std::string matrix_steps;      // measured steps of large models (train_steps format)
  std::string duty_from;         // a device whose GEMM duty fit the others without one borrow
};

std::string today() {
  std::time_t now = std::time(nullptr);
  std::array<char, 16> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%d", std::gmtime(&now));
  return buf.data();
}

void print_fits(std::ostream& out, const std::vector<costmodel::CalibrationFit>& fits) {
  Table t({"device", "fabric", "launch", ">ranks", "collective", ">bandwidth scale",
           ">extra latency", ">fit rows", ">held-out MAPE", ">uncalibrated"});
  auto pct = [](double v) {
    return devices::format_number(v, 3) + "%";
  };
  for (const costmodel::CalibrationFit& f : fits) {
    const costmodel::CollectiveCalibration& c = f.calibration;
    std::vector<std::string> key = {c.device, c.fabric, costmodel::launch_name(c.launch),
                                    std::to_string(c.ranks)};
    auto row = [&](std::vector<std::string> rest) {
      std::vector<std::string> cells = key;
      cells.insert(cells.end(), rest.begin(), rest.end());
      t.add_row(cells);
    };
    row({"(shared)", devices::format_number(c.bandwidth_scale, 4), devices::format(c.extra_latency),
         std::to_string(f.fit_rows), pct(f.shared_held_out_mape),
         pct(f.uncalibrated_held_out_mape)});
    for (const auto& [name, fit] : c.per_collective) {
      std::string fill =
          fit.fill_ratio > 0
              ? " (+" + devices::format_number(100 * fit.fill_ratio, 3) + "% on the first " +
                    devices::format_quantity(fit.fill_bytes, devices::Dim::kBytes) +
                    (fit.fill_power != 1 ? ", fading as its share to the power " +
                                               devices::format_number(fit.fill_power, 3)
                                         : "") +
                    ")"
              : "";
      if (fit.issue.value > 0)
        fill += " (at least " + devices::format(fit.issue) + " a call)";
      row({name, devices::format_number(fit.bandwidth_scale, 4) + fill,
           devices::format(fit.extra_latency), "", pct(f.per_collective_held_out_mape.at(name)),
           ""});
    }
    if (!c.per_collective.empty())
      row({"(combined)", "", "", "", pct(f.held_out_mape), ""});
  }
  t.print(out);
}

void print_gpu_fits(std::ostream& out, const std::vector<costmodel::GpuCalibrationFit>& fits) {
  Table t({"device", ">matrix", ">attention", ">memory", ">vector", ">launch", ">host", ">fit rows",
           ">fit MAPE", ">held-out MAPE", ">uncalibrated"});
  auto pct = [](double v) {
    return devices::format_number(v, 3) + "%";
  };
  auto num = [](double v) {
    return devices::format_number(v, 3);
  };
  for (const costmodel::GpuCalibrationFit& f : fits) {
    const costmodel::GpuEfficiency& e = f.efficiency;
    t.add_row({f.device, num(e.matrix), num(e.attention), num(e.memory), num(e.vector),
               devices::format(e.launch), f.steps ? devices::format(e.host) : "-",
               std::to_string(f.fit_rows), f.steps ? "-" : pct(f.fit_mape), pct(f.held_out_mape),
               pct(f.uncalibrated_held_out_mape)});
  }
  t.print(out);
  Table s({"device", "memory-bound kernel", ">traffic / minimal bytes", ">fixed latency",
           ">per element of a row"});
  for (const costmodel::GpuCalibrationFit& f : fits) {
    for (const auto& [kind, fit] : f.efficiency.stream) {
      s.add_row({f.device, kind, num(fit.traffic), devices::format(fit.latency),
                 devices::format(fit.per_column)});
    }
  }
  if (s.rows() > 0)
    s.print(out);
}

void print_layer_fits(std::ostream& out, const std::vector<costmodel::GpuCalibrationFit>& fits) {
  Table t({"device", ">launch in a CUDA graph", ">fit rows", ">held-out rows", ">held-out MAPE"});
  for (const costmodel::GpuCalibrationFit& f : fits) {
    if (!f.layers)
      continue;
    t.add_row({f.device, devices::format(f.layers->graph_launch),
               std::to_string(f.layers->fit_rows), std::to_string(f.layers->held_out_rows),
               devices::format_number(f.layers->held_out_mape, 3) + "%"});
  }
  if (t.rows() == 0)
    return;
  out << "Whole layers (planner's layer model, compound ops unfused): the launch overhead per\n"
         "kernel replayed from a CUDA graph, fitted on half the layer rows.\n";
  t.print(out);
}

void print_block_fits(std::ostream& out, const std::vector<costmodel::GpuCalibrationFit>& fits) {
  Table t({"device", ">cycles a step", ">a k-step of mma", ">a barrier", ">a launch", ">fit rows",
           ">held-out rows", ">held-out MAPE", ">without it"});
  for (const costmodel::GpuCalibrationFit& f : fits) {
    if (!f.block)
      continue;
    const costmodel::BlockLatencyFit& b = *f.block;
    t.add_row({f.device, devices::format_number(b.step_cycles, 3),
               devices::format_number(b.mma_step_cycles, 3),
               devices::format_number(b.barrier_cycles, 3), devices::format(b.launch),
               std::to_string(b.fit_rows), std::to_string(b.held_out_rows),
               devices::format_number(b.held_out_mape, 3) + "%",
               devices::format_number(b.unpriced_mape, 3) + "%"});
  }
  if (t.rows() == 0)
    return;
  out << "Generated kernels (codegen's generic block path): the serial latency of a block\n"
         "program, cycles per dependent step of a thread, per k-step of a warp's matrix-unit tile\n"
         "and per barrier, and the time each kernel of a program adds in a CUDA graph (a\n"
         "launch), fitted on half the program rows.\n";
  t.print(out);
}

// Writes a calibration file per device fitted; `written` gets their paths.
int write_files(Context& cx,
                const CalibrateArgs& a,
                const std::vector<costmodel::CalibrationFit>& fits,
                const std::vector<costmodel::GpuCalibrationFit>& gpu_fits,
                std::vector<std::string>& written) {
  std::set<std::string> devices_seen;
  for (const auto& f : fits) {
    devices_seen.insert(f.calibration.device);
  }
  for (const auto& f : gpu_fits) {
    devices_seen.insert(f.device);
  }
  std::filesystem::path out(a.output);
  bool single = out.extension() == ".yaml";
  if (single && devices_seen.size() != 1) {
    cx.err << "error: -o " << a.output << " names one file, but the data covers "
           << devices_seen.size() << " device types; give a directory\n";
    return kExitBadInput;
  }
  for (const std::string& d : devices_seen) {
    std::filesystem::path path = single ? out : out / file_name_part(d + ".yaml");
    std::string error = write_output(path, costmodel::calibration_yaml(fits, gpu_fits, d, today()));
    if (!error.empty()) {
      cx.err << "error: " << error << "\n";
      return kExitBadInput;
    }
    written.push_back(path.string());
  }
  return kExitOk;
}

// The efficiencies and host issue time of a device without op rows, fitted on whole
// measured training iterations (the even rows; the odd rows held out).
int fit_steps(Context& cx,
              const CalibrateArgs& a,
              const devices::DeviceRegistry& registry,
              const std::vector<costmodel::CalibrationFit>& fits,
              std::vector<costmodel::GpuCalibrationFit>& gpu_fits) {
  const devices::DeviceSpec* d = registry.find(a.steps_device);
  if (a.steps_device.empty()) {
    cx.err << "error: --steps needs --steps-device, the device the iterations ran on\n";
    return kExitBadInput;
  }
  if (d == nullptr) {
    cx.err << "error: --steps-device: unknown device '" << a.steps_device << "'\n";
    return kExitBadInput;
  }
  for (const costmodel::GpuCalibrationFit& g : gpu_fits) {
    if (g.device == d->name) {
      cx.err << "error: " << d->name << " has op rows; --steps fits a device without them\n";
      return kExitBadInput;
    }
  }
  std::vector<planner::TrainingRun> runs = planner::load_training_runs(a.steps);
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  for (const costmodel::CalibrationFit& f : fits)
    cal.add(f.calibration);  // tensor parallelism priced with the collectives just fitted
  cal.add_gpu(d->name, costmodel::GpuEfficiency{});
  planner::FidelityResult peak =
      planner::training_fidelity(runs, d->name, registry, cal, planner::FidelityRows::kHeldOut);
  planner::FidelityResult r =
      planner::training_fidelity(runs, d->name, registry, cal, planner::FidelityRows::kFit);
  std::optional<costmodel::MatrixStepsFit> matrix;
  if (!a.matrix_steps.empty()) {
    // The matrix rate from steps whose time is mostly GEMMs, the rest refitted on the
    // iterations around it, until the two agree.
    devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
    double unfitted = 0;
    for (int round = 0; round < 4; ++round) {
      costmodel::CalibrationSet with = cal;
      with.add_gpu(d->name, r.efficiency);
      auto m = planner::fit_matrix_on_steps(a.matrix_steps, d->name, registry, models, with);
      if (!m) {
        cx.err << "error: --matrix-steps: " << a.matrix_steps
               << " has fewer than 4 rows that ran on " << d->name << "\n";
        return kExitBadInput;
      }
      unfitted = round == 0 ? m->unfitted_mape : unfitted;
      bool settled = std::fabs(m->value - r.efficiency.matrix) < 0.0025;
      matrix = m;
      if (settled)
        break;
      r = planner::training_fidelity(runs, d->name, registry, cal, planner::FidelityRows::kFit,
                                     m->value);
    }
    matrix->unfitted_mape = unfitted;  // the held-out rows at the whole-step fit's efficiencies
    r.efficiency.matrix = matrix->value;
  }
  costmodel::GpuCalibrationFit g;
  g.device = d->name;
  g.efficiency = r.efficiency;
  g.fit_rows = (runs.size() + 1) / 2;
  g.held_out_rows = r.overall.rows;
  g.held_out_mape = r.overall.mape;
  g.uncalibrated_held_out_mape = peak.overall.mape;
  g.fitted_on = costmodel::display_path(a.steps) +
                " (whole training iterations, rows alternating: " + std::to_string(g.fit_rows) +
                " fitted, " + std::to_string(runs.size() - g.fit_rows) + " held out)";
  g.steps = costmodel::StepFit{g.fit_rows, g.held_out_rows, g.held_out_mape, g.fitted_on};
  g.matrix_steps = matrix;
  if (matrix && !cx.structured()) {
    cx.out << d->name << " matrix " << devices::format_number(matrix->value, 3) << " fitted on "
           << matrix->fitted_on << ": held-out MAPE "
           << devices::format_number(matrix->held_out_mape, 3) << "% ("
           << devices::format_number(matrix->unfitted_mape, 3)
           << "% at the matrix fitted on the iterations alone)\n";
  }
  gpu_fits.push_back(std::move(g));
  return kExitOk;
}

// For each device fitted here on op rows, the matrix rate its GEMMs sustain back to back.
void fit_sustained(const std::vector<std::filesystem::path>& files,
                   const devices::DeviceRegistry& registry,
                   std::vector<costmodel::GpuCalibrationFit>& gpu_fits) {
  std::map<std::string, costmodel::GpuEfficiency> op_level;
  for (const costmodel::GpuCalibrationFit& g : gpu_fits)
    op_level.emplace(g.device, g.efficiency);
  std::map<std::string, costmodel::SustainedFit> fits =
      costmodel::fit_sustained(files, registry, op_level);
  for (costmodel::GpuCalibrationFit& g : gpu_fits) {
    auto it = fits.find(g.device);
    if (it != fits.end()) {
      g.sustained = it->second;
      g.efficiency.sustained_matrix = it->second.value;
    }
  }
}

// How each device's GEMMs' clock rises as their duty falls: fitted on its own duty rows, or
// `from`'s fit where one is named for the devices without (the same die at the same power
// limit), said so in its `fitted_on`. False (after the message) where `from` has no rows.
bool duty_by_device(const std::vector<std::filesystem::path>& files,
                    const devices::DeviceRegistry& registry,
                    const std::string& from,
                    costmodel::DutyByDevice& out,
                    std::ostream& err) {
  out.own = costmodel::fit_duty(files, registry);
  if (from.empty())
    return true;
  const devices::DeviceSpec* d = registry.find(from);
  auto it = d != nullptr ? out.own.find(d->name) : out.own.end();
  if (it == out.own.end()) {
    err << "error: --duty-from " << from << ": no duty rows of that device among the files\n";
    return false;
  }
  out.otherwise = it->second;
  out.otherwise_from = d->name;
  return true;
}

// The duty fit of each device fitted here on op rows, as its op fit held it.
void set_duty(const costmodel::DutyByDevice& duty,
              std::vector<costmodel::GpuCalibrationFit>& gpu_fits) {
  for (costmodel::GpuCalibrationFit& g : gpu_fits) {
    const costmodel::DutyFit* d = duty.find(g.device);
    if (d == nullptr)
      continue;
    g.duty = *d;
    if (!duty.own.contains(g.device)) {
      g.duty->fitted_on = "borrowed from " + duty.otherwise_from + ", not measured on " + g.device +
                          ": " + d->fitted_on;
    }
    g.efficiency.duty_slope = d->value;
    g.efficiency.duty_floor = d->floor;
  }
}

// For each device fitted here on op rows, from its measured steps: the optimizer step's
// achieved bandwidth, then (with it) the host's time per operation of eager tensor
// parallelism.
void fit_on_steps(const std::vector<std::filesystem::path>& step_files,
                  const devices::DeviceRegistry& registry,
                  const std::vector<costmodel::CalibrationFit>& fits,
                  std::vector<costmodel::GpuCalibrationFit>& gpu_fits) {
  devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  for (costmodel::GpuCalibrationFit& g : gpu_fits) {
    costmodel::CalibrationSet cal =
        costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
    for (const costmodel::CalibrationFit& f : fits)
      cal.add(f.calibration);
    costmodel::GpuEfficiency e = g.efficiency;
    if (const costmodel::GpuEfficiency* shipped = cal.find_gpu(g.device)) {
      e.graph_launch = shipped->graph_launch;  // what the layer fit sets, if it ran here
      e.host = shipped->host;
    }
    if (g.layers)
      e.graph_launch = g.layers->graph_launch;
    cal.add_gpu(g.device, e);
    g.optimizer = planner::fit_optimizer(step_files, g.device, registry, models, cal);
    if (g.optimizer) {
      g.efficiency.optimizer = e.optimizer = g.optimizer->value;
      cal.add_gpu(g.device, e);
    }
    g.eager_tp = planner::fit_eager_tp_host(step_files, g.device, registry, models, cal);
    if (g.eager_tp)
      g.efficiency.eager_tp_host = e.eager_tp_host = g.eager_tp->host;
    g.megatron_host = planner::fit_megatron_host(step_files, g.device, registry, models, cal);
    if (g.megatron_host) {
      g.efficiency.megatron_host = e.megatron_host = g.megatron_host->host;
      g.efficiency.megatron_op_host = e.megatron_op_host = g.megatron_host->op_host;
      cal.add_gpu(g.device, e);
    }
    g.megatron_pp_sync = planner::fit_megatron_pp_sync(step_files, g.device, registry, models, cal);
    if (g.megatron_pp_sync) {
      g.efficiency.megatron_pp_sync = e.megatron_pp_sync = g.megatron_pp_sync->host;
      cal.add_gpu(g.device, e);
    }
    g.megatron_dp_overlap =
        planner::fit_megatron_dp_overlap(step_files, g.device, registry, models, cal);
    if (g.megatron_dp_overlap)
      g.efficiency.megatron_dp_overlap_cost = g.megatron_dp_overlap->value;
    g.allocator = planner::fit_allocator_cache(step_files, g.device, registry, models);
    if (g.allocator)
      g.efficiency.allocator_cache = g.allocator->value;
    g.megatron_allocator =
        planner::fit_allocator_cache(step_files, g.device, registry, models, true);
    if (g.megatron_allocator)
      g.efficiency.megatron_allocator_cache = g.megatron_allocator->value;
  }
}

// The devices' fits of one constant held in `GpuCalibrationFit::*which`, one row each: the
// constant as `value` prints it, the rows fitted and held out, the held-out error with it and
// without it (`baseline`, named by the last header), after `intro`.
template <class Fit, class Value, class Baseline>
void print_held_out_fits(std::ostream& out,
                         const std::vector<costmodel::GpuCalibrationFit>& fits,
                         std::optional<Fit> costmodel::GpuCalibrationFit::*which,
                         const std::string& value_header,
                         const std::string& baseline_header,
                         const char* intro,
                         Value value,
                         Baseline baseline) {
  Table t({"device", ">" + value_header, ">fit rows", ">held-out rows", ">held-out MAPE",
           ">" + baseline_header});
  for (const costmodel::GpuCalibrationFit& f : fits) {
    if (!(f.*which))
      continue;
    const Fit& o = *(f.*which);
    t.add_row({f.device, value(o), std::to_string(o.fit_rows), std::to_string(o.held_out_rows),
               devices::format_number(o.held_out_mape, 3) + "%",
               devices::format_number(baseline(o), 3) + "%"});
  }
  if (t.rows() == 0)
    return;
  out << intro;
  t.print(out);
}

// The constants fitted on measurements other than op rows: collectives beside GEMMs, the
// optimizer phases and tensor-parallel rows of measured steps, their reserve, and GEMMs back
// to back.
void print_measured_fits(std::ostream& out, const std::vector<costmodel::GpuCalibrationFit>& fits) {
  auto number = [](double v) {
    return devices::format_number(v, 3);
  };
  using Fit = costmodel::GpuCalibrationFit;
  print_held_out_fits(
      out, fits, &Fit::overlap, "wait", "as if alone",
      "Collectives beside GEMMs (bench/overlap.py): the delay until the running GEMM ends on\n"
      "every rank, as a fraction of r / (r + 1) of its duration, fitted on half.\n",
      [&](const costmodel::OverlapFit& o) { return number(o.wait); },
      [](const costmodel::OverlapFit& o) { return o.unpriced_mape; });
  print_held_out_fits(
      out, fits, &Fit::optimizer, "of peak HBM", "at `memory`",
      "The optimizer step (measured optimizer phases: clipping and the fused step): the\n"
      "fraction of peak HBM bandwidth its multi-tensor kernels reach, fitted on half.\n",
      [&](const costmodel::OptimizerFit& o) { return number(o.value); },
      [](const costmodel::OptimizerFit& o) { return o.unfitted_mape; });
  print_held_out_fits(
      out, fits, &Fit::eager_tp, "host per operation", "without it",
      "Eager tensor parallelism (whole measured steps): the host's time per operation that\n"
      "DTensor dispatches, fitted on half the tensor-parallel rows.\n",
      [](const costmodel::EagerTpHostFit& e) { return devices::format(e.host); },
      [](const costmodel::EagerTpHostFit& e) { return e.unpriced_mape; });
  print_held_out_fits(
      out, fits, &Fit::megatron_host, "host per module call / plain op", "without it",
      "Megatron-LM (whole steps measured under Megatron-Core): the host's time per kernel its\n"
      "Python issues from a module's call and from a plain PyTorch operation inside one,\n"
      "fitted together on half the rows.\n",
      [](const costmodel::EagerTpHostFit& e) {
        return devices::format(e.host) + " / " + devices::format(e.op_host);
      },
      [](const costmodel::EagerTpHostFit& e) { return e.unpriced_mape; });
  print_held_out_fits(
      out, fits, &Fit::megatron_pp_sync, "idle per exchange", "without it",
      "Megatron-LM's pipelines (whole steps measured under Megatron-Core): the GPU's idle time\n"
      "after each point-to-point exchange, which synchronises the device, fitted on half the\n"
      "pipelined rows.\n",
      [](const costmodel::EagerTpHostFit& e) { return devices::format(e.host); },
      [](const costmodel::EagerTpHostFit& e) { return e.unpriced_mape; });
  print_held_out_fits(
      out, fits, &Fit::megatron_dp_overlap, "cost of overlap", "overlap free",
      "Megatron-LM's data parallelism (whole steps measured under Megatron-Core): the share of\n"
      "the gradient buckets' time beside the backward that the step still pays, fitted on half\n"
      "the layouts measured with and without overlap on one machine (rows: pairs; error: the\n"
      "priced saving's against the measured one, over the step).\n",
      [&](const costmodel::DpOverlapFit& a) { return number(a.value); },
      [](const costmodel::DpOverlapFit& a) { return a.unfitted_mape; });
  print_held_out_fits(
      out, fits, &Fit::allocator, "cache", "without it",
      "The caching allocator (measured steps without FSDP2): what it reserves beyond the\n"
      "allocated peak, as a fraction of it, fitted on half (beside two copies of the logits\n"
      "under tensor parallelism; without it: the allocated peak alone).\n",
      [&](const costmodel::AllocatorFit& a) { return number(a.value); },
      [](const costmodel::AllocatorFit& a) { return a.unfitted_mape; });
  print_held_out_fits(
      out, fits, &Fit::megatron_allocator, "cache", "without it",
      "The caching allocator under Megatron-LM (whole steps measured under Megatron-Core): the\n"
      "same fraction, fitted on half of those rows.\n",
      [&](const costmodel::AllocatorFit& a) { return number(a.value); },
      [](const costmodel::AllocatorFit& a) { return a.unfitted_mape; });
  print_held_out_fits(
      out, fits, &Fit::sustained, "sustained", "in bursts",
      "GEMMs back to back (bench/sustained.py): the matrix rate a step sustains over the op\n"
      "model's, fitted on half; steps price GEMMs and attention at it.\n",
      [&](const costmodel::SustainedFit& f) { return number(f.value); },
      [](const costmodel::SustainedFit& f) { return f.unfitted_mape; });
  print_held_out_fits(
      out, fits, &Fit::duty, "slope/floor", "back to back",
      "GEMMs between memory-bound kernels (bench/duty.py): the GEMM time at a duty over the\n"
      "time back to back, max(floor, 1 - slope x (1 - duty)), fitted on half; steps price\n"
      "their GEMMs at their layers' duty.\n",
      [&](const costmodel::DutyFit& f) { return number(f.value) + "/" + number(f.floor); },
      [](const costmodel::DutyFit& f) { return f.unfitted_mape; });
}

// The files given, by kind: op, collective, layer and program rows, and the bench scripts' own.
struct Inputs {
  std::vector<costmodel::MeasuredFile> rows;
  std::vector<std::filesystem::path> steps;      // whole training steps (train_steps*.csv)
  std::vector<std::filesystem::path> overlap;    // bench/overlap.py's overlap*.csv
  std::vector<std::filesystem::path> sustained;  // bench/sustained.py's sustained*.csv
  std::vector<std::filesystem::path> duty;       // bench/duty.py's duty*.csv
};

Inputs sort_inputs(const std::vector<std::string>& names) {
  Inputs in;
  for (const std::string& f : names) {
    if (planner::is_measured_steps_file(f))
      in.steps.emplace_back(f);
    else if (costmodel::is_overlap_file(f))
      in.overlap.emplace_back(f);
    else if (costmodel::is_sustained_file(f))
      in.sustained.emplace_back(f);
    else if (costmodel::is_duty_file(f))
      in.duty.emplace_back(f);
    else
      in.rows.push_back(costmodel::load_measured(f));
  }
  return in;
}

// For each device fitted here on op rows, the wait of a collective launched beside a GEMM.
void fit_overlap(const std::vector<std::filesystem::path>& files,
                 const devices::DeviceRegistry& registry,
                 std::vector<costmodel::GpuCalibrationFit>& gpu_fits) {
  std::map<std::string, costmodel::OverlapFit> overlap = costmodel::fit_overlap(files, registry);
  for (costmodel::GpuCalibrationFit& g : gpu_fits) {
    auto it = overlap.find(g.device);
    if (it != overlap.end()) {
      g.overlap = it->second;
      g.efficiency.overlap_wait = it->second.wait;
    }
  }
}

int calibrate(Context& cx, const CalibrateArgs& a) {
  if (!a.matrix_steps.empty() && a.steps.empty()) {
    cx.err << "error: --matrix-steps needs --steps, the iterations that fit the rest of the "
              "device's efficiencies\n";
    return kExitBadInput;
  }
  devices::ParsedQuantity min = devices::parse_quantity(a.min_size, devices::Dim::kBytes);
  if (!min.error.empty()) {
    cx.err << "error: --min-size: " << min.error << "\n";
    return kExitBadInput;
  }
  Inputs in = sort_inputs(a.files);
  std::vector<costmodel::MeasuredFile>& files = in.rows;
  devices::DeviceRegistry registry = cx.load_registry();
  auto fits = costmodel::fit_collectives(files, registry, min.value);
  costmodel::DutyByDevice duty;
  if (!duty_by_device(in.duty, registry, a.duty_from, duty, cx.err))
    return kExitBadInput;
  auto gpu_fits = costmodel::fit_gpu_ops(files, registry, duty);
  costmodel::CalibrationSet fitted;  // the collectives just fitted price tensor parallelism
  for (const costmodel::CalibrationFit& f : fits)
    fitted.add(f.calibration);
  planner::fit_graph_launch(files, registry, devices::ModelRegistry::load_bundled(), &fitted,
                            gpu_fits);
  codegen::fit_block_latency(files, registry, gpu_fits);
  if (!a.steps.empty()) {
    if (int rc = fit_steps(cx, a, registry, fits, gpu_fits); rc != kExitOk)
      return rc;
  }
  fit_sustained(in.sustained, registry, gpu_fits);
  set_duty(duty, gpu_fits);
  fit_overlap(in.overlap, registry, gpu_fits);
  if (!in.steps.empty())
    fit_on_steps(in.steps, registry, fits, gpu_fits);
  if (fits.empty() && gpu_fits.empty()) {
    cx.err << "error: nothing to fit: no op rows and no single-node collective rows of "
           << a.min_size << " or more\n";
    return kExitBadInput;
  }
  std::vector<std::string> written;
  if (!a.output.empty()) {
    if (int rc = write_files(cx, a, fits, gpu_fits, written); rc != kExitOk)
      return rc;
  }
  if (cx.structured()) {
    nlohmann::ordered_json j;
    j["files"] = a.files;
    j["written"] = written;
    j["rows"] = calibration_rows(fits, gpu_fits);
    return write_document(cx, "calibration", j);
  }
  if (!fits.empty()) {
    cx.out << "Collectives: NCCL-model time with the fabric bandwidth x scale, plus an extra\n"
              "latency per call; fitted on half the rows (alternating by size), checked on the "
              "others.\n";
    print_fits(cx.out, fits);
  }
  if (!gpu_fits.empty()) {
    cx.out << "Operations: achievable fractions of peak (matrix units in GEMMs and in attention,\n"
              "HBM, vector units) and a launch overhead; fitted on the same half.\n";
    print_gpu_fits(cx.out, gpu_fits);
    print_layer_fits(cx.out, gpu_fits);
    print_block_fits(cx.out, gpu_fits);
    print_measured_fits(cx.out, gpu_fits);
  }
  for (const std::string& path : written)
    cx.out << "wrote " << path << "\n";
  return kExitOk;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit the collective and operation models to measured timings; write calibration files");
  auto a = std::make_shared<CalibrateArgs>();
  cmd->add_option("MEASURED", a->files,
                  "Measured CSV files: op, collective, layer and program rows "
                  "(data/benchmarks/README.md); train_steps*.csv (the optimizer's bandwidth and "
                  "eager tensor parallelism's host time); overlap*.csv (bench/overlap.py)");
  cmd->add_option("--steps", a->steps,
                  "Also fit a device without op rows on whole measured training iterations "
                  "(vTrain format): its efficiencies and the host's issue time per kernel");
  cmd->add_option("--steps-device", a->steps_device, "The device the --steps iterations ran on");
  cmd->add_option("--matrix-steps", a->matrix_steps,
                  "With --steps: fit the device's matrix efficiency on the even rows of these "
                  "measured steps (train_steps format: runs of large models, mostly GEMMs), the "
                  "rest on the iterations around it");
  cmd->add_option("-o,--output", a->output,
                  "A calibration file (one device) or a directory (one file per device)");
  cmd->add_option("--min-size", a->min_size, "Fit rows of at least this size")
      ->capture_default_str();
  cmd->add_option("--duty-from", a->duty_from,
                  "Give devices without duty rows (bench/duty.py) this device's GEMM duty fit, "
                  "named as borrowed in the file: for the same die at the same power limit");
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return calibrate(cx, *a);
    };
  });
}

}  // namespace yirage::cli
