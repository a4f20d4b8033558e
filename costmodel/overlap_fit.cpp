#include "costmodel/overlap_fit.h"

#include "costmodel/calibration.h"
#include "costmodel/csv_records.h"
#include "costmodel/measured.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

namespace yirage::costmodel {
namespace {

constexpr std::string_view kHeader = "device,gpus,collective,dtype,bytes,compute,";

}  // namespace

bool is_overlap_file(const std::filesystem::path& path) {
  return csv_header_starts_with(path, kHeader);
}

std::vector<OverlapRow> load_overlap(const std::filesystem::path& path) {
  std::vector<OverlapRow> rows;
  read_csv_records(path, [&](const CsvRecord& c) {
    if (c.at("compute").text != "gemm")
      return;
    OverlapRow r;
    r.device = c.at("device").text;
    r.collective = c.at("collective").text;
    r.ranks = static_cast<std::int64_t>(c.positive("gpus"));
    r.bytes = c.positive("bytes");
    r.gemm_s = c.positive("compute_alone_s");
    r.collective_alone_s = c.positive("collective_alone_s");
    r.collective_beside_s = c.positive("collective_beside_s");
    rows.push_back(r);
  });
  return rows;
}

double overlap_delay(double wait, std::int64_t ranks, double kernel_s) {
  double r = static_cast<double>(std::max<std::int64_t>(1, ranks));
  return wait * r / (r + 1) * kernel_s;
}

std::map<std::string, OverlapFit> fit_overlap(const std::vector<std::filesystem::path>& files,
                                              const devices::DeviceRegistry& registry) {
  struct Rows {
    std::vector<OverlapRow> fit, held_out;
    std::string names;
  };

  std::map<std::string, Rows> by_device;
  std::map<std::string, std::size_t> seen;
  for (const std::filesystem::path& f : files) {
    for (const OverlapRow& r : load_overlap(f)) {
      const devices::DeviceSpec* d = registry.find(r.device);
      if (d == nullptr)
        continue;
      Rows& rows = by_device[d->name];
      (seen[d->name]++ % 2 == 0 ? rows.fit : rows.held_out).push_back(r);
      std::string name = display_path(f.string());
      if (rows.names.find(name) == std::string::npos)
        rows.names += (rows.names.empty() ? "" : ", ") + name;
    }
  }
  std::map<std::string, OverlapFit> out;
  for (const auto& [device, rows] : by_device) {
    if (rows.fit.size() < 2 || rows.held_out.empty())
      continue;
    std::vector<double> ratios;
    for (const OverlapRow& r : rows.fit) {
      double extra = r.collective_beside_s - r.collective_alone_s;
      ratios.push_back(extra / overlap_delay(1, r.ranks, r.gemm_s));
    }
    OverlapFit fit;
    fit.wait = std::max(0.0, median(ratios));
    double held = 0;
    double unpriced = 0;
    for (const OverlapRow& r : rows.held_out) {
      double predicted = r.collective_alone_s + overlap_delay(fit.wait, r.ranks, r.gemm_s);
      held += std::fabs(predicted - r.collective_beside_s) / r.collective_beside_s;
      unpriced += std::fabs(r.collective_alone_s - r.collective_beside_s) / r.collective_beside_s;
    }
    double n = static_cast<double>(rows.held_out.size());
    fit.fit_rows = rows.fit.size();
    fit.held_out_rows = rows.held_out.size();
    fit.held_out_mape = 100 * held / n;
    fit.unpriced_mape = 100 * unpriced / n;
    fit.fitted_on = rows.names +
                    " (collectives beside GEMMs, alternating: " + std::to_string(fit.fit_rows) +
                    " fitted, " + std::to_string(fit.held_out_rows) + " held out)";
    out[device] = fit;
  }
  return out;
}

}  // namespace yirage::costmodel
