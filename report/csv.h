// CSV for machines (RFC 4180): numbers in their shortest exact form, no units in the cells
// (the headers name them), text quoted where it needs to be.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace yirage::report {

/// A cell: text, a number, or empty (a value that does not exist for the row).
using CsvCell = std::variant<std::string, double, std::int64_t, std::monostate>;

/// `v` as a cell, empty when absent.
CsvCell csv_optional(const std::optional<double>& v);

/// Writes one line of cells.
void write_csv_line(std::ostream& out, const std::vector<CsvCell>& cells);

}  // namespace yirage::report
