#include "costmodel/overlap_fit.h"

#include "costmodel/calibration.h"
#include "costmodel/measured.h"
#include "devices/support/diagnostics.h"
#include "devices/support/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <string>
#include <string_view>

namespace yirage::costmodel {
namespace {

constexpr std::string_view kHeader = "device,gpus,collective,dtype,bytes,compute,";

using Cell = CsvCell;

}  // namespace

bool is_overlap_file(const std::filesystem::path& path) {
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  if (!text)
    return false;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.front() != '#')
      return line.rfind(kHeader, 0) == 0;
  }
  return false;
}

std::vector<OverlapRow> load_overlap(const std::filesystem::path& path) {
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  std::vector<OverlapRow> rows;
  std::vector<Cell> header;
  std::istringstream in(*text);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty() || line.front() == '#')
      continue;
    if (header.empty()) {
      header = split_csv_line(line);
      continue;
    }
    std::vector<Cell> c = split_csv_line(line);
    devices::SourceLoc loc{path.string(), line_no, 1};
    if (c.size() != header.size()) {
      diag.error(loc,
                 "the row has " + std::to_string(c.size()) + " columns, the header " +
                     std::to_string(header.size()),
                 line);
      continue;
    }
    auto at = [&](const char* name) -> Cell {
      auto it =
          std::find_if(header.begin(), header.end(), [&](const Cell& h) { return h.text == name; });
      return it == header.end() ? Cell{} : c[static_cast<std::size_t>(it - header.begin())];
    };
    auto number = [&](const char* name) {
      Cell cell = at(name);
      const std::string& s = cell.text;
      double v = 0;
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v <= 0 ||
          v > 1e15) {
        diag.error({path.string(), line_no, cell.col},
                   std::string("'") + name + "' must be a positive number, got '" + s + "'", line);
        return 0.0;
      }
      return v;
    };
    if (at("compute").text != "gemm")
      continue;
    OverlapRow r;
    r.device = at("device").text;
    r.collective = at("collective").text;
    r.ranks = static_cast<std::int64_t>(number("gpus"));
    r.bytes = number("bytes");
    r.gemm_s = number("compute_alone_s");
    r.collective_alone_s = number("collective_alone_s");
    r.collective_beside_s = number("collective_beside_s");
    rows.push_back(r);
  }
  if (header.empty())
    diag.error({path.string(), 1, 1}, "no header row");
  diag.throw_if_errors();
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
