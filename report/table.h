// A plain text table with aligned columns, for human output.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace yirage::report {

class Table {
 public:
  /// A header per column; a header starting with '>' right-aligns its column (the '>' is
  /// not printed).
  explicit Table(std::vector<std::string> headers);
  void add_row(std::vector<std::string> cells);
  void print(std::ostream& out) const;

  std::size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace yirage::report
