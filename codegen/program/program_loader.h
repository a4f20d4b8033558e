// Tensor programs: the input of the superoptimizer, read from a small YAML format
// (data/programs/README.md): named inputs with shapes, operations over named tensors, and
// the outputs. A program becomes a kernel graph of library ops, the reference that every
// µGraph found must equal.
#pragma once

#include "codegen/ir/ugraph.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace yirage::codegen {

struct Program {
  KernelGraph graph;                      // library ops only
  std::vector<std::string> tensor_names;  // per kernel tensor
  std::string file;
};

/// Reads a program file. Throws devices::InputError listing every problem as
/// `file:line:col: error: ...`.
Program load_program(const std::filesystem::path& path);

/// Parses program text as if read from `path` (tests).
Program parse_program(const std::string& text, const std::string& path);

/// The same program with some inputs resized (`name` -> shape); shapes are inferred again.
/// Throws devices::InputError when a name is unknown or the shapes no longer fit.
Program resize_inputs(const Program& p, const std::map<std::string, Shape>& shapes);

/// The bundled programs, data_dir()/programs/*.yaml, in name order.
std::vector<std::filesystem::path> bundled_programs();

/// The best known µGraph of a bundled program (mugraph.md; data/programs/reference/
/// NAME.ugraph.json, README.md there gives each one's source), or nullopt when none is
/// bundled. Throws devices::InputError when the file is malformed or its graph invalid.
std::optional<KernelGraph> load_reference_ugraph(const std::string& program_name);

}  // namespace yirage::codegen
