#include "devices/support/text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
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

namespace yirage::devices {
namespace {

std::string hex_byte(unsigned char b) {
  const char* digits = "0123456789ABCDEF";
  return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

// The length of the UTF-8 sequence at `i` and its code point, or 0 when it is malformed
// (overlong forms, surrogates and code points above U+10FFFF included).
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t* cp) {
  auto b = static_cast<unsigned char>(s[i]);
  std::size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  std::uint32_t c = n == 1 ? b : b & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    auto x = static_cast<unsigned char>(s[i + k]);
    if ((x >> 6) != 2)
      return 0;
    c = (c << 6) | (x & 0x3F);
  }
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
    return 0;
  *cp = c;
  return n;
}

}  // namespace

std::size_t first_unprintable(std::string_view text, std::string* what) {
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t cp = 0;
    std::size_t n = utf8_sequence(text, i, &cp);
    if (n == 0) {
      *what = "a byte that is not UTF-8 (" + hex_byte(static_cast<unsigned char>(text[i])) + ")";
      return i;
    }
    bool control = (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F ||
                   (cp >= 0x80 && cp <= 0x9F);
    if (control) {
      const char* digits = "0123456789ABCDEF";
      *what = std::string("a control character (U+00") + digits[cp >> 4] + digits[cp & 15] + ")";
      return i;
    }
    i += n;
  }
  return std::string_view::npos;
}

}  // namespace yirage::devices
