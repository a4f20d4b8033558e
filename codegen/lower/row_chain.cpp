#include "codegen/lower/row_chain.h"

#include "codegen/ir/op.h"

#include <algorithm>

namespace yirage::codegen {
namespace {

bool reduces_rows(const KernelOp& op, const std::vector<Shape>& shapes) {
  if (!is_reduction(op.kind))
    return false;
  const Shape& in = shapes[static_cast<std::size_t>(op.in[0])];
  return op.dim + 1 == static_cast<int>(in.size());
}

}  // namespace

std::vector<RowChain> row_chains(const KernelGraph& g, const std::vector<Shape>& shapes) {
  // Each op's first output tensor, and how many ops read each tensor.
  std::vector<int> out(g.ops.size());
  int next = static_cast<int>(g.inputs.size());
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    out[i] = next;
    const KernelOp& op = g.ops[i];
    next += op.kind == OpKind::kCustom
                ? static_cast<int>(g.blocks[static_cast<std::size_t>(op.block)].outputs.size())
                : 1;
  }
  std::vector<int> readers(static_cast<std::size_t>(next), 0);
  for (const KernelOp& op : g.ops)
    for (int u : op.in)
      ++readers[static_cast<std::size_t>(u)];
  for (int o : g.outputs)
    readers[static_cast<std::size_t>(o)] += 1000;  // a graph output is never an intermediate
  auto reads = [&](int t) {
    return readers[static_cast<std::size_t>(t)];
  };

  std::vector<RowChain> chains;
  std::size_t i = 0;
  while (i + 1 < g.ops.size()) {
    // A map in front of the reduction, when its output feeds only the reduction and combine.
    const KernelOp& head = g.ops[i];
    bool mapped = is_unary(head.kind) && i + 2 < g.ops.size() && reads(out[i]) == 2;
    std::size_t ri = mapped ? i + 1 : i;
    const KernelOp& red = g.ops[ri];
    const KernelOp& comb = g.ops[ri + 1];
    int t = mapped ? out[i] : (red.in.empty() ? -1 : red.in[0]);
    bool ok = reduces_rows(red, shapes) && red.in[0] == t && reads(out[ri]) == 1 &&
              is_binary(comb.kind) &&
              ((comb.in[0] == t && comb.in[1] == out[ri]) ||
               (comb.in[1] == t && comb.in[0] == out[ri])) &&
              shapes[static_cast<std::size_t>(out[ri + 1])] == shapes[static_cast<std::size_t>(t)];
    if (!ok) {
      ++i;
      continue;
    }
    RowChain c;
    c.first = static_cast<int>(i);
    c.ops = mapped ? 3 : 2;
    c.map = mapped ? head.kind : OpKind::kExp;
    c.reduce = red.kind;
    c.combine = comb.kind;
    c.row_left = comb.in[0] == t;
    c.x = mapped ? head.in[0] : t;
    c.out = out[ri + 1];
    const Shape& ts = shapes[static_cast<std::size_t>(t)];
    c.len = ts.back();
    c.rows = elements(ts) / c.len;
    chains.push_back(c);
    i += static_cast<std::size_t>(c.ops);
  }
  return chains;
}

std::string row_chain_name(const RowChain& c) {
  return (c.ops == 3 ? op_name(c.map) + "/" : std::string()) + op_name(c.reduce) + "/" +
         op_name(c.combine);
}

}  // namespace yirage::codegen
