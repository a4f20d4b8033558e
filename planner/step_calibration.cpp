#include "planner/step_calibration.h"

#include "planner/plan.h"
#include "planner/step_validation.h"
#include "planner/train_stage.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <tuple>

namespace yirage::planner {
namespace {

// Which rows a host fit takes: those that ran on the device and `keep` accepts.
using RowFilter = bool (*)(const MeasuredStep& r, const Layout& l);

// The rows of one file that ran on `device` and `keep` accepts.
std::vector<MeasuredStep> rows_of(const std::filesystem::path& file,
                                  const std::string& device,
                                  RowFilter keep) {
  std::vector<MeasuredStep> out;
  for (const MeasuredStep& r : load_measured_steps(file)) {
    Layout l;
    if (r.device != device || r.status != "ok" || !parse_layout(r.layout, &l).empty() ||
        !keep(r, l))
      continue;
    out.push_back(r);
  }
  return out;
}

bool eager_tensor_parallel(const MeasuredStep& r, const Layout& l) {
  return r.framework.rfind("torch", 0) == 0 && l.tp > 1;
}

bool megatron_core(const MeasuredStep& r, const Layout& l) {
  return r.framework.rfind("megatron-core", 0) == 0 && l.pp == 1;
}

bool megatron_pipelined(const MeasuredStep& r, const Layout& l) {
  return r.framework.rfind("megatron-core", 0) == 0 && l.pp > 1;
}

bool megatron_overlapped(const MeasuredStep& r, const Layout& l) {
  return megatron_core(r, l) && l.dp * l.cp > 1 && l.dp_overlap;
}

struct Split {
  std::vector<std::vector<MeasuredStep>> fit;  // per file
  std::vector<std::vector<MeasuredStep>> held_out;
  std::size_t rows = 0;
  std::string files;  // the files with rows, for `fitted_on`
};

// Sum of squared relative errors (fit) or the mean absolute one in percent (held out) of
// `rows` with eager_tp_host = `host`.
struct Errors {
  double squared = 0;
  double absolute = 0;
  std::size_t rows = 0;
};

// What prices the rows: their files, the device, and the data to price them with.
struct Pricing {
  const std::vector<std::filesystem::path>& files;
  const std::string& device;
  const devices::DeviceRegistry& registry;
  const devices::ModelRegistry& models;
  const costmodel::CalibrationSet& calibrations;
};

// The device's efficiency in `pr`'s calibrations (the defaults where it has none).
costmodel::GpuEfficiency known_efficiency(const Pricing& pr) {
  const costmodel::GpuEfficiency* known = pr.calibrations.find_gpu(pr.device);
  return known != nullptr ? *known : costmodel::GpuEfficiency{};
}

// The rows priced with the device's efficiency `e`.
Errors errors(const Pricing& pr,
              const std::vector<std::vector<MeasuredStep>>& rows,
              const costmodel::GpuEfficiency& e) {
  costmodel::CalibrationSet cal = pr.calibrations;
  cal.add_gpu(pr.device, e);
  Errors out;
  for (std::size_t i = 0; i < pr.files.size(); ++i) {
    if (rows[i].empty())
      continue;
    for (const StepPoint& p :
         price_measured_steps(pr.files[i], rows[i], pr.registry, pr.models, cal)) {
      double rel = p.estimate_s ? (*p.estimate_s - p.row.step_s) / p.row.step_s : 1;
      out.squared += rel * rel;
      out.absolute += std::fabs(rel);
      ++out.rows;
    }
  }
  return out;
}

}  // namespace

namespace {

using HostField = devices::Seconds costmodel::GpuEfficiency::*;

// Moves `*us` (microseconds, not below `lowest`) to the best of the 1 us steps within 9 of it
// under `error`, `*best_err` being its error so far.
void refine(int* us, int lowest, double* best_err, const std::function<double(int)>& error) {
  int around = *us;
  for (int v = std::max(lowest, around - 9); v <= around + 9; ++v) {
    double e = error(v);
    if (e < *best_err) {
      *best_err = e;
      *us = v;
    }
  }
}

// The value of `field` (microseconds, 0-2 ms) with the least `error`: by 10 us, then by 1 us
// around the best.
int best_host(const std::function<double(int)>& error) {
  int best = 0;
  double best_err = error(0);
  for (int us = 10; us <= 2000; us += 10) {
    double e = error(us);
    if (e < best_err) {
      best_err = e;
      best = us;
    }
  }
  refine(&best, 0, &best_err, error);
  return best;
}

// The pair of host times (microseconds) with the least `error`: over a grid (the first 0-400 us
// by 10, the second 1-201 us by 10: 0 would mean the first's), then each by 1 us around the
// best with the other held.
std::pair<int, int> best_host_pair(const std::function<double(int, int)>& error) {
  int first = 0;
  int other = 1;
  double best_err = error(first, other);
  for (int a = 0; a <= 400; a += 10) {
    for (int b = 1; b <= 201; b += 10) {
      double e = error(a, b);
      if (e < best_err) {
        best_err = e;
        first = a;
        other = b;
      }
    }
  }
  refine(&first, 0, &best_err, [&](int a) { return error(a, other); });
  refine(&other, 1, &best_err, [&](int b) { return error(first, b); });
  return {first, other};
}

// How a host fit weighs the fitted rows' errors: their squares, or their absolute values (the
// measure the validation reports, less swayed by one row far off).
enum class Objective { kSquared, kAbsolute };

// The rows of `pr`'s files that `keep` accepts, alternating in file order: the even ones to
// fit, the odd ones held out.
Split split_rows(const Pricing& pr, RowFilter keep) {
  Split split;
  for (const std::filesystem::path& f : pr.files) {
    split.fit.emplace_back();
    split.held_out.emplace_back();
    std::vector<MeasuredStep> rows = rows_of(f, pr.device, keep);
    for (const MeasuredStep& r : rows)
      (split.rows++ % 2 == 0 ? split.fit : split.held_out).back().push_back(r);
    if (!rows.empty())
      split.files += (split.files.empty() ? "" : ", ") + costmodel::display_path(f.string());
  }
  return split;
}

double mape_of(const Errors& e) {
  return e.rows > 0 ? 100 * e.absolute / static_cast<double>(e.rows) : 0;
}

// A host time per kernel or operation (`field` of the device's efficiency) fitted on the rows
// `keep` accepts, as fit_eager_tp_host describes; `what` names those rows. With `second`, a
// second host time fitted with it (best_host_pair).
std::optional<costmodel::EagerTpHostFit> fit_host(const Pricing& pr,
                                                  RowFilter keep,
                                                  HostField field,
                                                  const std::string& what,
                                                  HostField second = nullptr,
                                                  Objective objective = Objective::kSquared) {
  Split split = split_rows(pr, keep);
  std::size_t n = split.rows;
  const std::string& names = split.files;
  if (n < 4)
    return std::nullopt;
  // Microseconds of `field` and of `second`.
  auto with_host = [&](int first_us, int second_us) {
    costmodel::GpuEfficiency e = known_efficiency(pr);
    e.*field = devices::Seconds{first_us * 1e-6};
    if (second != nullptr)
      e.*second = devices::Seconds{second_us * 1e-6};
    return e;
  };
  auto error = [&](const costmodel::GpuEfficiency& e) {
    Errors err = errors(pr, split.fit, e);
    return objective == Objective::kSquared ? err.squared : err.absolute;
  };
  int first = 0;
  int other = 0;
  if (second == nullptr) {
    first = best_host([&](int us) { return error(with_host(us, 0)); });
  } else {
    std::tie(first, other) = best_host_pair([&](int a, int b) { return error(with_host(a, b)); });
  }
  costmodel::EagerTpHostFit fit;
  fit.host = devices::Seconds{first * 1e-6};
  fit.op_host = devices::Seconds{other * 1e-6};
  Errors held = errors(pr, split.held_out, with_host(first, other));
  Errors unpriced = errors(pr, split.held_out, with_host(0, 0));
  fit.fit_rows = (n + 1) / 2;
  fit.held_out_rows = held.rows;
  fit.held_out_mape = mape_of(held);
  fit.unpriced_mape = mape_of(unpriced);
  fit.fitted_on = names + " (" + what + " alternating: " + std::to_string(fit.fit_rows) +
                  " fitted, " + std::to_string(n - fit.fit_rows) + " held out)";
  return fit;
}

}  // namespace

std::optional<costmodel::EagerTpHostFit> fit_eager_tp_host(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations) {
  return fit_host(Pricing{files, device, registry, models, calibrations}, eager_tensor_parallel,
                  &costmodel::GpuEfficiency::eager_tp_host, "tensor-parallel rows");
}

std::optional<costmodel::EagerTpHostFit> fit_megatron_host(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations) {
  return fit_host(Pricing{files, device, registry, models, calibrations}, megatron_core,
                  &costmodel::GpuEfficiency::megatron_host, "Megatron-Core rows without pipelining",
                  &costmodel::GpuEfficiency::megatron_op_host);
}

std::optional<costmodel::EagerTpHostFit> fit_megatron_pp_sync(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations) {
  // By absolute error: steps the host binds move by 10% and more from run to run (their p10 to
  // p90), and one of them would set a squared fit alone.
  return fit_host(Pricing{files, device, registry, models, calibrations}, megatron_pipelined,
                  &costmodel::GpuEfficiency::megatron_pp_sync, "pipelined Megatron-Core rows",
                  nullptr, Objective::kAbsolute);
}

namespace {

// A layout measured with its gradient sync overlapping the backward and without, in one file
// (one machine, back to back).
struct OverlapPair {
  std::size_t file = 0;
  MeasuredStep on;
  MeasuredStep off;
};

// The pairs of `pr`'s files: each overlapped Megatron-Core row with the first unpaired row of
// the same file, task and layout but for `dp_overlap=off`.
std::vector<OverlapPair> overlap_pairs(const Pricing& pr) {
  const std::string off_key = ",dp_overlap=off";
  std::vector<OverlapPair> out;
  for (std::size_t i = 0; i < pr.files.size(); ++i) {
    std::vector<MeasuredStep> rows = rows_of(pr.files[i], pr.device, megatron_core);
    std::vector<bool> used(rows.size(), false);
    for (std::size_t a = 0; a < rows.size(); ++a) {
      Layout l;
      parse_layout(rows[a].layout, &l);
      if (!megatron_overlapped(rows[a], l))
        continue;
      for (std::size_t b = 0; b < rows.size(); ++b) {
        std::string off = rows[b].layout;
        std::size_t at = off.find(off_key);
        if (used[b] || at == std::string::npos || rows[b].task != rows[a].task)
          continue;
        if (off.erase(at, off_key.size()) != rows[a].layout)
          continue;
        used[b] = true;
        out.push_back({i, rows[a], rows[b]});
        break;
      }
    }
  }
  return out;
}

// Sum of |priced saving - measured saving| / the overlapped step over `pairs`, with the
// device's efficiency `e`, and how many pairs were priced.
std::pair<double, std::size_t> saving_error(const Pricing& pr,
                                            const std::vector<OverlapPair>& pairs,
                                            const costmodel::GpuEfficiency& e) {
  costmodel::CalibrationSet cal = pr.calibrations;
  cal.add_gpu(pr.device, e);
  double sum = 0;
  std::size_t n = 0;
  for (const OverlapPair& p : pairs) {
    std::vector<StepPoint> pts =
        price_measured_steps(pr.files[p.file], {p.on, p.off}, pr.registry, pr.models, cal);
    if (pts.size() != 2 || !pts[0].estimate_s || !pts[1].estimate_s)
      continue;
    double priced = *pts[1].estimate_s - *pts[0].estimate_s;
    double measured = p.off.step_s - p.on.step_s;
    sum += std::fabs(priced - measured) / p.on.step_s;
    ++n;
  }
  return {sum, n};
}

}  // namespace

std::optional<costmodel::DpOverlapFit> fit_megatron_dp_overlap(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations) {
  Pricing pr{files, device, registry, models, calibrations};
  std::vector<OverlapPair> fit;
  std::vector<OverlapPair> held_out;
  std::string names;
  std::vector<OverlapPair> pairs = overlap_pairs(pr);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    (i % 2 == 0 ? fit : held_out).push_back(pairs[i]);
    std::string name = costmodel::display_path(files[pairs[i].file].string());
    if (names.find(name) == std::string::npos)
      names += (names.empty() ? "" : ", ") + name;
  }
  if (fit.size() < 2 || held_out.empty())
    return std::nullopt;
  auto with_cost = [&](double cost) {
    costmodel::GpuEfficiency e = known_efficiency(pr);
    e.megatron_dp_overlap_cost = cost;
    return e;
  };
  // By hundredths from 0 (overlap free) to 1 (the buckets beside the backward cost their whole
  // time): what overlap saves is the difference of two steps on one machine, which the model's
  // other errors (the same in both) leave alone.
  int best = 0;
  double best_err = saving_error(pr, fit, with_cost(0)).first;
  for (int k = 1; k <= 100; ++k) {
    double err = saving_error(pr, fit, with_cost(k / 100.0)).first;
    if (err < best_err) {
      best_err = err;
      best = k;
    }
  }
  costmodel::DpOverlapFit out;
  out.value = best / 100.0;
  auto [held, held_n] = saving_error(pr, held_out, with_cost(out.value));
  auto [unpriced, unpriced_n] = saving_error(pr, held_out, with_cost(0));
  out.fit_rows = fit.size();
  out.held_out_rows = held_n;
  out.held_out_mape = held_n > 0 ? 100 * held / static_cast<double>(held_n) : 0;
  out.unfitted_mape = unpriced_n > 0 ? 100 * unpriced / static_cast<double>(unpriced_n) : 0;
  out.fitted_on =
      names + " (Megatron-Core layouts measured with and without overlapped " +
      "data parallelism on one machine, pairs alternating: " + std::to_string(fit.size()) +
      " fitted, " + std::to_string(held_out.size()) +
      " held out; error: the saving's, over the step)";
  return out;
}

std::optional<costmodel::MatrixStepsFit> fit_matrix_on_steps(
    const std::filesystem::path& file,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations) {
  std::vector<std::vector<MeasuredStep>> fit(1);
  std::vector<std::vector<MeasuredStep>> held_out(1);
  std::size_t n = 0;
  for (const MeasuredStep& r : load_measured_steps(file)) {
    if (r.device == device && r.status == "ok")
      (n++ % 2 == 0 ? fit : held_out).front().push_back(r);
  }
  if (n < 4)
    return std::nullopt;
  std::vector<std::filesystem::path> files = {file};
  Pricing pr{files, device, registry, models, calibrations};
  auto with_matrix = [&](double matrix) {
    costmodel::GpuEfficiency e = known_efficiency(pr);
    e.matrix = matrix;
    return e;
  };
  int best = 1000;  // thousandths
  double best_err = -1;
  for (int k = 300; k <= 1000; k += 5) {
    double err = errors(pr, fit, with_matrix(k / 1000.0)).squared;
    if (best_err < 0 || err < best_err) {
      best_err = err;
      best = k;
    }
  }
  costmodel::MatrixStepsFit out;
  out.value = best / 1000.0;
  out.fit_rows = fit.front().size();
  out.held_out_rows = held_out.front().size();
  out.held_out_mape = mape_of(errors(pr, held_out, with_matrix(out.value)));
  out.unfitted_mape = mape_of(errors(pr, held_out, known_efficiency(pr)));
  out.fitted_on = costmodel::display_path(file.string()) +
                  " (rows alternating: " + std::to_string(out.fit_rows) + " fitted, " +
                  std::to_string(out.held_out_rows) + " held out)";
  return out;
}

namespace {

// One measured optimizer phase: the model's time for it is bytes / (bandwidth x efficiency)
// + launch, so at another efficiency e it is `scaled` / e + `launch`.
struct Phase {
  double measured = 0;
  double scaled = 0;  // bytes / peak bandwidth
  double launch = 0;
};

double phase_mape(const std::vector<Phase>& phases, double efficiency) {
  double sum = 0;
  for (const Phase& p : phases)
    sum += std::fabs((p.scaled / efficiency + p.launch - p.measured) / p.measured);
  return phases.empty() ? 0 : 100 * sum / static_cast<double>(phases.size());
}

}  // namespace

std::optional<costmodel::OptimizerFit> fit_optimizer(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations) {
  const costmodel::GpuEfficiency* known = calibrations.find_gpu(device);
  costmodel::GpuEfficiency e = known != nullptr ? *known : costmodel::GpuEfficiency{};
  double priced_at = e.optimizer > 0 ? e.optimizer : e.memory;
  std::vector<Phase> fit;
  std::vector<Phase> held_out;
  std::size_t n = 0;
  std::string names;
  for (const std::filesystem::path& f : files) {
    std::vector<MeasuredStep> rows;
    for (const MeasuredStep& r : load_measured_steps(f)) {
      Layout l;
      if (r.device == device && r.status == "ok" && r.optimizer_s > 0 &&
          r.framework.rfind("torch", 0) == 0 && parse_layout(r.layout, &l).empty() && l.tp == 1 &&
          l.pp == 1 && l.zero == 0)
        rows.push_back(r);
    }
    if (rows.empty())
      continue;
    names += (names.empty() ? "" : ", ") + costmodel::display_path(f.string());
    for (const StepPoint& p : price_measured_steps(f, rows, registry, models, calibrations)) {
      if (!p.estimate_s)
        continue;
      double launch = e.launch.value;
      Phase ph{p.row.optimizer_s, (p.estimate_optimizer_s - launch) * priced_at, launch};
      (n++ % 2 == 0 ? fit : held_out).push_back(ph);
    }
  }
  if (n < 4)
    return std::nullopt;
  int best = 1000;  // thousandths
  double best_err = -1;
  for (int k = 200; k <= 1000; ++k) {
    double err = 0;
    for (const Phase& p : fit) {
      double rel = (p.scaled * 1000 / k + p.launch - p.measured) / p.measured;
      err += rel * rel;
    }
    if (best_err < 0 || err < best_err) {
      best_err = err;
      best = k;
    }
  }
  costmodel::OptimizerFit out;
  out.value = best / 1000.0;
  out.fit_rows = fit.size();
  out.held_out_rows = held_out.size();
  out.held_out_mape = phase_mape(held_out, out.value);
  out.unfitted_mape = phase_mape(held_out, e.memory);
  out.fitted_on = names +
                  " (optimizer phases of rows without tensor or pipeline parallelism "
                  "or ZeRO, alternating: " +
                  std::to_string(fit.size()) + " fitted, " + std::to_string(held_out.size()) +
                  " held out)";
  return out;
}

std::optional<costmodel::AllocatorFit> fit_allocator_cache(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    bool megatron) {
  // Per row: the allocated peak and what the model keeps beside it besides the fitted cache
  // (gathered_logits_cache), both over the measured reserve.
  std::vector<std::pair<double, double>> fit;
  std::vector<std::pair<double, double>> held_out;
  std::string names;
  for (const std::filesystem::path& f : files) {
    bool any = false;
    StepFiles steps(f, registry, models);
    for (const MeasuredStep& r : load_measured_steps(f)) {
      Layout l;
      if (r.device != device || r.status != "ok" || r.peak_allocated <= 0 || r.peak_reserved <= 0 ||
          r.framework.rfind(megatron ? "megatron" : "torch", 0) != 0 ||
          !parse_layout(r.layout, &l).empty() || (l.zero >= 2 && l.dp * l.cp > 1))
        continue;
      // A pipeline's merged outputs take their own segment (merged_outputs_segment), after
      // the allocated peak of the first step: not the cache this fraction stands for.
      if (!megatron && merged_outputs_segment(steps.task(r.task), l) > 0)
        continue;
      double beside = megatron ? 0 : gathered_logits_cache(steps.task(r.task), l);
      std::size_t n = fit.size() + held_out.size();
      (n % 2 == 0 ? fit : held_out)
          .emplace_back(r.peak_allocated / r.peak_reserved, beside / r.peak_reserved);
      any = true;
    }
    if (any)
      names += (names.empty() ? "" : ", ") + costmodel::display_path(f.string());
  }
  if (fit.size() + held_out.size() < 4)
    return std::nullopt;
  // Minimises the sum over rows of ((a (1 + c) + b) / r - 1)^2, x = a / r, z = b / r:
  // 1 + c = sum(x (1 - z)) / sum(x^2).
  double s1 = 0;
  double s2 = 0;
  for (auto [x, z] : fit) {
    s1 += x * (1 - z);
    s2 += x * x;
  }
  auto mape = [&](double c, bool beside) {
    double sum = 0;
    for (auto [x, z] : held_out)
      sum += std::fabs(x * (1 + c) + (beside ? z : 0) - 1);
    return held_out.empty() ? 0 : 100 * sum / static_cast<double>(held_out.size());
  };
  costmodel::AllocatorFit out;
  out.value = std::max(0.0, s1 / s2 - 1);
  out.fit_rows = fit.size();
  out.held_out_rows = held_out.size();
  out.held_out_mape = mape(out.value, true);
  out.unfitted_mape = mape(0, false);
  out.fitted_on =
      names + " (reserve against allocated peak of " +
      (megatron ? "Megatron-Core rows"
                : "rows without FSDP2 or a pipeline's merged outputs, beside the gathered logits' "
                  "copies") +
      ", alternating: " + std::to_string(fit.size()) + " fitted, " +
      std::to_string(held_out.size()) + " held out)";
  return out;
}

}  // namespace yirage::planner
