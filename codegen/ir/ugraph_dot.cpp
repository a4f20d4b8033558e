// Graphviz and plain-text views of a µGraph (declared in ugraph_json.h).
#include "codegen/ir/ugraph_json.h"

#include <sstream>

namespace yirage::codegen {
namespace {

std::string map_text(const DimMap& m) {
  std::string s = "(";
  for (std::size_t a = 0; a < 3; ++a)
    s += (a ? "," : "") + (m[a] == kReplicated ? std::string("-") : std::to_string(m[a]));
  return s + ")";
}

std::string grid_text(const Grid& g) {
  return std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]);
}

std::string block_op_text(const BlockOp& op) {
  std::string s = op.kind == OpKind::kAccum ? "accum_" + accum_name(op.accum) : op_name(op.kind);
  s += "(";
  for (std::size_t i = 0; i < op.in.size(); ++i)
    s += (i ? ", " : "") + std::string("b") + std::to_string(op.in[i]);
  return s + ")";
}

std::string kernel_op_text(const KernelGraph& g, const KernelOp& op) {
  std::string s = op_name(op.kind) + "(";
  for (std::size_t i = 0; i < op.in.size(); ++i) {
    int t = op.in[i];
    s += (i ? ", " : "") + (t < static_cast<int>(g.inputs.size())
                                ? g.inputs[static_cast<std::size_t>(t)].name
                                : "t" + std::to_string(t));
  }
  if (is_reduction(op.kind))
    s += ", dim " + std::to_string(op.dim);
  return s + ")";
}

void dot_block(std::ostringstream& o, const KernelGraph& g, std::size_t k) {
  const KernelOp& op = g.ops[k];
  const BlockGraph& b = g.blocks[static_cast<std::size_t>(op.block)];
  std::string p = "k" + std::to_string(k) + "b";
  o << "  subgraph cluster_" << k << " {\n    label=\"custom op " << k << ": grid "
    << grid_text(b.grid) << ", for-loop " << b.forloop << "\";\n";
  for (std::size_t i = 0; i < b.inputs.size(); ++i)
    o << "    " << p << i << " [shape=invhouse,label=\"iterator " << i << "\\nimap "
      << map_text(b.inputs[i].imap) << " fmap " << b.inputs[i].fmap << "\"];\n";
  for (std::size_t i = 0; i < b.ops.size(); ++i) {
    std::size_t t = b.inputs.size() + i;
    o << "    " << p << t << " [label=\"b" << t << " = " << block_op_text(b.ops[i]) << "\"];\n";
    for (int u : b.ops[i].in)
      o << "    " << p << u << " -> " << p << t << ";\n";
  }
  for (std::size_t i = 0; i < b.outputs.size(); ++i) {
    o << "    " << p << "out" << i << " [shape=house,label=\"saver omap "
      << map_text(b.outputs[i].omap) << "\"];\n";
    o << "    " << p << b.outputs[i].tensor << " -> " << p << "out" << i << ";\n";
  }
  o << "  }\n";
}

}  // namespace

std::string ugraph_to_dot(const KernelGraph& g) {
  std::ostringstream o;
  o << "digraph \"" << g.name << "\" {\n  rankdir=TB;\n  node [shape=box,fontname=monospace];\n";
  for (std::size_t i = 0; i < g.inputs.size(); ++i)
    o << "  t" << i << " [shape=ellipse,label=\"" << g.inputs[i].name << " "
      << shape_text(g.inputs[i].shape) << "\"];\n";
  int next = static_cast<int>(g.inputs.size());
  for (std::size_t k = 0; k < g.ops.size(); ++k) {
    const KernelOp& op = g.ops[k];
    if (op.kind == OpKind::kCustom)
      dot_block(o, g, k);
    else
      o << "  k" << k << " [label=\"" << kernel_op_text(g, op) << "\"];\n";
    std::string node =
        op.kind == OpKind::kCustom ? "k" + std::to_string(k) + "b0" : "k" + std::to_string(k);
    for (int t : op.in)
      o << "  t" << t << " -> " << node << ";\n";
    int outs = op.kind == OpKind::kCustom
                   ? static_cast<int>(g.blocks[static_cast<std::size_t>(op.block)].outputs.size())
                   : 1;
    for (int j = 0; j < outs; ++j, ++next) {
      o << "  t" << next << " [shape=ellipse,label=\"t" << next << "\"];\n";
      o << "  "
        << (op.kind == OpKind::kCustom ? "k" + std::to_string(k) + "bout" + std::to_string(j)
                                       : node)
        << " -> t" << next << ";\n";
    }
  }
  for (int t : g.outputs)
    o << "  t" << t << " [peripheries=2];\n";
  o << "}\n";
  return o.str();
}

std::string ugraph_text(const KernelGraph& g) {
  std::ostringstream o;
  int next = static_cast<int>(g.inputs.size());
  for (const KernelOp& op : g.ops) {
    if (op.kind != OpKind::kCustom) {
      o << "  t" << next++ << " = " << kernel_op_text(g, op) << "\n";
      continue;
    }
    const BlockGraph& b = g.blocks[static_cast<std::size_t>(op.block)];
    o << "  " << kernel_op_text(g, op) << ": grid " << grid_text(b.grid) << ", for-loop "
      << b.forloop << "\n";
    for (std::size_t i = 0; i < b.inputs.size(); ++i)
      o << "    b" << i << " = iterator(input " << b.inputs[i].input << ", imap "
        << map_text(b.inputs[i].imap) << ", fmap " << b.inputs[i].fmap << ")\n";
    for (std::size_t i = 0; i < b.ops.size(); ++i)
      o << "    b" << b.inputs.size() + i << " = " << block_op_text(b.ops[i]) << "\n";
    for (const BlockOutput& out : b.outputs)
      o << "    t" << next++ << " = save(b" << out.tensor << ", omap " << map_text(out.omap)
        << ")\n";
  }
  o << "  outputs:";
  for (int t : g.outputs)
    o << " t" << t;
  o << "\n";
  return o.str();
}

}  // namespace yirage::codegen
