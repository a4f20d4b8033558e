#include "costmodel/nccl_tests.h"

#include "devices/support/diagnostics.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <utility>

namespace yirage::costmodel {
namespace {

using devices::Diagnostics;
using devices::SourceLoc;

// A whitespace-separated token and its 1-based column.
struct Token {
  std::string text;
  int col = 1;
};

std::vector<Token> tokens(const std::string& line) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])))
      ++i;
    std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i])))
      ++i;
    if (i > start)
      out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return out;
}

std::optional<double> number(const std::string& s) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// nccl-tests' program names and yirage's collectives.
const std::vector<std::pair<std::string, std::string>>& programs() {
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"all_reduce", "all_reduce"},
      {"all_gather", "all_gather"},
      {"reduce_scatter", "reduce_scatter"},
      {"broadcast", "broadcast"},
      {"alltoall", "all_to_all"},
      {"sendrecv", "send_recv"},
      {"reduce", "reduce"}};
  return names;
}

// The collective of a program name ("./build/all_reduce_perf", "all_gather_perf_mpi").
std::string collective_of(std::string name) {
  name = std::filesystem::path(name).filename().string();
  std::size_t perf = name.find("_perf");
  if (perf == std::string::npos)
    return {};
  name = name.substr(0, perf);
  for (const auto& [program, op] : programs()) {
    if (name == program)
      return op;
  }
  return {};
}

// nccl-tests' element types as yirage's dtype names (others kept as they are).
std::string dtype_of(const std::string& type) {
  static const std::map<std::string, std::string> types = {
      {"bfloat16", "bf16"}, {"half", "fp16"},  {"float", "fp32"}, {"double", "fp64"},
      {"int8", "int8"},     {"uint8", "int8"}, {"f8e4m3", "fp8"}, {"f8e5m2", "fp8"}};
  auto it = types.find(type);
  return it == types.end() ? type : it->second;
}

struct Header {
  std::string op;
  std::string launch = "eager";
  std::string device;
  std::map<std::string, std::int64_t> per_host;  // ranks on each host
  std::int64_t ranks = 0;
  std::vector<std::size_t> time_columns;  // of the data rows: out of place, in place
};

// Reads one '#' line into the header.
void read_header_line(const std::string& line, Header& h) {
  std::vector<Token> t = tokens(line.substr(1));
  if (t.empty())
    return;
  if (line.find("Collective test starting:") != std::string::npos) {
    h.op = collective_of(t.back().text);
  } else if (t[0].text == "nThread") {
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      if (t[i].text == "graph:" && number(t[i + 1].text).value_or(0) > 0)
        h.launch = "graph";
    }
  } else if (line.find("Blocking Enabled") != std::string::npos) {
    h.launch = "synced";
  } else if (t[0].text == "Rank") {
    auto on = std::find_if(t.begin(), t.end(), [](const Token& x) { return x.text == "on"; });
    std::size_t bracket = line.find(']');
    if (on != t.end() && on + 1 != t.end() && bracket != std::string::npos) {
      ++h.per_host[(on + 1)->text];
      ++h.ranks;
      std::string name = line.substr(bracket + 1);
      name.erase(0, name.find_first_not_of(" \t"));
      name.erase(name.find_last_not_of(" \t\r") + 1);
      h.device = name;
    }
  } else if (t[0].text == "size" && h.time_columns.empty()) {
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i].text == "time" || t[i].text == "cputime")
        h.time_columns.push_back(i);
    }
  }
}

// The measured rows of the data lines `rows`, two per line (out of place, then in place).
void read_rows(const std::string& path,
               const Header& h,
               const std::vector<std::pair<int, std::string>>& rows,
               Diagnostics& diag,
               MeasuredFile& file) {
  std::int64_t per_node = 0;
  for (const auto& [host, n] : h.per_host)
    per_node = std::max(per_node, n);
  for (const auto& [line_no, text_line] : rows) {
    std::vector<Token> t = tokens(text_line);
    SourceLoc at{path, line_no, 1};
    std::optional<double> size = number(t[0].text);
    if (size.value_or(0) <= 0)
      continue;  // -b 0: nothing moved
    if (t.size() <= h.time_columns.back() + 3) {
      diag.error(at,
                 "a row of nccl-tests output needs " + std::to_string(h.time_columns.back() + 4) +
                     " columns, found " + std::to_string(t.size()),
                 text_line);
      continue;
    }
    for (std::size_t place = 0; place < h.time_columns.size(); ++place) {
      std::size_t c = h.time_columns[place];
      std::optional<double> us = number(t[c].text);
      if (!us || *us <= 0) {
        diag.error({path, line_no, t[c].col},
                   "time must be a positive number of microseconds, got '" + t[c].text + "'",
                   text_line);
        continue;
      }
      std::optional<double> wrong = number(t[c + 3].text);  // "N/A" without validation
      if (wrong && *wrong > 0) {
        diag.error({path, line_no, t[c + 3].col},
                   "nccl-tests reported " + t[c + 3].text +
                       " wrong elements: the run is not a "
                       "valid measurement",
                   text_line);
        continue;
      }
      MeasuredRow r;
      r.kind = "collective";
      r.op = h.op;
      r.device = h.device;
      r.ranks = h.ranks;
      r.ranks_per_node = per_node;
      r.bytes = size.value_or(0);
      r.dtype = dtype_of(t[2].text);
      r.time_s = *us * 1e-6;
      r.stat = "mean";
      r.launch = h.launch;
      r.in_place = place == 1;
      r.loc = at;
      file.rows.push_back(std::move(r));
    }
  }
}

}  // namespace

bool is_nccl_tests_output(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  for (int n = 0; n < 64 && std::getline(in, line); ++n) {
    if (line.rfind("# nThread ", 0) == 0 && line.find(" nGpus ") != std::string::npos)
      return true;
  }
  return false;
}

MeasuredFile parse_nccl_tests(const std::string& path, const std::string& text) {
  Diagnostics diag;
  MeasuredFile file;
  file.path = path;
  Header h;
  bool data = false;
  std::vector<std::pair<int, std::string>> rows;  // (line number, text)
  for (const auto& [line_no, line] : text_lines(text)) {
    if (line.front() == '#') {
      if (!data) {
        read_header_line(line, h);
        file.provenance.push_back(line.substr(line.size() > 1 ? 2 : 1));
      }
      continue;
    }
    std::vector<Token> t = tokens(line);
    if (t.empty() || !number(t[0].text))
      continue;  // NCCL's own log lines (NCCL_DEBUG=INFO) and the like
    data = true;
    rows.emplace_back(line_no, line);
  }
  if (h.op.empty())
    h.op = collective_of(std::filesystem::path(path).stem().string() + "_perf");
  if (h.op.empty()) {
    h.op = collective_of(std::filesystem::path(path).stem().string());
  }
  if (h.op.empty()) {
    diag.error(SourceLoc{path, 1, 1},
               "nccl-tests output without '# Collective test starting: NAME_perf', and the file "
               "name names no collective; name the file after the test (all_reduce_perf.txt)");
  }
  if (h.device.empty() || h.ranks == 0) {
    diag.error(SourceLoc{path, 1, 1},
               "nccl-tests output without '#  Rank N ... device N [...] NAME' lines: the device "
               "and ranks are unknown");
  }
  if (h.time_columns.empty())
    h.time_columns = {5, 9};  // size count type redop root time algbw busbw #wrong time ...
  read_rows(path, h, rows, diag, file);
  diag.throw_if_errors();
  return file;
}

}  // namespace yirage::costmodel
