// Where a value came from in an input file, and the collection of input errors that is
// reported to the user as `file:line:col: error: message`, the source line and a caret.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace yirage::devices {

/// A position in an input file. Lines and columns count from 1; 0 means unknown.
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;

  bool operator==(const SourceLoc&) const = default;
  /// "file:line:col", or "file" when the position is unknown.
  std::string str() const;
};

/// One problem in an input file.
struct Diagnostic {
  SourceLoc loc;
  std::string message;
  std::string source_line;  // the text of line `loc.line`, without its newline

  bool operator==(const Diagnostic&) const = default;
};

/// A diagnostic at `loc`, with the source line read from `loc.file` (for problems found
/// after loading, such as a model too large for the cluster).
Diagnostic diagnostic_at(const SourceLoc& loc, std::string message);

/// Formats one diagnostic in the style of a compiler:
///   file:line:col: error: message
///     source line
///     ^
std::string render(const Diagnostic& d);

/// Collects every problem found while reading input, so that one run reports them all.
class Diagnostics {
 public:
  void error(SourceLoc loc, std::string message, std::string source_line = {});

  bool empty() const { return items_.empty(); }

  const std::vector<Diagnostic>& items() const { return items_; }

  /// All diagnostics, sorted by file, line and column (ties keep their order).
  std::string render() const;
  /// Throws `InputError` when any problem was recorded.
  void throw_if_errors() const;

 private:
  std::vector<Diagnostic> items_;
};

/// Bad input: thrown once per load, after every problem in it was collected. Only the
/// `main` of cli and gui catch it (exit code 2).
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> items);

  const std::vector<Diagnostic>& items() const { return items_; }

 private:
  std::vector<Diagnostic> items_;
};

/// Valid input that has no answer: the task fits the cluster in no layout, or asks for a
/// precision no device of it computes in. The CLI's exit code 3, not 2.
class NoAnswerError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace yirage::devices
