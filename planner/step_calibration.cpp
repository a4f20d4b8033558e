#include "planner/step_calibration.h"

#include "planner/plan.h"
#include "planner/step_validation.h"

#include <cmath>

namespace yirage::planner {
namespace {

// The eager tensor-parallel rows of one file that ran on `device`.
std::vector<MeasuredStep> tp_rows(const std::filesystem::path& file, const std::string& device) {
  std::vector<MeasuredStep> out;
  for (const MeasuredStep& r : load_measured_steps(file)) {
    Layout l;
    if (r.device != device || r.status != "ok" || r.framework.rfind("torch", 0) != 0 ||
        !parse_layout(r.layout, &l).empty() || l.tp <= 1)
      continue;
    out.push_back(r);
  }
  return out;
}

struct Split {
  std::vector<std::vector<MeasuredStep>> fit;  // per file
  std::vector<std::vector<MeasuredStep>> held_out;
};

// Sum of squared relative errors (fit) or the mean absolute one in percent (held out) of
// `rows` with eager_tp_host = `host`.
struct Errors {
  double squared = 0;
  double absolute = 0;
  std::size_t rows = 0;
};

Errors errors(const std::vector<std::filesystem::path>& files,
              const std::vector<std::vector<MeasuredStep>>& rows,
              const std::string& device,
              devices::Seconds host,
              const devices::DeviceRegistry& registry,
              const devices::ModelRegistry& models,
              const costmodel::CalibrationSet& calibrations) {
  costmodel::CalibrationSet cal = calibrations;
  const costmodel::GpuEfficiency* known = calibrations.find_gpu(device);
  costmodel::GpuEfficiency e = known != nullptr ? *known : costmodel::GpuEfficiency{};
  e.eager_tp_host = host;
  cal.add_gpu(device, e);
  Errors out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (rows[i].empty())
      continue;
    for (const StepPoint& p : price_measured_steps(files[i], rows[i], registry, models, cal)) {
      double rel = p.estimate_s ? (*p.estimate_s - p.row.step_s) / p.row.step_s : 1;
      out.squared += rel * rel;
      out.absolute += std::fabs(rel);
      ++out.rows;
    }
  }
  return out;
}

}  // namespace

std::optional<costmodel::EagerTpHostFit> fit_eager_tp_host(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations) {
  Split split;
  std::size_t n = 0;
  std::string names;
  for (const std::filesystem::path& f : files) {
    split.fit.emplace_back();
    split.held_out.emplace_back();
    std::vector<MeasuredStep> rows = tp_rows(f, device);
    for (const MeasuredStep& r : rows)
      (n++ % 2 == 0 ? split.fit : split.held_out).back().push_back(r);
    if (!rows.empty())
      names += (names.empty() ? "" : ", ") + costmodel::display_path(f.string());
  }
  if (n < 4)
    return std::nullopt;
  auto fit_error = [&](double us) {
    return errors(files, split.fit, device, devices::Seconds{us * 1e-6}, registry, models,
                  calibrations)
        .squared;
  };
  double best = 0;
  double best_err = fit_error(0);
  for (double us = 10; us <= 2000; us += 10) {
    double e = fit_error(us);
    if (e < best_err) {
      best_err = e;
      best = us;
    }
  }
  double coarse = best;
  for (double us = std::max(0.0, coarse - 9); us <= coarse + 9; us += 1) {
    double e = fit_error(us);
    if (e < best_err) {
      best_err = e;
      best = us;
    }
  }
  costmodel::EagerTpHostFit fit;
  fit.host = devices::Seconds{best * 1e-6};
  Errors held = errors(files, split.held_out, device, fit.host, registry, models, calibrations);
  Errors unpriced =
      errors(files, split.held_out, device, devices::Seconds{}, registry, models, calibrations);
  fit.fit_rows = (n + 1) / 2;
  fit.held_out_rows = held.rows;
  fit.held_out_mape = held.rows > 0 ? 100 * held.absolute / static_cast<double>(held.rows) : 0;
  fit.unpriced_mape =
      unpriced.rows > 0 ? 100 * unpriced.absolute / static_cast<double>(unpriced.rows) : 0;
  fit.fitted_on = names + " (tensor-parallel rows alternating: " + std::to_string(fit.fit_rows) +
                  " fitted, " + std::to_string(n - fit.fit_rows) + " held out)";
  return fit;
}

}  // namespace yirage::planner
