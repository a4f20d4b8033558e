// A one-line progress indicator for work that runs longer than a second: written to a
// terminal only (never into pipes, files or tests), rewritten in place, erased when done.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace yirage::cli {

class Progress {
 public:
  /// `terminal`: whether `err` is a terminal (Context::err_is_terminal).
  Progress(std::ostream& err, std::string what, bool terminal);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();

  /// Reports one more step done, with what it found; shown once a second has passed.
  void step(const std::string& detail);

 private:
  std::ostream& err_;
  std::string what_;
  bool terminal_;
  bool shown_ = false;
  int steps_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace yirage::cli
