#include "costmodel/sustained_fit.h"

#include "costmodel/calibration.h"
#include "costmodel/csv_records.h"
#include "costmodel/gpu_kernel.h"

#include <cmath>
#include <string_view>

namespace yirage::costmodel {
namespace {

constexpr std::string_view kHeader = "device,m,n,k,layout,burst_s,sustained_first_s,sustained_s,";

bool sixteen_bit(const SustainedRow& r) {
  return r.layout == "nn" || r.layout == "tn" || r.layout == "nt";
}

}  // namespace

bool is_sustained_file(const std::filesystem::path& path) {
  return csv_header_starts_with(path, kHeader);
}

std::vector<SustainedRow> load_sustained(const std::filesystem::path& path) {
  std::vector<SustainedRow> rows;
  read_csv_records(path, [&](const CsvRecord& c) {
    SustainedRow r;
    r.device = c.at("device").text;
    r.layout = c.at("layout").text;
    r.m = static_cast<std::int64_t>(c.positive("m"));
    r.n = static_cast<std::int64_t>(c.positive("n"));
    r.k = static_cast<std::int64_t>(c.positive("k"));
    r.burst_s = c.positive("burst_s");
    r.sustained_s = c.positive("sustained_s");
    rows.push_back(r);
  });
  return rows;
}

std::map<std::string, SustainedFit> fit_sustained(
    const std::vector<std::filesystem::path>& files,
    const devices::DeviceRegistry& registry,
    const std::map<std::string, GpuEfficiency>& efficiencies) {
  struct Rows {
    std::vector<double> fit, held_out;  // the op model's time over the sustained one
    std::string names;
  };

  std::map<std::string, Rows> by_device;
  for (const std::filesystem::path& f : files) {
    for (const SustainedRow& r : load_sustained(f)) {
      const devices::DeviceSpec* d = registry.find(r.device);
      if (d == nullptr || !efficiencies.contains(d->name) || !sixteen_bit(r))
        continue;
      double model = gemm_kernel(*d, devices::DType::kBf16, efficiencies.at(d->name), r.m, r.n, r.k)
                         .time()
                         .value;
      Rows& rows = by_device[d->name];
      std::size_t n = rows.fit.size() + rows.held_out.size();
      (n % 2 == 0 ? rows.fit : rows.held_out).push_back(model / r.sustained_s);
      std::string name = display_path(f.string());
      if (rows.names.find(name) == std::string::npos)
        rows.names += (rows.names.empty() ? "" : ", ") + name;
    }
  }
  std::map<std::string, SustainedFit> out;
  for (const auto& entry : by_device) {
    const Rows& rows = entry.second;
    if (rows.fit.size() < 2 || rows.held_out.empty())
      continue;
    // Minimises sum (x / s - 1)^2 over the fitted rows' x = model / sustained.
    double s1 = 0;
    double s2 = 0;
    for (double x : rows.fit) {
      s1 += x;
      s2 += x * x;
    }
    auto mape = [&](double s) {
      double sum = 0;
      for (double x : rows.held_out)
        sum += std::fabs(x / s - 1);
      return 100 * sum / static_cast<double>(rows.held_out.size());
    };
    SustainedFit fit;
    fit.value = s2 / s1;
    fit.fit_rows = rows.fit.size();
    fit.held_out_rows = rows.held_out.size();
    fit.held_out_mape = mape(fit.value);
    fit.unfitted_mape = mape(1);
    fit.fitted_on = rows.names +
                    " (GEMMs back to back, alternating: " + std::to_string(fit.fit_rows) +
                    " fitted, " + std::to_string(fit.held_out_rows) + " held out)";
    out.emplace(entry.first, fit);
  }
  return out;
}

}  // namespace yirage::costmodel
