#include "devices/support/diagnostics.h"

#include <algorithm>
#include <fstream>
#include <tuple>

namespace yirage::devices {

std::string SourceLoc::str() const {
  if (line <= 0)
    return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

Diagnostic diagnostic_at(const SourceLoc& loc, std::string message) {
  Diagnostic d{loc, std::move(message), {}};
  std::ifstream in(loc.file);
  std::string line;
  for (int i = 1; i <= loc.line && std::getline(in, line); ++i) {
    if (i == loc.line) {
      if (!line.empty() && line.back() == '\r')
        line.pop_back();
      d.source_line = line;
    }
  }
  return d;
}

std::string render(const Diagnostic& d) {
  std::string out = d.loc.str() + ": error: " + d.message + "\n";
  if (d.loc.line > 0 && !d.source_line.empty()) {
    out += "  " + d.source_line + "\n";
    // Tabs in the source line are kept so the caret lines up under them.
    std::string pad;
    for (int i = 0; i + 1 < d.loc.col && i < static_cast<int>(d.source_line.size()); ++i) {
      pad += d.source_line[i] == '\t' ? '\t' : ' ';
    }
    out += "  " + pad + "^\n";
  }
  return out;
}

void Diagnostics::error(SourceLoc loc, std::string message, std::string source_line) {
  Diagnostic d{std::move(loc), std::move(message), std::move(source_line)};
  // The same problem found twice (e.g. through two references to one node) is reported once.
  if (std::find(items_.begin(), items_.end(), d) == items_.end())
    items_.push_back(std::move(d));
}

namespace {

std::vector<Diagnostic> sorted(std::vector<Diagnostic> items) {
  std::stable_sort(items.begin(), items.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.loc.file, a.loc.line, a.loc.col) <
           std::tie(b.loc.file, b.loc.line, b.loc.col);
  });
  return items;
}

// At most this many diagnostics are shown; a file broken everywhere says how many more.
constexpr std::size_t kShown = 50;

std::string render_all(const std::vector<Diagnostic>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kShown; ++i) {
    out += render(items[i]);
  }
  if (items.size() > kShown) {
    out += "... " + std::to_string(items.size() - kShown) + " more not shown\n";
  }
  if (items.size() > 1)
    out += std::to_string(items.size()) + " errors\n";
  return out;
}

}  // namespace

std::string Diagnostics::render() const {
  return render_all(sorted(items_));
}

void Diagnostics::throw_if_errors() const {
  if (!items_.empty())
    throw InputError(items_);
}

InputError::InputError(std::vector<Diagnostic> items)
    : std::runtime_error(render_all(sorted(items))), items_(sorted(std::move(items))) {}

}  // namespace yirage::devices
