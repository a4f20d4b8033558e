// Library ops that run as one row-wise launch: y = combine(t, r) with t = map(x) (or x itself)
// and r = reduce(t) over t's last dim, broadcast back along the row. Softmax written as
// exp / sum / div, RMSNorm as rms / div and LayerNorm's mean / sub are such chains; as three
// or two launches they write t and r to memory and read them back, as one they read x once
// (a row again from cache) and write y. lower() fuses them and the cost model prices them as
// one kernel (codegen/cost/ugraph_cost.cpp), both through row_chains().
#pragma once

#include "codegen/ir/ugraph.h"

#include <cstdint>
#include <vector>

namespace yirage::codegen {

struct RowChain {
  int first = 0;              // index of the chain's first op in KernelGraph::ops
  int ops = 2;                // 2 (reduce, combine) or 3 (map, reduce, combine)
  OpKind map = OpKind::kExp;  // the unary map (ops == 3)
  OpKind reduce = OpKind::kSum;
  OpKind combine = OpKind::kDiv;
  bool row_left = true;  // combine(t, r); false: combine(r, t)
  int x = 0;             // kernel tensor read
  int out = 0;           // kernel tensor written (the combine's)
  std::int64_t rows = 0, len = 0;

  bool operator==(const RowChain&) const = default;
};

/// The chains of library ops in g (shapes: kernel_shapes(g)), in op order, none overlapping:
/// consecutive library ops where the map's output feeds only the reduction and the combine,
/// the reduction (over the last dim) only the combine, and neither is a graph output.
std::vector<RowChain> row_chains(const KernelGraph& g, const std::vector<Shape>& shapes);

/// "exp/sum/div" or "rms/div".
std::string row_chain_name(const RowChain& c);

}  // namespace yirage::codegen
