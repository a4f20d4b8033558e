#include "costmodel/measured.h"

#include "costmodel/collective.h"
#include "costmodel/nccl_tests.h"
#include "devices/support/text.h"
#include "devices/support/yaml_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

namespace yirage::costmodel {
namespace {

using devices::Diagnostics;
using devices::SourceLoc;

const std::vector<std::string> kColumns = {
    "kind",  "op",    "device", "fabric", "ranks",  "ranks_per_node", "bytes",
    "shape", "dtype", "time_s", "stat",   "launch", "in_place",       "flush_bytes"};
const std::vector<std::string> kRequired = {"kind", "op", "device", "time_s"};

using Cell = CsvCell;

class RowReader {
 public:
  RowReader(const std::string& path, int line_no, const std::string& line, Diagnostics& diag)
      : path_(path), line_no_(line_no), line_(line), diag_(diag) {}

  void error(int col, const std::string& msg) {
    diag_.error(SourceLoc{path_, line_no_, std::max(col, 1)}, msg, line_);
  }

  double number(const Cell& c, const std::string& column, bool positive) {
    double v = 0;
    auto [ptr, ec] = std::from_chars(c.text.data(), c.text.data() + c.text.size(), v);
    if (ec != std::errc() || ptr != c.text.data() + c.text.size() || !std::isfinite(v)) {
      error(c.col, "'" + column + "' must be a number, got '" + c.text + "'");
      return 0;
    }
    if (positive && v <= 0)
      error(c.col, "'" + column + "' must be positive, got " + c.text);
    return v;
  }

  /// A count of ranks: a whole number from 1 to devices::kMaxWholeNumber (0 after an error).
  std::int64_t count(const Cell& c, const std::string& column) {
    double v = number(c, column, true);
    if (v <= 0)
      return 0;  // already reported
    if (v != std::floor(v) || v > static_cast<double>(devices::kMaxWholeNumber)) {
      error(c.col, "'" + column + "' must be a whole number from 1 to " +
                       std::to_string(devices::kMaxWholeNumber) + ", got " + c.text);
      return 0;
    }
    return static_cast<std::int64_t>(v);
  }

 private:
  const std::string& path_;
  int line_no_;
  const std::string& line_;
  Diagnostics& diag_;
};

std::map<std::string, std::size_t> read_header(const std::string& path,
                                               int line_no,
                                               const std::string& line,
                                               Diagnostics& diag) {
  std::map<std::string, std::size_t> index;
  std::vector<Cell> cells = split_csv_line(line);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::string& name = cells[i].text;
    if (std::find(kColumns.begin(), kColumns.end(), name) == kColumns.end()) {
      diag.error(SourceLoc{path, line_no, cells[i].col},
                 "unknown column '" + name + "'" + devices::did_you_mean(name, kColumns), line);
    }
    index[name] = i;
  }
  for (const std::string& r : kRequired) {
    if (index.count(r) == 0) {
      diag.error(SourceLoc{path, line_no, 1}, "missing column '" + r + "'", line);
    }
  }
  return index;
}

// The optional launch columns of a collective row (absent: a CUDA-graph replay, out of place).
void read_launch(RowReader& r, const Cell& launch, const Cell& in_place, MeasuredRow& row) {
  if (!launch.text.empty()) {
    if (!parse_launch(launch.text)) {
      r.error(launch.col, "unknown launch '" + launch.text + "'; expected " +
                              devices::join_choices(launch_names()) +
                              devices::did_you_mean(launch.text, launch_names()));
    }
    row.launch = launch.text;
  }
  if (!in_place.text.empty()) {
    if (in_place.text != "0" && in_place.text != "1")
      r.error(in_place.col, "'in_place' must be 0 or 1, got '" + in_place.text + "'");
    row.in_place = in_place.text == "1";
  }
}

MeasuredRow read_row(RowReader& r,
                     const std::vector<Cell>& cells,
                     const std::map<std::string, std::size_t>& index) {
  MeasuredRow row;
  auto cell = [&](const std::string& name) -> Cell {
    auto it = index.find(name);
    return it == index.end() || it->second >= cells.size() ? Cell{} : cells[it->second];
  };
  row.kind = cell("kind").text;
  row.op = cell("op").text;
  row.device = cell("device").text;
  row.fabric = cell("fabric").text;
  row.dtype = cell("dtype").text;
  row.stat = cell("stat").text;
  row.shape = cell("shape").text;
  row.time_s = r.number(cell("time_s"), "time_s", true);
  if (row.kind == "collective") {
    row.ranks = r.count(cell("ranks"), "ranks");
    row.ranks_per_node = r.count(cell("ranks_per_node"), "ranks_per_node");
    row.bytes = r.number(cell("bytes"), "bytes", true);
    read_launch(r, cell("launch"), cell("in_place"), row);
  } else if (row.kind == "op" || row.kind == "layer" || row.kind == "program") {
    if (row.shape.empty())
      r.error(1, "an " + row.kind + " row needs a 'shape'");
    Cell ranks = cell("ranks");
    row.ranks = ranks.text.empty() ? 1 : r.count(ranks, "ranks");
    row.ranks_per_node = row.ranks;
    Cell flush = cell("flush_bytes");
    if (!flush.text.empty()) {
      double v = r.number(flush, "flush_bytes", false);
      if (v < 0)
        r.error(flush.col, "'flush_bytes' must be 0 or more, got " + flush.text);
      else
        row.flush_bytes = v;
    }
  } else {
    r.error(cell("kind").col,
            "unknown kind '" + row.kind + "'; expected collective, op, layer or program");
  }
  return row;
}

}  // namespace

std::vector<std::pair<int, std::string>> text_lines(const std::string& text) {
  std::vector<std::pair<int, std::string>> out;
  std::istringstream in(text);
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (!line.empty())
      out.emplace_back(line_no, std::move(line));
  }
  return out;
}

std::vector<CsvCell> split_csv_line(const std::string& line) {
  std::vector<CsvCell> cells;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = line.find(',', start);
    cells.push_back({line.substr(start, comma == std::string::npos ? comma : comma - start),
                     static_cast<int>(start) + 1});
    if (comma == std::string::npos)
      return cells;
    start = comma + 1;
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  if (n == 0)
    return 0;
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

MeasuredFile parse_measured(const std::string& path, const std::string& text) {
  Diagnostics diag;
  MeasuredFile file;
  file.path = path;
  std::map<std::string, std::size_t> index;
  bool header = false;
  for (const auto& [line_no, line] : text_lines(text)) {
    if (line.front() == '#') {
      if (!header)
        file.provenance.push_back(line.substr(line.size() > 1 ? 2 : 1));
      continue;
    }
    if (!header) {
      index = read_header(path, line_no, line, diag);
      header = true;
      continue;
    }
    RowReader reader(path, line_no, line, diag);
    std::vector<Cell> cells = split_csv_line(line);
    if (cells.size() != index.size()) {
      reader.error(1, "the row has " + std::to_string(cells.size()) + " columns, the header " +
                          std::to_string(index.size()));
      continue;
    }
    MeasuredRow row = read_row(reader, cells, index);
    row.loc = SourceLoc{path, line_no, 1};
    file.rows.push_back(std::move(row));
  }
  if (file.provenance.empty()) {
    diag.error(SourceLoc{path, 1, 1},
               "no provenance: a measured file starts with '#' lines naming the device, "
               "software, date and script");
  }
  if (!header)
    diag.error(SourceLoc{path, 1, 1}, "no header row");
  diag.throw_if_errors();
  return file;
}

MeasuredFile load_measured(const std::filesystem::path& path) {
  Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  if (is_nccl_tests_output(*text))
    return parse_nccl_tests(path.string(), *text);
  return parse_measured(path.string(), *text);
}

namespace {

// The integers of a shape ("2048x4096x14336", "llama3-8b:1x2048x2048"), last first: the
// order that varies the first dimension fastest. They only order rows, so a number too long
// for 64 bits stops growing at 10^17 instead of overflowing.
std::vector<std::int64_t> reversed_dims(const std::string& shape) {
  constexpr std::int64_t kLargest = 100'000'000'000'000'000;
  std::vector<std::int64_t> dims;
  std::int64_t v = -1;
  for (char c : shape) {
    if (c >= '0' && c <= '9') {
      v = v < 0 ? c - '0' : std::min(kLargest, v * 10 + (c - '0'));
    } else if (v >= 0) {
      dims.push_back(v);
      v = -1;
    }
  }
  if (v >= 0)
    dims.push_back(v);
  std::reverse(dims.begin(), dims.end());
  return dims;
}

}  // namespace

std::vector<bool> fit_split(const MeasuredFile& file, double min_bytes) {
  // Stratified: the rows of each (kind, op, device, dtype, ranks, model) are sorted by size (bytes,
  // then the shape's dimensions last first) and alternate between the splits along that
  // order, the first fitted. Benchmark files walk their shapes in nested loops; alternating
  // in file order would put every other width wholly in one split.
  std::vector<bool> out(file.rows.size(), false);
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < file.rows.size(); ++i) {
    const MeasuredRow& row = file.rows[i];
    bool part =
        row.kind != "collective" || (row.bytes >= min_bytes && row.ranks == row.ranks_per_node);
    if (!part)
      continue;
    std::string model = row.shape.substr(0, row.shape.find(':'));
    if (model == row.shape)
      model.clear();
    // collectives alternate within each launch style and placement
    std::string key = row.kind + "|" + row.op + "|" + row.device + "|" + row.dtype + "|";
    key += std::to_string(row.ranks) + "|" + model + "|";
    if (row.kind == "collective")
      key += row.launch + (row.in_place ? "+in" : "");
    groups[key].push_back(i);
  }
  for (auto& [key, rows] : groups) {
    std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
      const MeasuredRow& x = file.rows[a];
      const MeasuredRow& y = file.rows[b];
      if (x.bytes != y.bytes)
        return x.bytes < y.bytes;
      return reversed_dims(x.shape) < reversed_dims(y.shape);
    });
    for (std::size_t k = 0; k < rows.size(); ++k)
      out[rows[k]] = k % 2 == 0;
  }
  return out;
}

std::vector<DeviceRow> device_rows(const std::vector<MeasuredFile>& files,
                                   const std::string& kind,
                                   const std::string& device,
                                   const devices::DeviceRegistry& registry) {
  std::vector<DeviceRow> out;
  for (const MeasuredFile& file : files) {
    std::vector<bool> split = fit_split(file, 0);
    for (std::size_t i = 0; i < file.rows.size(); ++i) {
      const devices::DeviceSpec* d = registry.find(file.rows[i].device);
      if (file.rows[i].kind == kind && d != nullptr && d->name == device)
        out.push_back({&file, &file.rows[i], d, split[i]});
    }
  }
  return out;
}

std::string file_list(const std::vector<const MeasuredFile*>& rows) {
  std::vector<const MeasuredFile*> seen;
  std::string out;
  for (const MeasuredFile* f : rows) {
    if (std::find(seen.begin(), seen.end(), f) != seen.end())
      continue;
    seen.push_back(f);
    out += (out.empty() ? "" : ", ") + f->path;
  }
  return out;
}

}  // namespace yirage::costmodel
