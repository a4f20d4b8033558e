#include "devices/support/text.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string_view>

namespace yirage::devices {

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return to_lower(a) == to_lower(b);
}

int edit_distance(std::string_view a, std::string_view b) {
  std::string x = to_lower(a);
  std::string y = to_lower(b);
  std::vector<int> row(y.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= x.size(); ++i) {
    int diag = row[0];
    row[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= y.size(); ++j) {
      int up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (x[i - 1] == y[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[y.size()];
}

namespace {

std::size_t common_prefix(std::string_view a, std::string_view b) {
  std::string x = to_lower(a);
  std::string y = to_lower(b);
  std::size_t n = 0;
  while (n < x.size() && n < y.size() && x[n] == y[n])
    ++n;
  return n;
}

}  // namespace

std::string closest(std::string_view word, const std::vector<std::string>& options) {
  int limit = std::max(1, static_cast<int>(word.size()) / 3);
  std::string best;
  int best_distance = limit + 1;
  std::size_t best_prefix = 0;
  for (const std::string& o : options) {
    int d = edit_distance(word, o);
    std::size_t p = common_prefix(word, o);
    // Fewer edits first; among equals, the option that shares the longer prefix.
    if (d < best_distance || (d == best_distance && p > best_prefix)) {
      best_distance = d;
      best_prefix = p;
      best = o;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& options) {
  std::string best = closest(word, options);
  return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}

std::string join_choices(const std::vector<std::string>& options) {
  std::string out;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (i > 0)
      out += i + 1 == options.size() ? " or " : ", ";
    out += options[i];
  }
  return out;
}

}  // namespace yirage::devices
