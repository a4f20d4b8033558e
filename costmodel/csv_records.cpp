#include "costmodel/csv_records.h"

#include "devices/support/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <utility>

namespace yirage::costmodel {

CsvRecord::CsvRecord(const std::vector<CsvCell>& header,
                     std::vector<CsvCell> cells,
                     devices::SourceLoc loc,
                     std::string line,
                     devices::Diagnostics& diag)
    : header_(header),
      cells_(std::move(cells)),
      loc_(std::move(loc)),
      line_(std::move(line)),
      diag_(diag) {}

CsvCell CsvRecord::at(std::string_view name) const {
  auto it = std::find_if(header_.begin(), header_.end(),
                         [&](const CsvCell& h) { return h.text == name; });
  return it == header_.end() ? CsvCell{} : cells_[static_cast<std::size_t>(it - header_.begin())];
}

double CsvRecord::positive(std::string_view name) const {
  CsvCell cell = at(name);
  const std::string& s = cell.text;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v <= 0 || v > 1e15) {
    diag_.error({loc_.file, loc_.line, cell.col},
                "'" + std::string(name) + "' must be a positive number, got '" + s + "'", line_);
    return 0;
  }
  return v;
}

bool csv_header_starts_with(const std::filesystem::path& path, std::string_view prefix) {
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  if (!text)
    return false;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.front() != '#')
      return line.rfind(prefix, 0) == 0;
  }
  return false;
}

void read_csv_records(const std::filesystem::path& path,
                      const std::function<void(const CsvRecord&)>& row) {
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  std::vector<CsvCell> header;
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
    std::vector<CsvCell> cells = split_csv_line(line);
    devices::SourceLoc loc{path.string(), line_no, 1};
    if (cells.size() != header.size()) {
      diag.error(loc,
                 "the row has " + std::to_string(cells.size()) + " columns, the header " +
                     std::to_string(header.size()),
                 line);
      continue;
    }
    row(CsvRecord(header, std::move(cells), loc, line, diag));
  }
  if (header.empty())
    diag.error({path.string(), 1, 1}, "no header row");
  diag.throw_if_errors();
}

}  // namespace yirage::costmodel
