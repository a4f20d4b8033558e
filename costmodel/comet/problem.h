// The workload of a COMET compound operation (problem YAML), and the constants table that
// gives numbers to the symbolic names used in problem and mapping files.
// Source: COMET (arXiv 2509.00599), comet-model.md §2.1 (inputs) and §2.1.2 (problem).
#pragma once

#include "devices/support/diagnostics.h"
#include "devices/support/yaml_reader.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace yirage::costmodel::comet {

using devices::SourceLoc;

/// Symbol -> value as written (a number, or a name such as a dimension).
struct Constants {
  std::map<std::string, std::string> values;

  /// The number `text` stands for: a literal, or a constant holding one; nullopt otherwise.
  std::optional<std::int64_t> number(const std::string& text) const;
  /// The name `text` stands for: a constant's value, or `text` itself.
  std::string name(const std::string& text) const;

  bool operator==(const Constants&) const = default;
};

/// A constants file (`const:` mapping); an empty path gives an empty table.
Constants load_constants(const std::filesystem::path& path);
Constants parse_constants(const std::string& path, const std::string& text);

/// One tensor of an operation. Each rank of the projection is a sum of dimensions.
struct TensorUse {
  std::string name;
  std::vector<std::vector<std::string>> projection;
  bool read_write = false;  // the operation's output (accumulated)

  bool operator==(const TensorUse&) const = default;
};

/// One basic operation of the compound op, e.g. GEMM or ROWMAX.
struct Operation {
  std::string name;
  SourceLoc loc;
  std::vector<std::string> ins;
  std::string out;
  std::vector<std::string> dims;
  std::vector<TensorUse> tensors;

  const TensorUse* tensor(const std::string& name) const;

  bool operator==(const Operation&) const = default;
};

struct ProblemSpec {
  std::string path;
  std::vector<std::string> dims;  // global dimensions, in order
  std::map<std::string, std::int64_t> sizes;
  std::vector<std::string> ins, outs;  // global io
  std::vector<Operation> ops;

  const Operation* op(const std::string& name) const;
  /// A tensor that is neither a global input nor output: produced inside the compound op.
  bool intermediate(const std::string& tensor) const;
  /// The projection of `tensor` as used by op `tag` (or by any op, if `tag` does not use it).
  const TensorUse* tensor_use(const std::string& tag, const std::string& tensor) const;

  bool operator==(const ProblemSpec&) const = default;
};

ProblemSpec load_problem(const std::filesystem::path& path, const Constants& constants);
ProblemSpec parse_problem(const std::string& path,
                          const std::string& text,
                          const Constants& constants);

/// Reads "A,B" or [A, B] under `key` as a list of names.
std::vector<std::string> read_name_list(devices::MapReader& m, std::string_view key);

}  // namespace yirage::costmodel::comet
