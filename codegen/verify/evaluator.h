// A reference interpreter of µGraphs over any arithmetic of arith.h: library ops on whole
// tensors, and block graphs replayed block by block exactly as a GPU would run them (imap
// and fmap tiles, the for-loop, accumulators, savers at their omap positions), so that a
// wrong map or loop shows up in the values.
#pragma once

#include "codegen/ir/ugraph.h"
#include "devices/support/check.h"

#include <vector>

namespace yirage::codegen {

template <class V>
struct Tensor {
  Shape shape;
  std::vector<V> data;
};

namespace detail {

/// Row-major strides of `s`; dims of size 1 get stride 0 when `broadcast` (they repeat).
inline std::vector<std::int64_t> strides(const Shape& s, bool broadcast) {
  std::vector<std::int64_t> st(s.size());
  std::int64_t n = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    st[i] = broadcast && s[i] == 1 ? 0 : n;
    n *= s[i];
  }
  return st;
}

/// Calls f(offset in a, offset in b) for every coordinate of `shape`, in row-major order.
template <class F>
void for_each_index(const Shape& shape,
                    const std::vector<std::int64_t>& sa,
                    const std::vector<std::int64_t>& sb,
                    std::int64_t base_a,
                    std::int64_t base_b,
                    F&& f) {
  std::size_t r = shape.size();
  std::vector<std::int64_t> idx(r, 0);
  std::int64_t n = elements(shape);
  std::int64_t oa = base_a;
  std::int64_t ob = base_b;
  for (std::int64_t i = 0; i < n; ++i) {
    f(oa, ob);
    for (std::size_t d = r; d-- > 0;) {
      ++idx[d];
      oa += sa[d];
      ob += sb[d];
      if (idx[d] < shape[d])
        break;
      oa -= sa[d] * shape[d];
      ob -= sb[d] * shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace detail

template <class A>
class Evaluator {
 public:
  using V = typename A::Value;
  using T = Tensor<V>;

  explicit Evaluator(const A& a) : a_(a) {}

  T unary(OpKind k, const T& x) const {
    T r;
    unary_into(k, x, r);
    return r;
  }

  T binary(OpKind k, const T& x, const T& y) const {
    T r;
    binary_into(k, x, y, r);
    return r;
  }

  /// sum / mean / rms / max over `dim`, kept with size 1. `count` is the divisor of mean and
  /// rms (the dim's size, or the whole dim's for a tile).
  T reduce(OpKind k, int dim, const T& x, std::int64_t count = 0) const {
    T r;
    reduce_into(k, dim, x, r, count);
    return r;
  }

  T matmul(const T& x, const T& y) const {
    T r;
    matmul_into(x, y, r);
    return r;
  }

  T op(OpKind k, int dim, const std::vector<const T*>& in) const {
    T r;
    op_into(k, dim, in, r);
    return r;
  }

  /// op() into `r`, reusing its storage (the block loop evaluates the same ops every
  /// iteration). `r` must not alias an input.
  void op_into(OpKind k, int dim, const std::vector<const T*>& in, T& r) const {
    if (k == OpKind::kMatmul)
      return matmul_into(*in[0], *in[1], r);
    if (is_unary(k))
      return unary_into(k, *in[0], r);
    if (is_binary(k))
      return binary_into(k, *in[0], *in[1], r);
    CHECK(is_reduction(k)) << "cannot evaluate " << op_name(k) << " as a library op";
    reduce_into(k, dim, *in[0], r);
  }

  void unary_into(OpKind k, const T& x, T& r) const {
    r.shape = x.shape;
    r.data.resize(x.data.size());
    for (std::size_t i = 0; i < x.data.size(); ++i) {
      V v = x.data[i];
      r.data[i] = k == OpKind::kExp      ? a_.exp(v)
                  : k == OpKind::kSquare ? a_.mul(v, v)
                  : k == OpKind::kSqrt   ? a_.sqrt(v)
                                         : a_.silu(v);
    }
  }

  void binary_into(OpKind k, const T& x, const T& y, T& r) const {
    auto s = infer_shape(k, {x.shape, y.shape}, -1, nullptr);
    CHECK(s.has_value()) << "binary op on mismatched shapes";
    r.shape = *s;
    r.data.clear();
    r.data.reserve(static_cast<std::size_t>(elements(r.shape)));
    detail::for_each_index(r.shape, detail::strides(x.shape, true), detail::strides(y.shape, true),
                           0, 0, [&](std::int64_t i, std::int64_t j) {
                             V u = x.data[static_cast<std::size_t>(i)];
                             V w = y.data[static_cast<std::size_t>(j)];
                             r.data.push_back(k == OpKind::kAdd   ? a_.add(u, w)
                                              : k == OpKind::kSub ? a_.sub(u, w)
                                              : k == OpKind::kMul ? a_.mul(u, w)
                                                                  : a_.div(u, w));
                           });
  }

  void reduce_into(OpKind k, int dim, const T& x, T& r, std::int64_t count = 0) const {
    auto d = static_cast<std::size_t>(dim);
    std::int64_t len = x.shape[d];
    std::int64_t inner = 1;
    for (std::size_t i = d + 1; i < x.shape.size(); ++i)
      inner *= x.shape[i];
    std::int64_t outer = elements(x.shape) / (len * inner);
    r.shape = x.shape;
    r.shape[d] = 1;
    r.data.resize(static_cast<std::size_t>(outer * inner));
    V div = a_.count(count > 0 ? count : len);
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t i = 0; i < inner; ++i) {
        V acc = x.data[static_cast<std::size_t>(o * len * inner + i)];
        acc = k == OpKind::kRms ? a_.mul(acc, acc) : acc;
        for (std::int64_t l = 1; l < len; ++l) {
          V v = x.data[static_cast<std::size_t>((o * len + l) * inner + i)];
          acc = k == OpKind::kMax   ? a_.max(acc, v)
                : k == OpKind::kRms ? a_.add(acc, a_.mul(v, v))
                                    : a_.add(acc, v);
        }
        if (k == OpKind::kMean)
          acc = a_.div(acc, div);
        if (k == OpKind::kRms)
          acc = a_.sqrt(a_.div(acc, div));
        r.data[static_cast<std::size_t>(o * inner + i)] = acc;
      }
    }
  }

  void matmul_into(const T& x, const T& y, T& r) const {
    std::size_t rank = x.shape.size();
    std::int64_t m = x.shape[rank - 2];
    std::int64_t k = x.shape[rank - 1];
    std::int64_t n = y.shape[rank - 1];
    r.shape = x.shape;
    r.shape[rank - 1] = n;
    r.data.resize(static_cast<std::size_t>(elements(r.shape)));
    std::int64_t batch = elements(x.shape) / (m * k);
    for (std::int64_t b = 0; b < batch; ++b)
      a_.matmul(x.data.data() + b * m * k, y.data.data() + b * k * n, r.data.data() + b * m * n, m,
                k, n);
  }

  /// The output tiles of block `coord` of a block graph.
  std::vector<T> block(const BlockGraph& g,
                       const std::vector<const T*>& in,
                       const std::array<std::int64_t, 3>& coord) const;

  /// Every block of a block graph: the custom op's output tensors.
  std::vector<T> custom(const BlockGraph& g, const std::vector<const T*>& in) const;

  /// Every kernel tensor of a graph, given its inputs; the inputs' own entries are left empty
  /// (not copied).
  std::vector<T> graph(const KernelGraph& g, const std::vector<T>& inputs) const;

 private:
  const A& a_;
};

}  // namespace yirage::codegen

#include "codegen/verify/evaluator_impl.h"
