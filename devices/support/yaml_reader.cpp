#include "devices/support/yaml_reader.h"

#include "devices/support/input_files.h"
#include "devices/support/text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace yirage::devices {
namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// A node that tests false: what a getter returns for an absent key. (A default-constructed
// YAML::Node is a defined null, which tests true.)
YAML::Node undefined_node() {
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string quote_key(std::string_view key) {
  return "'" + std::string(key) + "'";
}

}  // namespace

YamlDoc::YamlDoc(std::string path, std::string text, Diagnostics& diag)
    : path_(std::move(path)), lines_(split_lines(text)), diag_(&diag) {
  try {
    root_ = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    // yaml-cpp reports an unterminated construct one line past the end: point at the last line.
    int line = std::min(e.mark.line + 1, static_cast<int>(lines_.size()));
    int col = line == e.mark.line + 1
                  ? e.mark.column + 1
                  : static_cast<int>(lines_.empty() ? 1 : lines_.back().size() + 1);
    error(SourceLoc{path_, std::max(line, 1), col}, "YAML syntax: " + e.msg);
    root_ = undefined_node();
  }
}

std::optional<std::string> read_file_text(const std::filesystem::path& path, Diagnostics& diag) {
  std::error_code ec;
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path, ec)) {
    diag.error(SourceLoc{path.string(), 0, 0}, "cannot read file");
    return std::nullopt;
  }
  // Far above any real cluster, task, device or measured file (the largest bundled one is
  // under 1 MB); the bound keeps a runaway file from taking minutes and gigabytes to parse.
  constexpr std::uintmax_t kMaxBytes = std::uintmax_t{8} << 20;
  std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && std::filesystem::is_regular_file(path, ec) && size > kMaxBytes) {
    diag.error(SourceLoc{path.string(), 0, 0}, "the file is " + std::to_string(size >> 20) +
                                                   " MiB; input files are read up to 8 MiB");
    return std::nullopt;
  }
  note_input_file(path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  // Names and values reach terminals, JSON and file names: the text must be printable UTF-8.
  std::string what;
  if (std::size_t at = first_unprintable(s, &what); at != std::string::npos) {
    std::size_t line_start = s.rfind('\n', at == 0 ? 0 : at - 1);
    line_start = line_start == std::string::npos || at == 0 ? 0 : line_start + 1;
    int line = 1 + static_cast<int>(std::count(s.begin(), s.begin() + static_cast<long>(at), '\n'));
    diag.error(SourceLoc{path.string(), line, static_cast<int>(at - line_start) + 1},
               "the file holds " + what + "; input files are UTF-8 text");
    return std::nullopt;
  }
  return s;
}

YamlDoc YamlDoc::load(const std::filesystem::path& path, Diagnostics& diag) {
  return YamlDoc(path.string(), read_file_text(path, diag).value_or(""), diag);
}

SourceLoc YamlDoc::loc(const YAML::Node& node) const {
  YAML::Mark m = node.Mark();
  if (m.is_null() || m.line < 0)
    return SourceLoc{path_, 0, 0};
  return SourceLoc{path_, m.line + 1, m.column + 1};
}

void YamlDoc::error(const YAML::Node& at, std::string message) const {
  error(loc(at), std::move(message));
}

void YamlDoc::error(const SourceLoc& at, std::string message) const {
  std::string line;
  if (at.line > 0 && at.line <= static_cast<int>(lines_.size()))
    line = lines_[at.line - 1];
  diag_->error(at, std::move(message), std::move(line));
}

std::optional<std::string> scalar_text(const YamlDoc& doc,
                                       const YAML::Node& n,
                                       std::string_view key) {
  if (!n.IsScalar()) {
    doc.error(n, quote_key(key) + " must be a single value, not a " +
                     (n.IsMap()        ? "mapping"
                      : n.IsSequence() ? "list"
                                       : "null"));
    return std::nullopt;
  }
  // An escape in a quoted scalar ("\e", "\x9b") can still make a control character.
  std::string what;
  if (first_unprintable(n.Scalar(), &what) != std::string::npos) {
    doc.error(n, quote_key(key) + " holds " + what + "; values are printable text");
    return std::nullopt;
  }
  return n.Scalar();
}

MapReader::MapReader(const YamlDoc& doc, const YAML::Node& node, std::string what)
    : doc_(&doc), node_(node), what_(std::move(what)) {
  if (!node.IsMap()) {
    doc.error(node, what_ + " must be a mapping of keys to values");
    return;
  }
  valid_ = true;
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string();
    auto dup = std::find_if(entries_.begin(), entries_.end(),
                            [&](const Entry& e) { return e.key == key; });
    if (dup != entries_.end()) {
      doc.error(it->first, "duplicate key " + quote_key(key) + " (first given at line " +
                               std::to_string(doc.loc(dup->key_node).line) + ")");
      continue;
    }
    entries_.push_back(Entry{key, it->first, it->second});
  }
}

YAML::Node MapReader::get(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end())
    known_.emplace_back(key);
  for (const Entry& e : entries_) {
    if (e.key == key) {
      if (e.value.IsNull()) {
        doc_->error(e.key_node, quote_key(key) + " has no value");
        return undefined_node();
      }
      return e.value;
    }
  }
  return undefined_node();
}

YAML::Node MapReader::require(std::string_view key) {
  bool present = has(key);
  YAML::Node n = get(key);
  if (!present && valid_)
    doc_->error(node_, "missing key " + quote_key(key) + " in " + what_);
  return n;
}

bool MapReader::has(std::string_view key) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const Entry& e) { return e.key == key; });
}

YAML::Node MapReader::key_node(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key)
      return e.key_node;
  }
  return undefined_node();
}

std::optional<std::string> MapReader::string(std::string_view key, bool required) {
  YAML::Node n = required ? require(key) : get(key);
  if (!n)
    return std::nullopt;
  return scalar_text(*doc_, n, key);
}

std::optional<std::string> MapReader::choice(std::string_view key,
                                             const std::vector<std::string>& choices,
                                             bool required) {
  std::optional<std::string> s = string(key, required);
  if (!s)
    return std::nullopt;
  if (std::find(choices.begin(), choices.end(), *s) != choices.end())
    return s;
  std::string hint = did_you_mean(*s, choices);
  doc_->error(get(key), quote_key(key) + " must be " + join_choices(choices) + ", got " +
                            quote_key(*s) + hint);
  return std::nullopt;
}

std::optional<std::int64_t> MapReader::integer(std::string_view key,
                                               bool required,
                                               std::int64_t min) {
  std::optional<std::string> s = string(key, required);
  if (!s)
    return std::nullopt;
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc() && ec != std::errc::result_out_of_range) {
    doc_->error(get(key), quote_key(key) + " must be a whole number, got " + quote_key(*s));
    return std::nullopt;
  }
  if (ptr != s->data() + s->size()) {
    doc_->error(get(key), quote_key(key) + " must be a whole number, got " + quote_key(*s));
    return std::nullopt;
  }
  if (ec == std::errc::result_out_of_range || v > kMaxWholeNumber) {
    doc_->error(get(key), quote_key(key) + " is out of range: " + *s + " (at most " +
                              std::to_string(kMaxWholeNumber) + ")");
    return std::nullopt;
  }
  if (v < min) {
    doc_->error(get(key),
                quote_key(key) + " must be at least " + std::to_string(min) + ", got " + *s);
    return std::nullopt;
  }
  return v;
}

std::optional<double> MapReader::number(std::string_view key, bool required, Sign sign) {
  std::optional<std::string> s = string(key, required);
  if (!s)
    return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc() || ptr != s->data() + s->size() || !std::isfinite(v)) {
    doc_->error(get(key), quote_key(key) + " must be a number, got " + quote_key(*s));
    return std::nullopt;
  }
  if ((v < 0 && sign != Sign::kAny) || (sign == Sign::kPositive && v == 0)) {
    doc_->error(get(key), quote_key(key) + " must be " +
                              (sign == Sign::kPositive ? "positive" : "zero or more") + ", got " +
                              *s);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> MapReader::boolean(std::string_view key) {
  std::optional<std::string> s = string(key);
  if (!s)
    return std::nullopt;
  if (*s == "true")
    return true;
  if (*s == "false")
    return false;
  doc_->error(get(key), quote_key(key) + " must be true or false, got " + quote_key(*s));
  return std::nullopt;
}

std::optional<std::vector<std::string>> MapReader::strings(std::string_view key) {
  YAML::Node n = get(key);
  if (!n)
    return std::nullopt;
  if (!n.IsSequence()) {
    doc_->error(n, quote_key(key) + " must be a list, such as [a, b]");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const YAML::Node& item : n) {
    std::optional<std::string> s = scalar_text(*doc_, item, key);
    if (s)
      out.push_back(*s);
  }
  return out;
}

std::optional<double> MapReader::read_quantity(const YAML::Node& n,
                                               std::string_view key,
                                               Dim want,
                                               Sign sign) const {
  std::optional<std::string> s = scalar_text(*doc_, n, key);
  if (!s)
    return std::nullopt;
  ParsedQuantity q = parse_quantity(*s, want);
  if (!q.error.empty()) {
    doc_->error(n, "bad " + quote_key(key) + ": " + q.error);
    return std::nullopt;
  }
  if ((q.value < 0 && sign != Sign::kAny) || (sign == Sign::kPositive && q.value == 0)) {
    doc_->error(n, quote_key(key) + " must be " +
                       (sign == Sign::kPositive ? "positive" : "zero or more") + ", got " +
                       quote_key(*s));
    return std::nullopt;
  }
  return q.value;
}

void MapReader::finish() {
  for (const Entry& e : entries_) {
    if (std::find(known_.begin(), known_.end(), e.key) != known_.end())
      continue;
    doc_->error(e.key_node,
                "unknown key " + quote_key(e.key) + " in " + what_ + did_you_mean(e.key, known_));
  }
}

}  // namespace yirage::devices
