// Reading YAML input files with positions: a parsed document that knows its file's lines,
// and a mapping reader that records every problem as a `file:line:col` diagnostic, refuses
// unknown keys (with "did you mean") and duplicate keys, and checks types and units.
#pragma once

#include "devices/support/diagnostics.h"
#include "devices/support/units.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace yirage::devices {

/// One YAML file, parsed on its own so that positions refer to it.
class YamlDoc {
 public:
  /// Parses `text` as the contents of `path`. A syntax error is recorded in `diag` and
  /// leaves `root()` null.
  YamlDoc(std::string path, std::string text, Diagnostics& diag);

  /// Reads and parses a file; an unreadable file is recorded in `diag`.
  static YamlDoc load(const std::filesystem::path& path, Diagnostics& diag);

  const YAML::Node& root() const { return root_; }

  const std::string& path() const { return path_; }

  Diagnostics& diag() const { return *diag_; }

  /// The 1-based position of a node (line and column of its first character).
  SourceLoc loc(const YAML::Node& node) const;
  void error(const YAML::Node& at, std::string message) const;
  void error(const SourceLoc& at, std::string message) const;

 private:
  std::string path_;
  std::vector<std::string> lines_;
  YAML::Node root_;
  Diagnostics* diag_;
};

/// The largest whole number an input file may give (counts of nodes, layers, tokens...):
/// 2^31 - 1, so that products of two counts (devices x micro-batch, batch x sequence) cannot
/// overflow 64 bits.
inline constexpr std::int64_t kMaxWholeNumber = 2147483647;

/// Whether a quantity may be zero.
enum class Sign { kPositive, kNonNegative, kAny };

/// Reads the keys of one mapping. Every getter marks its key as known; `finish()` reports the
/// keys nobody asked for. Problems are recorded, never thrown: a getter returns nullopt.
class MapReader {
 public:
  /// `what` names the mapping in messages ("network", "node group 2").
  MapReader(const YamlDoc& doc, const YAML::Node& node, std::string what);

  /// False when the node was not a mapping (already reported).
  bool valid() const { return valid_; }

  const YAML::Node& node() const { return node_; }

  const YamlDoc& doc() const { return *doc_; }

  const std::string& what() const { return what_; }

  SourceLoc loc() const { return doc_->loc(node_); }

  /// The value under `key`, or a null node. Marks `key` as known.
  YAML::Node get(std::string_view key);
  /// Like `get`, and records "missing key" when absent.
  YAML::Node require(std::string_view key);
  bool has(std::string_view key) const;
  /// The node of `key` itself (for positions), or a null node.
  YAML::Node key_node(std::string_view key) const;

  std::optional<std::string> string(std::string_view key, bool required = false);
  /// A string among `choices` (case-sensitive), else an error listing them.
  std::optional<std::string> choice(std::string_view key,
                                    const std::vector<std::string>& choices,
                                    bool required = false);
  /// A whole number from `min` to `kMaxWholeNumber`.
  std::optional<std::int64_t> integer(std::string_view key,
                                      bool required = false,
                                      std::int64_t min = 1);
  std::optional<double> number(std::string_view key,
                               bool required = false,
                               Sign sign = Sign::kPositive);
  std::optional<bool> boolean(std::string_view key);
  std::optional<std::vector<std::string>> strings(std::string_view key);

  template <Dim D>
  std::optional<Quantity<D>> quantity(std::string_view key,
                                      bool required = false,
                                      Sign sign = Sign::kPositive) {
    YAML::Node n = required ? require(key) : get(key);
    if (!n)
      return std::nullopt;
    std::optional<double> v = read_quantity(n, key, D, sign);
    if (!v)
      return std::nullopt;
    return Quantity<D>{*v};
  }

  /// Reads a quantity from any scalar node; `key` names it in messages.
  std::optional<double> read_quantity(const YAML::Node& n,
                                      std::string_view key,
                                      Dim want,
                                      Sign sign) const;

  /// Reports unknown keys, each with the closest known key.
  void finish();

 private:
  struct Entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
  };

  const YamlDoc* doc_;
  YAML::Node node_;
  std::string what_;
  bool valid_ = false;
  std::vector<Entry> entries_;
  std::vector<std::string> known_;
};

/// The contents of a file, or nullopt with "cannot read file" recorded in `diag`.
std::optional<std::string> read_file_text(const std::filesystem::path& path, Diagnostics& diag);

/// Scalar text of a node, or nullopt (with an error naming `key`) when it is not a scalar.
std::optional<std::string> scalar_text(const YamlDoc& doc,
                                       const YAML::Node& n,
                                       std::string_view key);

}  // namespace yirage::devices
