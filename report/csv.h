// CSV for machines (RFC 4180): numbers in their shortest exact form, no units in the cells
// (the headers name them), text quoted where it needs to be.
#pragma once

#include <nlohmann/json.hpp>
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

/// Writes an array of JSON objects (a document's plans or rows) as CSV: a column per leaf,
/// named by its path ("breakdown_s.compute", "layout.text"), in the order leaves first
/// appear; lists of values joined by ';'; null and absent leaves empty; lists of objects
/// (a mixed plan's groups, an estimate's kernels) left out.
void write_csv_table(std::ostream& out, const nlohmann::ordered_json& rows);

}  // namespace yirage::report
