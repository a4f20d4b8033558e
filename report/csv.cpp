#include "report/csv.h"

#include "devices/support/check.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace yirage::report {
namespace {

std::string text_cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos)
    return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"')
      q += '"';
    q += c;
  }
  return q + "\"";
}

std::string number_cell(double v) {
  CHECK(std::isfinite(v)) << "a CSV cell is not a finite number";
  std::array<char, 32> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  CHECK(ec == std::errc()) << "a number does not fit its cell";
  return std::string(buf.data(), end);
}

// The leaves of `j` under `prefix`, as cells by column name.
void leaves(const nlohmann::ordered_json& j,
            const std::string& prefix,
            std::vector<std::pair<std::string, CsvCell>>* out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      std::string path = prefix;
      if (!path.empty())
        path += '.';
      path += key;
      leaves(value, path, out);
    }
    return;
  }
  if (j.is_array()) {
    std::string joined;
    for (const auto& v : j) {
      if (v.is_structured())
        return;  // a list of objects has no one cell
      if (!joined.empty())
        joined += ';';
      joined += v.is_string() ? v.get<std::string>() : v.dump();
    }
    out->emplace_back(prefix, joined);
    return;
  }
  if (j.is_string())
    out->emplace_back(prefix, j.get<std::string>());
  else if (j.is_boolean())
    out->emplace_back(prefix, std::string(j.get<bool>() ? "true" : "false"));
  else if (j.is_number_integer())
    out->emplace_back(prefix, j.get<std::int64_t>());
  else if (j.is_number())
    out->emplace_back(prefix, j.get<double>());
  else
    out->emplace_back(prefix, std::monostate{});
}

}  // namespace

void write_csv_table(std::ostream& out, const nlohmann::ordered_json& rows) {
  CHECK(rows.is_array()) << "a CSV table is an array of rows";
  std::vector<std::vector<std::pair<std::string, CsvCell>>> cells;
  std::vector<std::string> columns;
  for (const auto& row : rows) {
    cells.emplace_back();
    leaves(row, "", &cells.back());
    for (const auto& [name, cell] : cells.back()) {
      if (std::find(columns.begin(), columns.end(), name) == columns.end())
        columns.push_back(name);
    }
  }
  std::vector<CsvCell> line(columns.begin(), columns.end());
  write_csv_line(out, line);
  for (const auto& row : cells) {
    line.assign(columns.size(), std::monostate{});
    for (const auto& [name, cell] : row) {
      auto at = std::find(columns.begin(), columns.end(), name) - columns.begin();
      line[static_cast<std::size_t>(at)] = cell;
    }
    write_csv_line(out, line);
  }
}

CsvCell csv_optional(const std::optional<double>& v) {
  return v ? CsvCell(*v) : CsvCell(std::monostate{});
}

void write_csv_line(std::ostream& out, const std::vector<CsvCell>& cells) {
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0)
      out << ',';
    const CsvCell& c = cells[i];
    if (const auto* s = std::get_if<std::string>(&c))
      out << text_cell(*s);
    else if (const auto* d = std::get_if<double>(&c))
      out << number_cell(*d);
    else if (const auto* n = std::get_if<std::int64_t>(&c))
      out << *n;
  }
  out << "\n";
}

}  // namespace yirage::report
