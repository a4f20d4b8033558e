#include "report/table.h"

#include "devices/support/check.h"

#include <algorithm>

namespace yirage::report {
namespace {

// Display width of UTF-8 text: continuation bytes take no column.
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

Table::Table(std::vector<std::string> headers) {
  for (std::string& h : headers) {
    bool right = !h.empty() && h.front() == '>';
    right_.push_back(right);
    headers_.push_back(right ? h.substr(1) : h);
  }
}

void Table::add_row(std::vector<std::string> cells) {
  CHECK(cells.size() == headers_.size()) << cells.size() << " cells for " << headers_.size();
  rows_.push_back(std::move(cells));
}

void Table::print(std::ostream& out) const {
  std::vector<std::size_t> widths;
  for (const std::string& h : headers_)
    widths.push_back(width(h));
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size(); ++i)
      widths[i] = std::max(widths[i], width(row[i]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      std::string pad(widths[i] - width(cells[i]), ' ');
      if (i > 0)
        text += "  ";
      text += right_[i] ? pad + cells[i] : cells[i] + (i + 1 < cells.size() ? pad : "");
    }
    out << text << "\n";
  };
  line(headers_);
  for (const auto& row : rows_)
    line(row);
}

}  // namespace yirage::report
