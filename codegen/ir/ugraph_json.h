// µGraphs as JSON (nlohmann-json) with a format name and version tag, so that saved µGraphs
// are refused clearly when the schema moves on (Mirage issues #217, #735), and as Graphviz
// DOT for viewing.
#pragma once

#include "codegen/ir/ugraph.h"

#include <string>

namespace yirage::codegen {

inline constexpr int kUgraphJsonVersion = 1;

/// The JSON text of a µGraph (stable key order, two-space indent).
std::string ugraph_to_json(const KernelGraph& g);

/// Reads a µGraph written by ugraph_to_json; `file` names it in messages. Throws
/// devices::InputError on malformed text, another format or version, or an invalid graph.
KernelGraph ugraph_from_json(const std::string& text, const std::string& file);

/// A Graphviz digraph: kernel ops as boxes, each graph-defined op as a cluster holding its
/// block graph (grid, for-loop, maps on the edges).
std::string ugraph_to_dot(const KernelGraph& g);

/// A few lines of text for people: one per kernel op, block ops indented.
std::string ugraph_text(const KernelGraph& g);

}  // namespace yirage::codegen
