#include "codegen/lower/block_program.h"

#include "devices/support/check.h"

#include <algorithm>
#include <sstream>

namespace yirage::codegen {
namespace {

// A tile's lifetime in schedule positions: 0 loads the input tiles, in-loop op i runs at
// i + 1, the loop ends at L + 1, and after-loop op j runs at L + 2 + j.
struct Interval {
  int tensor = 0;
  int buffer = 0;  // 0, or 1 for an input tile's second pipeline buffer
  std::int64_t size = 0;
  int begin = 0, end = 0;
};

std::int64_t rounded(std::int64_t elems) {
  return (elems + 3) / 4 * 4;
}  // 16-byte slots

std::vector<Interval> lifetimes(const LoweredBlock& b) {
  const BlockGraph& g = b.graph;
  std::size_t ni = g.inputs.size();
  std::vector<int> pos(g.tensor_count(), 0);
  int loop_end = static_cast<int>(b.in_loop.size()) + 1;
  for (std::size_t i = 0; i < b.in_loop.size(); ++i)
    pos[ni + static_cast<std::size_t>(b.in_loop[i])] = static_cast<int>(i) + 1;
  for (std::size_t j = 0; j < b.after.size(); ++j)
    pos[ni + static_cast<std::size_t>(b.after[j])] = loop_end + 1 + static_cast<int>(j);
  std::vector<int> last(pos);
  for (std::size_t o = 0; o < g.ops.size(); ++o)
    for (int u : g.ops[o].in)
      last[static_cast<std::size_t>(u)] = std::max(last[static_cast<std::size_t>(u)], pos[ni + o]);
  int end = loop_end + 1 + static_cast<int>(b.after.size());
  for (const BlockOutput& o : g.outputs)
    last[static_cast<std::size_t>(o.tensor)] = end;
  std::vector<Interval> v;
  for (std::size_t t = 0; t < g.tensor_count(); ++t) {
    bool accum = t >= ni && g.ops[t - ni].kind == OpKind::kAccum;
    Interval iv{static_cast<int>(t), 0, rounded(elements(b.tiles[t])), pos[t], last[t]};
    if (accum) {  // live across the loop; a register accumulator needs its slot only after
      iv.begin = b.storage[t] == Storage::kRegisters ? loop_end : 1;
      iv.end = std::max(iv.end, loop_end);
    }
    if (t < ni && !b.post[t])
      iv.end = std::max(iv.end, b.pipeline_depth > 1 ? loop_end : iv.end);
    v.push_back(iv);
    if (t < ni && b.pipeline_depth > 1)
      v.push_back(Interval{iv.tensor, 1, iv.size, iv.begin, iv.end});
  }
  return v;
}

// First fit in order of first use: each tile takes the lowest offset at which it overlaps no
// live tile (so tiles of the loop body and of the epilogue share space).
void plan_memory(LoweredBlock& b) {
  std::vector<Interval> v = lifetimes(b);
  std::stable_sort(v.begin(), v.end(),
                   [](const Interval& x, const Interval& y) { return x.begin < y.begin; });
  std::vector<std::pair<Interval, std::int64_t>> placed;
  b.offset.assign(b.graph.tensor_count(), -1);
  b.offset2.assign(b.graph.tensor_count(), -1);
  for (const Interval& iv : v) {
    std::int64_t at = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (const auto& [p, off] : placed) {
        bool live = p.begin <= iv.end && iv.begin <= p.end;
        if (live && at < off + p.size && off < at + iv.size) {
          at = off + p.size;
          moved = true;
        }
      }
    }
    placed.emplace_back(iv, at);
    (iv.buffer == 0 ? b.offset : b.offset2)[static_cast<std::size_t>(iv.tensor)] = at;
    b.shared_elems = std::max(b.shared_elems, at + iv.size);
  }
}

LoweredBlock lower_block(const BlockGraph& g, const std::vector<Shape>& inputs) {
  LoweredBlock b;
  b.graph = g;
  b.inputs = inputs;
  std::string why;
  b.tiles = block_shapes(g, inputs, &why);
  CHECK(!b.tiles.empty()) << "lowering an invalid block graph: " << why;
  b.post = after_accum(g);
  std::size_t ni = g.inputs.size();
  for (std::size_t o = 0; o < g.ops.size(); ++o)
    (b.post[ni + o] && g.ops[o].kind != OpKind::kAccum ? b.after : b.in_loop)
        .push_back(static_cast<int>(o));
  b.storage.assign(g.tensor_count(), Storage::kShared);
  for (std::size_t o = 0; o < g.ops.size(); ++o)
    if (g.ops[o].kind == OpKind::kAccum &&
        elements(b.tiles[ni + o]) <= kBlockThreads * kMaxRegistersPerThread)
      b.storage[ni + o] = Storage::kRegisters;
  b.pipeline_depth = g.forloop > 1 ? 2 : 1;
  plan_memory(b);
  for (const BlockOutput& o : g.outputs)
    b.outputs.push_back(saved_shape(b.tiles[static_cast<std::size_t>(o.tensor)], o.omap, g.grid));
  return b;
}

}  // namespace

BlockProgram lower(const KernelGraph& g) {
  BlockProgram p;
  p.name = g.name;
  p.graph = g;
  std::string why;
  p.shapes = kernel_shapes(g, &why);
  CHECK(!p.shapes.empty()) << "lowering an invalid µGraph: " << why;
  int next = static_cast<int>(g.inputs.size());
  std::vector<RowChain> chains = row_chains(g, p.shapes);
  auto chain = chains.begin();
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const KernelOp& op = g.ops[i];
    if (chain != chains.end() && chain->first == static_cast<int>(i)) {
      LoweredStep s;
      s.op = g.ops[i + static_cast<std::size_t>(chain->ops) - 1];
      s.op.in = {chain->x};
      s.out = {chain->out};
      s.row = *chain;
      p.steps.push_back(std::move(s));
      next += chain->ops;  // library ops: one output each
      i += static_cast<std::size_t>(chain->ops) - 1;
      ++chain;
      continue;
    }
    LoweredStep s;
    s.op = op;
    std::vector<Shape> in;
    for (int u : op.in)
      in.push_back(p.shapes[static_cast<std::size_t>(u)]);
    if (op.kind == OpKind::kCustom)
      s.block = lower_block(g.blocks[static_cast<std::size_t>(op.block)], in);
    std::size_t outs = s.block ? s.block->outputs.size() : 1;
    for (std::size_t i = 0; i < outs; ++i)
      s.out.push_back(next++);
    p.steps.push_back(std::move(s));
  }
  p.gemv = match_gemv(p, nullptr);
  return p;
}

std::vector<std::string> describe(const BlockProgram& p) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const LoweredStep& s = p.steps[i];
    std::ostringstream os;
    os << "launch " << i << ": ";
    if (s.row) {
      os << "library row " << row_chain_name(*s.row) << " -> " << shape_text(p.shapes[s.out[0]])
         << " (" << s.row->rows << " rows of " << s.row->len << ")";
      lines.push_back(os.str());
      continue;
    }
    if (!s.block) {
      os << "library " << op_name(s.op.kind) << " -> " << shape_text(p.shapes[s.out[0]]);
      lines.push_back(os.str());
      continue;
    }
    const LoweredBlock& b = *s.block;
    const Grid& gr = b.graph.grid;
    os << "grid [" << gr[0] << ", " << gr[1] << ", " << gr[2] << "] x for-loop " << b.graph.forloop
       << ", pipeline depth " << b.pipeline_depth << ", shared " << b.shared_elems * 4 << " B";
    lines.push_back(os.str());
    std::size_t ni = b.graph.inputs.size();
    for (std::size_t t = 0; t < b.graph.tensor_count(); ++t) {
      std::ostringstream l;
      l << "  t" << t << " " << shape_text(b.tiles[t]) << " = ";
      if (t < ni) {
        l << "tile of input " << b.graph.inputs[t].input;
      } else {
        const BlockOp& op = b.graph.ops[t - ni];
        l << (op.kind == OpKind::kAccum ? "accum_" + accum_name(op.accum) : op_name(op.kind));
        for (int u : op.in)
          l << " t" << u;
        l << (b.post[t] && op.kind != OpKind::kAccum ? " (after loop)" : "");
      }
      l << (b.storage[t] == Storage::kRegisters ? ", registers" : "") << ", smem @"
        << b.offset[t] * 4;
      lines.push_back(l.str());
    }
  }
  return lines;
}

}  // namespace yirage::codegen
