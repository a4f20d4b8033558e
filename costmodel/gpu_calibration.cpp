#include "costmodel/gpu_calibration.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace yirage::costmodel {

std::optional<OpEstimate> estimate_op_row(const MeasuredRow& row,
                                          const devices::DeviceRegistry& registry,
                                          const GpuEfficiency& eff,
                                          std::string* why) {
  const devices::DeviceSpec* d = registry.find(row.device);
  if (d == nullptr) {
    *why = "unknown device '" + row.device + "'";
    return std::nullopt;
  }
  bool causal = row.op == "attention_causal";
  const GpuOpInfo* info = find_gpu_op(causal ? "attention" : row.op);
  if (info == nullptr) {
    *why = "unknown op '" + row.op + "'";
    return std::nullopt;
  }
  OpShape shape;
  shape.causal = causal;
  if (std::string err = parse_op_shape(*info, row.shape, &shape); !err.empty()) {
    *why = err;
    return std::nullopt;
  }
  devices::DType dtype = devices::DType::kBf16;
  for (devices::DType t : devices::kAllDTypes) {
    if (devices::dtype_name(t) == row.dtype)
      dtype = t;
  }
  return estimate_gpu_op(*d, dtype, eff, *info, shape, false, why);
}

namespace {

struct Sample {
  const MeasuredRow* row;
  bool fit;
};

// Model times without launch overhead, for every sample of the fit split (0 elsewhere).
std::vector<double> times(const std::vector<Sample>& s,
                          const devices::DeviceRegistry& r,
                          const GpuEfficiency& eff,
                          bool fit_split) {
  std::vector<double> t(s.size(), 0);
  GpuEfficiency e = eff;
  e.launch = devices::Seconds{};
  std::string why;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i].fit != fit_split)
      continue;
    auto est = estimate_op_row(*s[i].row, r, e, &why);
    t[i] = est ? est->time.value - 0 : 0;
  }
  return t;
}

// Kernels per row: the launch overhead is paid once per kernel; single ops run one.
struct Objective {
  double error = 0;
  double launch = 0;
};

Objective evaluate(const std::vector<Sample>& s,
                   const devices::DeviceRegistry& r,
                   const GpuEfficiency& eff) {
  std::vector<double> t = times(s, r, eff, true);
  double num = 0;
  double den = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!s[i].fit)
      continue;
    double m = s[i].row->time_s;
    num += (m - t[i]) / (m * m);
    den += 1 / (m * m);
  }
  Objective o;
  o.launch = den > 0 ? std::max(0.0, num / den) : 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!s[i].fit)
      continue;
    double rel = (t[i] + o.launch - s[i].row->time_s) / s[i].row->time_s;
    o.error += rel * rel;
  }
  return o;
}

double mape(const std::vector<Sample>& s,
            const devices::DeviceRegistry& r,
            const GpuEfficiency& eff,
            bool fit_split) {
  double sum = 0;
  std::size_t n = 0;
  std::string why;
  for (const Sample& x : s) {
    if (x.fit != fit_split)
      continue;
    auto est = estimate_op_row(*x.row, r, eff, &why);
    if (!est)
      continue;
    sum += std::fabs(est->time.value - x.row->time_s) / x.row->time_s;
    ++n;
  }
  return n > 0 ? 100 * sum / static_cast<double>(n) : 0;
}

GpuEfficiency coordinate_descent(const std::vector<Sample>& s, const devices::DeviceRegistry& r) {
  GpuEfficiency best;
  double best_error = evaluate(s, r, best).error;
  std::array<double GpuEfficiency::*, 4> params = {&GpuEfficiency::matrix,
                                                   &GpuEfficiency::attention,
                                                   &GpuEfficiency::memory, &GpuEfficiency::vector};
  for (int round = 0; round < 3; ++round) {
    for (double GpuEfficiency::*p : params) {
      for (int step = 5; step <= 100; ++step) {
        GpuEfficiency trial = best;
        trial.*p = step / 100.0;
        double err = evaluate(s, r, trial).error;
        if (err < best_error) {
          best_error = err;
          best = trial;
        }
      }
    }
  }
  best.launch = devices::Seconds{evaluate(s, r, best).launch};
  return best;
}

}  // namespace

std::vector<GpuCalibrationFit> fit_gpu_ops(const std::vector<MeasuredFile>& files,
                                           const devices::DeviceRegistry& registry) {
  std::map<std::string, std::vector<Sample>> by_device;
  std::map<std::string, std::vector<std::string>> sources;
  for (const MeasuredFile& file : files) {
    bool fit = true;
    for (const MeasuredRow& row : file.rows) {
      if (row.kind != "op")
        continue;
      const devices::DeviceSpec* d = registry.find(row.device);
      if (d == nullptr)
        continue;
      by_device[d->name].push_back({&row, fit});
      fit = !fit;
      auto& src = sources[d->name];
      if (std::find(src.begin(), src.end(), file.path) == src.end())
        src.push_back(file.path);
    }
  }
  std::vector<GpuCalibrationFit> fits;
  for (const auto& [device, samples] : by_device) {
    GpuCalibrationFit f;
    f.device = device;
    f.efficiency = coordinate_descent(samples, registry);
    f.efficiency.source = "";
    for (const Sample& s : samples)
      (s.fit ? f.fit_rows : f.held_out_rows)++;
    f.fit_mape = mape(samples, registry, f.efficiency, true);
    f.held_out_mape = mape(samples, registry, f.efficiency, false);
    f.uncalibrated_held_out_mape = mape(samples, registry, GpuEfficiency{}, false);
    for (const std::string& s : sources[device]) {
      f.fitted_on += (f.fitted_on.empty() ? "" : ", ") + s;
    }
    f.fitted_on += " (alternate op rows: " + std::to_string(f.fit_rows) + " fitted, " +
                   std::to_string(f.held_out_rows) + " held out)";
    fits.push_back(std::move(f));
  }
  return fits;
}

}  // namespace yirage::costmodel
