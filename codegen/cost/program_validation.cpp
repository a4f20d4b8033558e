#include "codegen/cost/program_validation.h"

#include "codegen/cost/ugraph_cost.h"
#include "codegen/ir/ugraph_json.h"
#include "devices/support/diagnostics.h"
#include "devices/support/yaml_reader.h"

#include <algorithm>
#include <cmath>

namespace yirage::codegen {
namespace {

// The block cycles: per scalar step, per matrix-unit k-step, per barrier.
struct Cycles {
  double step = 0, mma = 0, barrier = 0;
  double launch = 0;  // seconds a kernel
};

// A program row priced as a sum over its kernels of fixed + max(floor, serial) + launch, the
// serial latency linear in the block cycles and the model's only term in them, the launch
// (GpuEfficiency::program_launch) the same for every kernel that pays one.
struct Kernel {
  double fixed = 0, floor = 0;
  Cycles per;           // the serial latency of one cycle of each kind
  double launches = 0;  // program launches it pays (1, or 0 where the model adds none)
};

struct Sample {
  std::vector<Kernel> kernels;
  double measured = 0;
  bool fit = false;

  double launches() const {
    double n = 0;
    for (const Kernel& k : kernels)
      n += k.launches;
    return n;
  }

  double time(const Cycles& c) const {
    double t = launches() * c.launch;
    for (const Kernel& k : kernels)
      t += k.fixed +
           std::max(k.floor, k.per.step * c.step + k.per.mma * c.mma + k.per.barrier * c.barrier);
    return t;
  }
};

std::vector<costmodel::KernelEstimate> priced(const KernelGraph& g,
                                              const devices::DeviceSpec& d,
                                              costmodel::GpuEfficiency eff,
                                              const Cycles& c) {
  eff.in_graph = true;  // check_programs.py replays our kernels from a CUDA graph
  eff.program_launch = devices::Seconds{c.launch};
  eff.block_step_cycles = c.step;
  eff.block_mma_step_cycles = c.mma;
  eff.block_barrier_cycles = c.barrier;
  return price_ugraph(g, d, eff).kernels;
}

Sample sample(const KernelGraph& g,
              const devices::DeviceSpec& d,
              const costmodel::GpuEfficiency& eff,
              double measured,
              bool fit) {
  std::vector<costmodel::KernelEstimate> floor = priced(g, d, eff, {});
  std::vector<costmodel::KernelEstimate> step = priced(g, d, eff, {1, 0, 0, 0});
  std::vector<costmodel::KernelEstimate> mma = priced(g, d, eff, {0, 1, 0, 0});
  std::vector<costmodel::KernelEstimate> barrier = priced(g, d, eff, {0, 0, 1, 0});
  std::vector<costmodel::KernelEstimate> launch = priced(g, d, eff, {0, 0, 0, 1e-6});
  Sample s{{}, measured, fit};
  for (std::size_t i = 0; i < floor.size(); ++i) {
    const costmodel::KernelEstimate& f = floor[i];
    Kernel k{(f.time() - f.steady).value,
             f.steady.value,
             {step[i].serial.value, mma[i].serial.value, barrier[i].serial.value},
             (launch[i].time() - f.time()).value / 1e-6};
    s.kernels.push_back(k);
  }
  return s;
}

double mape(const std::vector<Sample>& s, bool fit, const Cycles& c) {
  double sum = 0;
  std::size_t n = 0;
  for (const Sample& x : s) {
    if (x.fit != fit)
      continue;
    sum += std::abs(x.time(c) - x.measured) / x.measured;
    ++n;
  }
  return n == 0 ? 0 : 100 * sum / static_cast<double>(n);
}

// The launch that minimises the fit rows' squared relative error at c's cycles (it enters each
// row linearly), at least zero.
double best_launch(const std::vector<Sample>& s, Cycles c) {
  c.launch = 0;
  double num = 0, den = 0;
  for (const Sample& x : s) {
    if (!x.fit)
      continue;
    double n = x.launches() / x.measured;
    num += n * (x.measured - x.time(c)) / x.measured;
    den += n * n;
  }
  return den > 0 ? std::max(0.0, num / den) : 0;
}

// The squared relative error of the fit rows at c.
double objective(const std::vector<Sample>& s, const Cycles& c) {
  double err = 0;
  for (const Sample& x : s) {
    double r = x.fit ? (x.time(c) - x.measured) / x.measured : 0;
    err += r * r;
  }
  return err;
}

// A grid search over the three cycle counts, the launch fitted at each point: coarse, then
// finer around the best. Strict improvements only, in a fixed order: the result does not
// depend on anything but the rows.
Cycles fit_cycles(const std::vector<Sample>& s) {
  Cycles best;
  best.launch = best_launch(s, best);
  double best_err = objective(s, best);
  Cycles lo{0, 0, 0};
  Cycles step{2, 8, 20};
  for (int round = 0; round < 3; ++round) {
    Cycles start = lo;
    for (int i = 0; i <= 50; ++i)
      for (int j = 0; j <= 50; ++j)
        for (int k = 0; k <= 50; ++k) {
          Cycles c{start.step + i * step.step, start.mma + j * step.mma,
                   start.barrier + k * step.barrier, 0};
          c.launch = best_launch(s, c);
          if (double e = objective(s, c); e < best_err) {
            best_err = e;
            best = c;
          }
        }
    // The next round: steps 25 times finer, over the best point's neighbours.
    lo = {std::max(0.0, best.step - step.step), std::max(0.0, best.mma - step.mma),
          std::max(0.0, best.barrier - step.barrier), 0};
    step = {step.step / 25, step.mma / 25, step.barrier / 25, 0};
  }
  return best;
}

}  // namespace

KernelGraph program_ugraph(const costmodel::MeasuredFile& file, const costmodel::MeasuredRow& row) {
  std::filesystem::path path = std::filesystem::path(file.path).parent_path() / row.shape;
  devices::Diagnostics diag;
  if (!std::filesystem::is_regular_file(path)) {
    diag.error(row.loc, "no µGraph file " + path.string() + " (a program row's shape names it)");
    diag.throw_if_errors();
  }
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  return ugraph_from_json(*text, path.string());
}

costmodel::Validation validate_programs(const costmodel::MeasuredFile& file,
                                        const devices::DeviceRegistry& registry,
                                        const costmodel::CalibrationSet* calibrations) {
  costmodel::Validation v;
  for (const costmodel::MeasuredRow& row : file.rows) {
    if (row.kind != "program")
      continue;
    const devices::DeviceSpec* d = registry.find(row.device);
    if (d == nullptr) {
      v.skipped.push_back(row.loc.file + ":" + std::to_string(row.loc.line) + ": unknown device '" +
                          row.device + "'");
      continue;
    }
    const costmodel::GpuEfficiency* found =
        calibrations != nullptr ? calibrations->find_gpu(d->name) : nullptr;
    costmodel::GpuEfficiency eff = found != nullptr ? *found : costmodel::GpuEfficiency{};
    KernelGraph g = program_ugraph(file, row);
    std::vector<costmodel::KernelEstimate> ks =
        priced(g, *d, eff,
               {eff.block_step_cycles, eff.block_mma_step_cycles, eff.block_barrier_cycles,
                eff.program_launch.value});
    costmodel::ValidationPoint p;
    p.row = row;
    for (const costmodel::KernelEstimate& k : ks) {
      p.estimate_s += k.time().value;
      p.choice += (p.choice.empty() ? "" : "; ") + k.tile + " (" + k.bound() + ")";
    }
    p.error = (p.estimate_s - row.time_s) / row.time_s;
    v.points.push_back(std::move(p));
  }
  return v;
}

void fit_block_latency(const std::vector<costmodel::MeasuredFile>& files,
                       const devices::DeviceRegistry& registry,
                       std::vector<costmodel::GpuCalibrationFit>& fits) {
  for (costmodel::GpuCalibrationFit& f : fits) {
    std::vector<Sample> samples;
    std::vector<const costmodel::MeasuredFile*> used;
    for (const costmodel::DeviceRow& r :
         costmodel::device_rows(files, "program", f.device, registry)) {
      Sample s =
          sample(program_ugraph(*r.file, *r.row), *r.device, f.efficiency, r.row->time_s, r.fit);
      samples.push_back(std::move(s));
      used.push_back(r.file);
    }
    auto fitted = static_cast<std::size_t>(
        std::count_if(samples.begin(), samples.end(), [](const Sample& s) { return s.fit; }));
    if (fitted == 0)
      continue;
    Cycles c = fit_cycles(samples);
    costmodel::BlockLatencyFit best;
    best.step_cycles = c.step;
    best.mma_step_cycles = c.mma;
    best.barrier_cycles = c.barrier;
    best.launch = devices::Seconds{c.launch};
    best.fit_rows = fitted;
    best.held_out_rows = samples.size() - fitted;
    best.held_out_mape = mape(samples, false, c);
    best.unpriced_mape = mape(samples, false, {});
    best.fitted_on =
        costmodel::file_list(used) +
        " (program rows, alternating by size within each program: " + std::to_string(fitted) +
        " fitted, " + std::to_string(best.held_out_rows) + " held out)";
    f.efficiency.block_step_cycles = best.step_cycles;
    f.efficiency.block_mma_step_cycles = best.mma_step_cycles;
    f.efficiency.block_barrier_cycles = best.barrier_cycles;
    f.efficiency.program_launch = best.launch;
    f.block = best;
  }
}

}  // namespace yirage::codegen
