#include "cli/progress.h"

#include "devices/support/units.h"

namespace yirage::cli {

Progress::Progress(std::ostream& err, std::string what, bool terminal)
    : err_(err),
      what_(std::move(what)),
      terminal_(terminal),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (shown_)
    err_ << "\r\033[K" << std::flush;  // carriage return, erase the line
}

void Progress::step(const std::string& detail) {
  ++steps_;
  if (!terminal_)
    return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed < 1)
    return;
  shown_ = true;
  err_ << "\r\033[K" << what_ << ": " << steps_ << " done, " << detail << " ("
       << devices::format_number(elapsed, 2) << " s)" << std::flush;
}

}  // namespace yirage::cli
