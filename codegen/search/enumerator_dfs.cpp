// The depth-first half of enumerator.h: kernel ops, graph-defined ops, block ops.
#include "codegen/search/enumerator.h"
#include "codegen/search/enumerator_state.h"
#include "devices/support/check.h"

#include <algorithm>

namespace yirage::codegen {

namespace {

Rank rank_of(const std::vector<int>& in, OpKind k, int variant) {
  CHECK(in.size() + 3 <= Rank{}.v.size()) << "an op with " << in.size() << " inputs";
  Rank r;
  r.v[r.n++] = *std::max_element(in.begin(), in.end());
  for (int t : in)
    r.v[r.n++] = t;
  r.v[r.n++] = static_cast<int>(k);
  r.v[r.n++] = variant;
  return r;
}

int dangling(const std::vector<int>& uses) {
  return static_cast<int>(std::count(uses.begin(), uses.end(), 0));
}

Expr reduce_expr(OpKind k, const Expr& x, std::int64_t len) {
  if (k == OpKind::kRms)
    return expr::sqrt(expr::sum(len, expr::mul(x, x)));
  if (k == OpKind::kMax)
    return expr::max(len, x);
  return expr::sum(len, x);
}

// Every assignment of the grid axes in use to distinct dims of a tile of rank `rank`.
std::vector<DimMap> omaps(const Grid& grid, std::size_t rank) {
  std::vector<DimMap> out = {{kReplicated, kReplicated, kReplicated}};
  for (std::size_t a = 0; a < 3; ++a) {
    if (grid[a] <= 1)
      continue;
    std::vector<DimMap> next;
    for (const DimMap& m : out) {
      for (int d = 0; d < static_cast<int>(rank); ++d) {
        if (std::find(m.begin(), m.end(), d) != m.end())
          continue;
        DimMap n = m;
        n[a] = d;
        next.push_back(n);
      }
    }
    out = next;
  }
  return out;
}

}  // namespace

bool Enumerator::out_of_budget(EnumStats& st) const {
  if (st.timed_out)
    return true;
  if (st.generated > limits_.max_states) {
    st.truncated = true;
    return true;
  }
  // The clock is read every 64 checks (a check starts each prefix and each graph-defined op
  // tried, whose schedules can cost far more than a prefix): cheap next to either.
  if ((++st.budget_checks & 63) == 0 && std::chrono::steady_clock::now() > limits_.deadline) {
    st.timed_out = true;
    return true;
  }
  return false;
}

void Enumerator::kernel_dfs(KState& s,
                            const std::function<void(const Found&)>& sink,
                            EnumStats& st) const {
  if (out_of_budget(st))
    return;
  std::vector<int> outs;
  if (complete(s, &outs)) {
    Found f{s.g, s.maps};
    f.graph.outputs = outs;
    ++st.complete;
    sink(f);
    return;
  }
  if (static_cast<int>(s.g.ops.size()) >= limits_.kernel_ops)
    return;
  int n = static_cast<int>(s.shapes.size());
  for (OpKind k : kernel_menu_) {
    for (int a = 0; a < n; ++a) {
      if (is_unary(k))
        try_library(s, {k, {a}, -1, -1}, sink, st);
      for (const auto& [rk, dim] : reductions_) {
        if (rk == k)
          try_library(s, {k, {a}, dim, -1}, sink, st);
      }
      for (int b = 0; b < n && (is_binary(k) || k == OpKind::kMatmul); ++b) {
        if (a != b && !(is_commutative(k) && b < a))
          try_library(s, {k, {a, b}, -1, -1}, sink, st);
      }
    }
  }
  if (s.customs >= limits_.custom_ops || n > 16)
    return;
  for (unsigned mask = 1; mask < (1U << n); ++mask) {
    std::vector<int> in;
    std::vector<Shape> shapes;
    for (int i = 0; i < n; ++i) {
      if (mask & (1U << i)) {
        in.push_back(i);
        shapes.push_back(s.shapes[static_cast<std::size_t>(i)]);
      }
    }
    if (static_cast<int>(in.size()) > limits_.block_inputs)
      continue;
    std::vector<MapChoice> maps = map_choices(shapes);  // once: try_custom takes one of them
    for (std::size_t m = 0; m < maps.size(); ++m)
      try_custom(s, in, static_cast<int>(m), maps[m], sink, st);
  }
}

void Enumerator::try_library(KState& s,
                             const KernelOp& op,
                             const std::function<void(const Found&)>& sink,
                             EnumStats& st) const {
  Rank rank = rank_of(op.in, op.kind, op.dim);
  if (!s.g.ops.empty() && !(s.last < rank))
    return;
  std::vector<Shape> in;
  std::vector<Expr> ex;
  for (int t : op.in) {
    in.push_back(s.shapes[static_cast<std::size_t>(t)]);
    ex.push_back(s.exprs[static_cast<std::size_t>(t)]);
  }
  auto shape = infer_shape(op.kind, in, op.dim, nullptr);
  if (!shape)
    return;
  ++st.generated;
  Expr e = is_reduction(op.kind)
               ? reduce_expr(op.kind, ex[0], in[0][static_cast<std::size_t>(op.dim)])
               : op_expr(op.kind, ex, in);
  if (!useful(e)) {
    ++st.pruned;
    return;
  }
  // The op is pushed onto the state, explored from, and popped again (no copy of the state).
  Rank saved = s.last;
  s.g.ops.push_back(op);
  for (int t : op.in)
    ++s.uses[static_cast<std::size_t>(t)];
  s.shapes.push_back(std::move(*shape));
  s.exprs.push_back(std::move(e));
  s.uses.push_back(0);
  s.last = rank;
  int left = limits_.kernel_ops - static_cast<int>(s.g.ops.size());
  if (dangling(s.uses) <= static_cast<int>(target_.size()) + 3 * left)
    kernel_dfs(s, sink, st);
  s.last = saved;
  s.uses.pop_back();
  s.exprs.pop_back();
  s.shapes.pop_back();
  for (int t : op.in)
    --s.uses[static_cast<std::size_t>(t)];
  s.g.ops.pop_back();
}

void Enumerator::try_custom(KState& s,
                            const std::vector<int>& in,
                            int map,
                            const MapChoice& mc,
                            const std::function<void(const Found&)>& sink,
                            EnumStats& st) const {
  if (out_of_budget(st))
    return;
  Rank rank = rank_of(in, OpKind::kCustom, map);
  if (!s.g.ops.empty() && !(s.last < rank))
    return;
  std::vector<Shape> shapes;
  for (int t : in)
    shapes.push_back(s.shapes[static_cast<std::size_t>(t)]);
  std::vector<Schedule> sched = schedules(shapes, mc, device_);
  if (sched.empty())
    return;
  BState b;
  b.kin = in;
  b.map = mc;
  b.b.grid = sched[0].grid;
  b.b.forloop = sched[0].forloop;
  b.b.inputs = mc.inputs;
  for (std::size_t i = 0; i < in.size(); ++i) {
    Shape t = tile_shape(shapes[i], mc.inputs[i], b.b.grid, b.b.forloop);
    if (t.empty())
      return;
    b.shapes.push_back(t);
    b.exprs.push_back(s.exprs[static_cast<std::size_t>(in[i])]);
    b.post.push_back(false);
    b.uses.push_back(0);
  }
  Rank saved = s.last;
  s.last = rank;
  block_dfs(s, b, sink, st);
  s.last = saved;
}

void Enumerator::block_dfs(KState& k,
                           BState& b,
                           const std::function<void(const Found&)>& sink,
                           EnumStats& st) const {
  if (out_of_budget(st))
    return;
  close_block(k, b, sink, st);
  if (static_cast<int>(b.b.ops.size()) >= limits_.block_ops)
    return;
  int n = static_cast<int>(b.shapes.size());
  for (int t = 0; t < n; ++t) {
    for (Accum a : accums_) {
      if (!b.post[static_cast<std::size_t>(t)])
        try_block_op(k, b, {OpKind::kAccum, {t}, -1, a}, sink, st);
    }
  }
  for (OpKind kind : block_menu_) {
    for (int t = 0; t < n; ++t) {
      if (is_unary(kind))
        try_block_op(k, b, {kind, {t}, -1, Accum::kSum}, sink, st);
      for (int u = 0; u < n && (is_binary(kind) || kind == OpKind::kMatmul); ++u) {
        if (t == u || (is_commutative(kind) && u < t) ||
            b.post[static_cast<std::size_t>(t)] != b.post[static_cast<std::size_t>(u)])
          continue;
        try_block_op(k, b, {kind, {t, u}, -1, Accum::kSum}, sink, st);
      }
    }
  }
}

void Enumerator::try_block_op(KState& k,
                              BState& b,
                              const BlockOp& op,
                              const std::function<void(const Found&)>& sink,
                              EnumStats& st) const {
  Rank rank = rank_of(op.in, op.kind, static_cast<int>(op.accum));
  if (!b.b.ops.empty() && !(b.last < rank))
    return;
  std::vector<Shape> in;
  std::vector<Expr> ex;
  bool post = op.kind == OpKind::kAccum;
  for (int t : op.in) {
    in.push_back(b.shapes[static_cast<std::size_t>(t)]);
    ex.push_back(b.exprs[static_cast<std::size_t>(t)]);
    post = post || b.post[static_cast<std::size_t>(t)];
  }
  std::optional<Shape> shape = op.kind == OpKind::kAccum
                                   ? std::optional<Shape>(accum_shape(op.accum, in[0]))
                                   : infer_shape(op.kind, in, op.dim, nullptr);
  if (!shape)
    return;
  ++st.generated;
  Expr e = op.kind == OpKind::kAccum ? accum_expr(op.accum, ex[0], in[0], b.b.forloop)
                                     : op_expr(op.kind, ex, in);
  if (!useful(e)) {
    ++st.pruned;
    return;
  }
  Rank saved = b.last;  // pushed, explored from, popped
  b.b.ops.push_back(op);
  for (int t : op.in)
    ++b.uses[static_cast<std::size_t>(t)];
  b.shapes.push_back(std::move(*shape));
  b.exprs.push_back(std::move(e));
  b.post.push_back(post);
  b.uses.push_back(0);
  b.last = rank;
  int left = limits_.block_ops - static_cast<int>(b.b.ops.size());
  if (dangling(b.uses) <= limits_.block_outputs + left)
    block_dfs(k, b, sink, st);
  b.last = saved;
  b.uses.pop_back();
  b.post.pop_back();
  b.exprs.pop_back();
  b.shapes.pop_back();
  for (int t : op.in)
    --b.uses[static_cast<std::size_t>(t)];
  b.b.ops.pop_back();
}

void Enumerator::close_block(KState& k,
                             BState& b,
                             const std::function<void(const Found&)>& sink,
                             EnumStats& st) const {
  std::vector<int> outs;
  for (std::size_t t = 0; t < b.uses.size(); ++t) {
    if (b.uses[t] > 0)
      continue;
    if (!b.post[t])
      return;  // an iterator or a tensor inside the loop that nothing accumulates
    outs.push_back(static_cast<int>(t));
  }
  if (outs.empty() || static_cast<int>(outs.size()) > limits_.block_outputs)
    return;
  std::vector<DimMap> maps = omaps(b.b.grid, b.shapes[static_cast<std::size_t>(outs[0])].size());
  std::size_t combos = 1;
  for (std::size_t i = 0; i < outs.size(); ++i)
    combos *= maps.size();
  for (std::size_t c = 0; c < combos; ++c) {
    // The graph-defined op is pushed onto the kernel state, explored from, and popped.
    BlockGraph g = b.b;
    std::size_t code = c;
    for (int t : outs) {
      g.outputs.push_back({t, maps[code % maps.size()]});
      code /= maps.size();
      k.shapes.push_back(
          saved_shape(b.shapes[static_cast<std::size_t>(t)], g.outputs.back().omap, g.grid));
      k.exprs.push_back(b.exprs[static_cast<std::size_t>(t)]);
      k.uses.push_back(0);
    }
    k.g.ops.push_back({OpKind::kCustom, b.kin, -1, static_cast<int>(k.g.blocks.size())});
    k.g.blocks.push_back(std::move(g));
    for (int t : b.kin)
      ++k.uses[static_cast<std::size_t>(t)];
    k.maps.push_back(b.map);
    ++k.customs;
    kernel_dfs(k, sink, st);
    --k.customs;
    k.maps.pop_back();
    for (int t : b.kin)
      --k.uses[static_cast<std::size_t>(t)];
    k.g.blocks.pop_back();
    k.g.ops.pop_back();
    for (std::size_t i = 0; i < outs.size(); ++i) {
      k.uses.pop_back();
      k.exprs.pop_back();
      k.shapes.pop_back();
    }
  }
}

}  // namespace yirage::codegen
