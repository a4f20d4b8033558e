#include "report/csv.h"

#include "devices/support/check.h"

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

}  // namespace

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
