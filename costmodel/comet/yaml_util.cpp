#include "costmodel/comet/yaml_util.h"

#include <cctype>
#include <charconv>

namespace yirage::costmodel::comet {

using devices::MapReader;

std::optional<bool> read_bool(MapReader& m, std::string_view key) {
  std::optional<std::string> s = m.string(key);
  if (!s)
    return std::nullopt;
  if (*s == "true" || *s == "True" || *s == "TRUE")
    return true;
  if (*s == "false" || *s == "False" || *s == "FALSE")
    return false;
  m.doc().error(m.get(key), "'" + std::string(key) + "' must be true or false, got '" + *s + "'");
  return std::nullopt;
}

std::optional<std::int64_t> read_int(MapReader& m,
                                     std::string_view key,
                                     bool required,
                                     std::int64_t min) {
  return m.integer(key, required, min);
}

std::optional<double> read_number(MapReader& m, std::string_view key) {
  return m.number(key, false, devices::Sign::kNonNegative);
}

namespace {

void skip_spaces(const std::string& t, std::size_t& i) {
  while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i])))
    ++i;
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

std::string read_word(const std::string& t, std::size_t& i) {
  std::size_t start = i;
  while (i < t.size() && is_word_char(t[i]))
    ++i;
  return t.substr(start, i - start);
}

// Reads "[a, b, c]" starting at '['.
bool read_list(const std::string& t, std::size_t& i, Assignment& a, std::string& error) {
  ++i;
  while (true) {
    skip_spaces(t, i);
    std::string w = read_word(t, i);
    if (w.empty()) {
      error = "expected a factor in the list of '" + a.dim + "'";
      return false;
    }
    a.values.push_back(w);
    skip_spaces(t, i);
    if (i < t.size() && t[i] == ',') {
      ++i;
      continue;
    }
    if (i < t.size() && t[i] == ']') {
      ++i;
      return true;
    }
    error = "expected ',' or ']' in the list of '" + a.dim + "'";
    return false;
  }
}

}  // namespace

std::optional<std::vector<Assignment>> parse_assignments(const std::string& text,
                                                         std::string& error) {
  std::vector<Assignment> out;
  std::size_t i = 0;
  while (true) {
    skip_spaces(text, i);
    if (i >= text.size())
      return out;
    Assignment a;
    a.dim = read_word(text, i);
    skip_spaces(text, i);
    if (a.dim.empty() || i >= text.size() || text[i] != '=') {
      error = "expected DIM=VALUE, got '" + text.substr(i) + "'";
      return std::nullopt;
    }
    ++i;
    skip_spaces(text, i);
    if (i < text.size() && text[i] == '[') {
      if (!read_list(text, i, a, error))
        return std::nullopt;
    } else {
      std::string w = read_word(text, i);
      if (w.empty()) {
        error = "expected a value after '" + a.dim + "='";
        return std::nullopt;
      }
      a.values.push_back(w);
    }
    out.push_back(std::move(a));
  }
}

std::optional<std::pair<std::string, std::int64_t>> parse_instance_name(const std::string& s) {
  std::size_t open = s.find('[');
  if (open == std::string::npos)
    return std::make_pair(s, std::int64_t{1});
  std::size_t dots = s.find("..", open);
  std::size_t close = s.find(']', open);
  if (dots == std::string::npos || close == std::string::npos || close != s.size() - 1)
    return std::nullopt;
  std::int64_t lo = 0, hi = 0;
  auto r1 = std::from_chars(s.data() + open + 1, s.data() + dots, lo);
  auto r2 = std::from_chars(s.data() + dots + 2, s.data() + close, hi);
  if (r1.ec != std::errc() || r2.ec != std::errc() || r1.ptr != s.data() + dots ||
      r2.ptr != s.data() + close || hi < lo)
    return std::nullopt;
  return std::make_pair(s.substr(0, open), hi - lo + 1);
}

}  // namespace yirage::costmodel::comet
