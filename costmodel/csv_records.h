// The bench scripts' own CSV files (bench/overlap.py, bench/sustained.py): comment lines
// first, then a header, then rows looked up by column name, every problem reported as
// file:line:col.
#pragma once

#include "costmodel/measured.h"

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace yirage::costmodel {

/// One data row of such a file, its cells looked up by the header's names.
class CsvRecord {
 public:
  CsvRecord(const std::vector<CsvCell>& header,
            std::vector<CsvCell> cells,
            devices::SourceLoc loc,
            std::string line,
            devices::Diagnostics& diag);

  /// The cell under `name`; empty text (column 1) when the header has none.
  CsvCell at(std::string_view name) const;
  /// The cell under `name` as a positive finite number of at most 1e15; otherwise an error
  /// at its file:line:col, and 0.
  double positive(std::string_view name) const;

 private:
  const std::vector<CsvCell>& header_;
  std::vector<CsvCell> cells_;
  devices::SourceLoc loc_;
  std::string line_;
  devices::Diagnostics& diag_;
};

/// Whether the first line of `path` that is not a comment starts with `prefix`.
bool csv_header_starts_with(const std::filesystem::path& path, std::string_view prefix);

/// Calls `row` with each data row of `path`; rows whose width is not the header's, and the
/// problems `row` reports, are collected and thrown together (devices::InputError).
void read_csv_records(const std::filesystem::path& path,
                      const std::function<void(const CsvRecord&)>& row);

}  // namespace yirage::costmodel
