#include "costmodel/duty_fit.h"

#include "costmodel/calibration.h"
#include "costmodel/csv_records.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace yirage::costmodel {
namespace {

constexpr std::string_view kHeader = "device,gemm,filler,target_duty,fillers,gap_s,duty,";

struct Point {
  double idle = 0;   // 1 - duty
  double ratio = 0;  // GEMM time over its time back to back
};

double predict(double slope, double floor, double idle) {
  return std::max(floor, 1 - slope * idle);
}

double mape(const std::vector<Point>& points, double slope, double floor) {
  double sum = 0;
  for (const Point& p : points)
    sum += std::fabs(predict(slope, floor, p.idle) / p.ratio - 1);
  return 100 * sum / static_cast<double>(points.size());
}

// Slope and floor minimising the squared relative error over `points`, on a grid of 0.001.
std::pair<double, double> best_fit(const std::vector<Point>& points) {
  double best = INFINITY;
  std::pair<double, double> out{0, 1};
  for (int fi = 500; fi <= 1000; ++fi) {
    double floor = fi * 1e-3;
    for (int si = 0; si <= 1000; ++si) {
      double slope = si * 1e-3;
      double sq = 0;
      for (const Point& p : points) {
        double e = predict(slope, floor, p.idle) / p.ratio - 1;
        sq += e * e;
      }
      if (sq < best) {
        best = sq;
        out = {slope, floor};
      }
    }
  }
  return out;
}

}  // namespace

bool is_duty_file(const std::filesystem::path& path) {
  return csv_header_starts_with(path, kHeader);
}

std::vector<DutyRow> load_duty(const std::filesystem::path& path) {
  std::vector<DutyRow> rows;
  read_csv_records(path, [&](const CsvRecord& c) {
    DutyRow r;
    r.device = c.at("device").text;
    r.gemm = c.at("gemm").text;
    r.filler = c.at("filler").text;
    if (r.gemm != "none") {
      r.duty = std::min(1.0, c.positive("duty"));
      r.gemm_s = c.positive("gemm_s");
    }
    rows.push_back(r);
  });
  return rows;
}

std::map<std::string, DutyFit> fit_duty(const std::vector<std::filesystem::path>& files,
                                        const devices::DeviceRegistry& registry) {
  struct Rows {
    std::vector<Point> fit, held_out;
    std::string names;
  };

  std::map<std::string, Rows> by_device;
  for (const std::filesystem::path& f : files) {
    std::vector<DutyRow> rows = load_duty(f);
    std::map<std::string, double> back_to_back;  // per device and GEMM
    for (const DutyRow& r : rows) {
      if (r.gemm != "none" && r.duty >= 0.99)
        back_to_back[r.device + " " + r.gemm] = r.gemm_s;
    }
    std::map<std::string, std::size_t> series;  // rows so far per device, GEMM and filler
    for (const DutyRow& r : rows) {
      const devices::DeviceSpec* d = registry.find(r.device);
      auto ref = back_to_back.find(r.device + " " + r.gemm);
      // Fused attention's rows (`attention:...`) are measured beside, not fitted.
      if (d == nullptr || ref == back_to_back.end() || r.duty >= 0.99 || r.filler == "idle" ||
          r.gemm.starts_with("attention:"))
        continue;
      Rows& out = by_device[d->name];
      // Alternating within each series, the series starting on alternate halves, so that
      // both halves span the duties.
      std::string key = r.device + " " + r.gemm + " " + r.filler;
      auto it = series.try_emplace(key, series.size() % 2).first;
      bool fitted = it->second++ % 2 == 0;
      (fitted ? out.fit : out.held_out).push_back({1 - r.duty, r.gemm_s / ref->second});
      std::string name = display_path(f.string());
      if (out.names.find(name) == std::string::npos)
        out.names += (out.names.empty() ? "" : ", ") + name;
    }
  }
  std::map<std::string, DutyFit> out;
  for (const auto& [device, rows] : by_device) {
    if (rows.fit.size() < 3 || rows.held_out.empty())
      continue;
    auto [slope, floor] = best_fit(rows.fit);
    DutyFit fit;
    fit.value = slope;
    fit.floor = floor;
    fit.fit_rows = rows.fit.size();
    fit.held_out_rows = rows.held_out.size();
    fit.held_out_mape = mape(rows.held_out, slope, floor);
    fit.unfitted_mape = mape(rows.held_out, 0, 1);
    fit.fitted_on = rows.names +
                    " (GEMMs between memory-bound kernels, alternating within each series: " +
                    std::to_string(fit.fit_rows) + " fitted, " + std::to_string(fit.held_out_rows) +
                    " held out)";
    out.emplace(device, fit);
  }
  return out;
}

}  // namespace yirage::costmodel
