// A tiny code writer for the backends: lines at the current indent, and blocks that indent.
#pragma once

#include <sstream>
#include <string>

namespace yirage::codegen {

class CodeWriter {
 public:
  /// Appends one line at the current indent (an empty string gives an empty line).
  CodeWriter& line(const std::string& s) {
    if (!s.empty())
      out_ << std::string(static_cast<std::size_t>(indent_) * 2, ' ') << s;
    out_ << '\n';
    return *this;
  }

  /// `head {`, then indents until close().
  CodeWriter& open(const std::string& head) {
    line(head + " {");
    ++indent_;
    return *this;
  }

  CodeWriter& close(const std::string& tail = "}") {
    --indent_;
    return line(tail);
  }

  /// Appends raw text as is (a prelude).
  CodeWriter& raw(const std::string& s) {
    out_ << s;
    return *this;
  }

  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
  int indent_ = 0;
};

}  // namespace yirage::codegen
