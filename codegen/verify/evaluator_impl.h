// The block-level half of evaluator.h: tiles, the for-loop, accumulators and savers.
#pragma once

#include "codegen/verify/evaluator.h"

#include <algorithm>
#include <array>
#include <deque>

namespace yirage::codegen {
namespace detail {

// Offset of the tile of `in` for block `coord` and iteration `it`, per data dim.
inline std::vector<std::int64_t> tile_origin(const BlockInput& in,
                                             const Shape& tile,
                                             const std::array<std::int64_t, 3>& coord,
                                             std::int64_t it) {
  std::vector<std::int64_t> o(tile.size(), 0);
  for (std::size_t a = 0; a < 3; ++a) {
    if (in.imap[a] != kReplicated)
      o[static_cast<std::size_t>(in.imap[a])] +=
          coord[a] * tile[static_cast<std::size_t>(in.imap[a])];
  }
  if (in.fmap != kReplicated)
    o[static_cast<std::size_t>(in.fmap)] += it * tile[static_cast<std::size_t>(in.fmap)];
  return o;
}

inline std::int64_t linear(const std::vector<std::int64_t>& idx, const Shape& s) {
  std::int64_t off = 0;
  for (std::size_t d = 0; d < s.size(); ++d)
    off = off * s[d] + idx[d];
  return off;
}

// The tile of `src` of shape `tile` at offset `at` into `t` (its storage reused), copied a
// row of the last dim at a time. Index arithmetic in fixed arrays: the block loop calls this
// for every input of every iteration of every block.
template <class V>
void copy_tile_into(const Tensor<V>& src,
                    const Shape& tile,
                    const std::vector<std::int64_t>& at,
                    Tensor<V>& t) {
  constexpr std::size_t kRank = 8;
  std::size_t r = tile.size();
  CHECK(r <= kRank && src.shape.size() == r) << "a tile of rank " << r;
  t.shape = tile;
  t.data.resize(static_cast<std::size_t>(elements(tile)));
  if (r == 0) {
    t.data[0] = src.data[0];
    return;
  }
  std::array<std::int64_t, kRank> st{};
  std::array<std::int64_t, kRank> idx{};
  std::int64_t base = 0;
  for (std::size_t d = r, n = 1; d-- > 0;) {
    st[d] = static_cast<std::int64_t>(n);
    base += at[d] * st[d];
    n *= static_cast<std::size_t>(src.shape[d]);
  }
  std::int64_t row = tile[r - 1];
  std::int64_t off = base;  // of the current row's first element in src
  for (std::int64_t out = 0; out < static_cast<std::int64_t>(t.data.size()); out += row) {
    std::copy_n(src.data.begin() + off, row, t.data.begin() + out);
    for (std::size_t d = r - 1; d-- > 0;) {
      off += st[d];
      if (++idx[d] < tile[d])
        break;
      off -= st[d] * tile[d];
      idx[d] = 0;
    }
  }
}

template <class V>
Tensor<V> copy_tile(const Tensor<V>& src, const Shape& tile, const std::vector<std::int64_t>& at) {
  Tensor<V> t;
  copy_tile_into(src, tile, at, t);
  return t;
}

template <class V>
void paste_tile(Tensor<V>& dst, const Tensor<V>& tile, const std::vector<std::int64_t>& at) {
  for_each_index(tile.shape, strides(dst.shape, false), strides(tile.shape, false),
                 linear(at, dst.shape), 0, [&](std::int64_t i, std::int64_t j) {
                   dst.data[static_cast<std::size_t>(i)] = tile.data[static_cast<std::size_t>(j)];
                 });
}

}  // namespace detail

template <class A>
std::vector<typename Evaluator<A>::T> Evaluator<A>::block(
    const BlockGraph& g,
    const std::vector<const T*>& in,
    const std::array<std::int64_t, 3>& coord) const {
  std::size_t ni = g.inputs.size();
  std::vector<bool> post = after_accum(g);
  std::vector<T> t(g.tensor_count());
  std::vector<bool> started(g.tensor_count(), false);
  std::vector<Shape> tiles;
  for (std::size_t i = 0; i < ni; ++i)
    tiles.push_back(tile_shape(in[static_cast<std::size_t>(g.inputs[i].input)]->shape, g.inputs[i],
                               g.grid, g.forloop));
  T step;
  std::vector<const T*> args;
  for (std::int64_t it = 0; it < g.forloop; ++it) {
    for (std::size_t i = 0; i < ni; ++i) {
      const T& src = *in[static_cast<std::size_t>(g.inputs[i].input)];
      detail::copy_tile_into(src, tiles[i], detail::tile_origin(g.inputs[i], tiles[i], coord, it),
                             t[i]);
    }
    for (std::size_t o = 0; o < g.ops.size(); ++o) {
      const BlockOp& op = g.ops[o];
      std::size_t id = ni + o;
      if (post[id] && op.kind != OpKind::kAccum)
        continue;
      const T& x = t[static_cast<std::size_t>(op.in[0])];
      if (op.kind != OpKind::kAccum) {
        args.clear();
        for (int u : op.in)
          args.push_back(&t[static_cast<std::size_t>(u)]);
        this->op_into(op.kind, op.dim, args, t[id]);
        continue;
      }
      int last = static_cast<int>(x.shape.size()) - 1;
      if (op.accum == Accum::kMaxLast)
        reduce_into(OpKind::kMax, last, x, step);
      else if (op.accum == Accum::kRmsLast)
        reduce_into(OpKind::kSum, last, unary(OpKind::kSquare, x), step);
      else if (op.accum == Accum::kSumLast)
        reduce_into(OpKind::kSum, last, x, step);
      const T& s = op.accum == Accum::kSum ? x : step;
      if (!started[id])
        t[id] = s;
      else
        for (std::size_t e = 0; e < s.data.size(); ++e)
          t[id].data[e] = op.accum == Accum::kMaxLast ? a_.max(t[id].data[e], s.data[e])
                                                      : a_.add(t[id].data[e], s.data[e]);
      started[id] = true;
    }
  }
  for (std::size_t o = 0; o < g.ops.size(); ++o) {
    const BlockOp& op = g.ops[o];
    std::size_t id = ni + o;
    if (op.kind == OpKind::kAccum && op.accum == Accum::kRmsLast) {
      const T& x = t[static_cast<std::size_t>(op.in[0])];
      V n = a_.count(x.shape.back() * g.forloop);
      for (V& v : t[id].data)
        v = a_.sqrt(a_.div(v, n));
    }
    if (!post[id] || op.kind == OpKind::kAccum)
      continue;
    std::vector<const T*> args;
    for (int u : op.in)
      args.push_back(&t[static_cast<std::size_t>(u)]);
    t[id] = this->op(op.kind, op.dim, args);
  }
  std::vector<T> out;
  for (const BlockOutput& o : g.outputs)
    out.push_back(t[static_cast<std::size_t>(o.tensor)]);
  return out;
}

template <class A>
std::vector<typename Evaluator<A>::T> Evaluator<A>::custom(const BlockGraph& g,
                                                           const std::vector<const T*>& in) const {
  std::vector<T> out;
  for (std::int64_t z = 0; z < g.grid[2]; ++z) {
    for (std::int64_t y = 0; y < g.grid[1]; ++y) {
      for (std::int64_t x = 0; x < g.grid[0]; ++x) {
        std::array<std::int64_t, 3> c = {x, y, z};
        std::vector<T> tiles = block(g, in, c);
        for (std::size_t i = 0; i < tiles.size(); ++i) {
          if (out.size() <= i) {
            Shape s = saved_shape(tiles[i].shape, g.outputs[i].omap, g.grid);
            out.push_back(T{s, std::vector<V>(static_cast<std::size_t>(elements(s)))});
          }
          std::vector<std::int64_t> at(tiles[i].shape.size(), 0);
          for (std::size_t a = 0; a < 3; ++a) {
            int d = g.outputs[i].omap[a];
            if (d != kReplicated)
              at[static_cast<std::size_t>(d)] = c[a] * tiles[i].shape[static_cast<std::size_t>(d)];
          }
          detail::paste_tile(out[i], tiles[i], at);
        }
      }
    }
  }
  return out;
}

template <class A>
std::vector<typename Evaluator<A>::T> Evaluator<A>::graph(const KernelGraph& g,
                                                          const std::vector<T>& inputs) const {
  // Inputs are read in place (they may be large); computed tensors are returned.
  std::vector<const T*> t;
  for (const T& in : inputs)
    t.push_back(&in);
  std::deque<T> computed;
  for (const KernelOp& op : g.ops) {
    std::vector<const T*> args;
    for (int u : op.in)
      args.push_back(t[static_cast<std::size_t>(u)]);
    if (op.kind != OpKind::kCustom) {
      computed.push_back(this->op(op.kind, op.dim, args));
      t.push_back(&computed.back());
      continue;
    }
    for (T& r : custom(g.blocks[static_cast<std::size_t>(op.block)], args)) {
      computed.push_back(std::move(r));
      t.push_back(&computed.back());
    }
  }
  std::vector<T> all;
  for (std::size_t i = 0; i < t.size(); ++i)
    all.push_back(i < inputs.size() ? T{} : std::move(computed[i - inputs.size()]));
  return all;
}

}  // namespace yirage::codegen
