// The helpers every generated kernel file starts with (backend.h). One text for the three
// targets: under nvcc or hipcc a helper is a block-wide loop over the block's threads, on the
// CPU the same loop runs on one thread.
#include "codegen/backend/backend.h"

namespace yirage::codegen {

std::string prelude_common() {
  return R"PRE(
struct D4 { long d[4]; };  // a shape or strides, padded to four dims on the left
enum { kExp, kSquare, kSqrt, kSilu, kAdd, kSub, kMul, kDiv, kSum, kMean, kRms, kMax };
enum { kAccSum, kAccSumLast, kAccRmsLast, kAccMaxLast };

YR_DEV float yr_apply1(int op, float x) {
  switch (op) {
    case kExp: return expf(x);
    case kSquare: return x * x;
    case kSqrt: return sqrtf(x);
    default: return x / (1.0f + expf(-x));  // kSilu
  }
}

YR_DEV float yr_apply2(int op, float a, float b) {
  switch (op) {
    case kAdd: return a + b;
    case kSub: return a - b;
    case kMul: return a * b;
    default: return a / b;  // kDiv
  }
}

YR_DEV long yr_at(D4 s, D4 st, long e) {  // offset of row-major element e of s under strides st
  long off = 0;
  for (int d = 3; d >= 0; --d) {
    off += (e % s.d[d]) * st.d[d];
    e /= s.d[d];
  }
  return off;
}

// The element loops below run over threads t0, t0 + nt, ...: a block's threads by default,
// the whole grid's for a library op on a GPU (YR_GTID, YR_GNT).
template <class O, class A>
YR_DEV void yr_unary(int op, O* out, const A* a, long n, long t0 = YR_TID, long nt = YR_NT) {
  for (long e = t0; e < n; e += nt) out[e] = yr_to<O>(yr_apply1(op, yr_f(a[e])));
}

// out (contiguous, shape s) = a op b, a and b read under strides sa and sb (0: broadcast).
template <class O, class A, class B>
YR_DEV void yr_binary(int op, O* out, const A* a, const B* b, D4 s, D4 sa, D4 sb,
                      long t0 = YR_TID, long nt = YR_NT) {
  long n = s.d[0] * s.d[1] * s.d[2] * s.d[3];
  for (long e = t0; e < n; e += nt)
    out[e] = yr_to<O>(yr_apply2(op, yr_f(a[yr_at(s, sa, e)]), yr_f(b[yr_at(s, sb, e)])));
}

// Reduces the middle dim of a viewed as [outer, len, inner]; mean and rms divide by count.
template <class O, class A>
YR_DEV void yr_reduce(int op, O* out, const A* a, long outer, long len, long inner, long count,
                      long t0 = YR_TID, long nt = YR_NT) {
  for (long e = t0; e < outer * inner; e += nt) {
    const A* p = a + (e / inner) * len * inner + e % inner;
    float acc = op == kMax ? yr_f(p[0]) : 0.0f;
    for (long l = 0; l < len; ++l) {
      float v = yr_f(p[l * inner]);
      acc = op == kMax ? fmaxf(acc, v) : op == kRms ? acc + v * v : acc + v;
    }
    if (op == kMean) acc /= (float)count;
    if (op == kRms) acc = sqrtf(acc / (float)count);
    out[e] = yr_to<O>(acc);
  }
}

// out[b] = a[b] x b[b] for `batch` row-major matrices, one output element per step.
template <class O, class A, class B>
YR_DEV void yr_matmul(O* out, const A* a, const B* b, long batch, long m, long k, long n,
                      long t0 = YR_TID, long nt = YR_NT) {
  for (long e = t0; e < batch * m * n; e += nt) {
    long bi = e / (m * n), i = e / n % m, j = e % n;
    const A* pa = a + (bi * m + i) * k;
    const B* pb = b + bi * k * n + j;
    float acc = 0.0f;
    for (long l = 0; l < k; ++l) acc += yr_f(pa[l]) * yr_f(pb[l * n]);
    out[e] = yr_to<O>(acc);
  }
}

// The step an accumulator adds for its element e: x[e] (kAccSum), or a reduction of the
// row x[e * len .. e * len + len) for the kinds that reduce the last dim.
// A row chain (codegen/lower/row_chain.h), one thread a row over rows t0, t0 + nt, ...:
// y = comb(t, r) (comb(r, t) unless t_left) with t = map(x) (x where map < 0) and r the
// reduction `red` of t's row.
YR_DEV float yr_row_step(int red, float acc, float v) {
  return red == kMax ? fmaxf(acc, v) : red == kRms ? acc + v * v : acc + v;
}
YR_DEV float yr_row_final(int red, float acc, long len) {
  return red == kMean ? acc / (float)len : red == kRms ? sqrtf(acc / (float)len) : acc;
}
template <class A>
YR_DEV float yr_row_map(int map, A v) {
  return map < 0 ? yr_f(v) : yr_apply1(map, yr_f(v));
}
template <class O, class A>
YR_DEV void yr_row_chain(int map, int red, int comb, bool t_left, O* out, const A* x, long rows,
                         long len, long t0 = YR_TID, long nt = YR_NT) {
  for (long r = t0; r < rows; r += nt) {
    const A* p = x + r * len;
    float acc = red == kMax ? yr_row_map(map, p[0]) : 0.0f;
    for (long l = 0; l < len; ++l) acc = yr_row_step(red, acc, yr_row_map(map, p[l]));
    acc = yr_row_final(red, acc, len);
    for (long l = 0; l < len; ++l) {
      const float t = yr_row_map(map, p[l]);
      out[r * len + l] = yr_to<O>(t_left ? yr_apply2(comb, t, acc) : yr_apply2(comb, acc, t));
    }
  }
}

template <class A>
YR_DEV float yr_accum_step(int kind, const A* x, long e, long len) {
  if (kind == kAccSum) return yr_f(x[e]);
  float acc = kind == kAccMaxLast ? yr_f(x[e * len]) : 0.0f;
  for (long l = 0; l < len; ++l) {
    float v = yr_f(x[e * len + l]);
    acc = kind == kAccMaxLast ? fmaxf(acc, v) : kind == kAccRmsLast ? acc + v * v : acc + v;
  }
  return acc;
}

YR_DEV float yr_accum_add(int kind, float acc, float step) {
  return kind == kAccMaxLast ? fmaxf(acc, step) : acc + step;
}

// Writes a tile (contiguous, shape t) to a device tensor with row-major strides st at base.
template <class O, class A>
YR_DEV void yr_save_tile(O* dst, const A* src, D4 t, D4 st, long base) {
  long n = t.d[0] * t.d[1] * t.d[2] * t.d[3];
  for (long e = YR_TID; e < n; e += YR_NT) dst[base + yr_at(t, st, e)] = yr_to<O>(yr_f(src[e]));
}
)PRE";
}

std::string prelude_cpu() {
  return R"PRE(#include <math.h>

#include <vector>

#define YR_DEV inline
#define YR_TID 0L
#define YR_NT 1L
#define YR_SYNC()
typedef float yr_in_t;   // the kernel's input tensors
typedef float yr_out_t;  // the kernel's output tensors
inline float yr_f(float v) { return v; }
template <class T> inline T yr_to(float v) { return v; }
)PRE" + prelude_common() +
         R"PRE(
// Copies a tile of shape t from a device tensor with strides st at base (a contiguous tile).
template <class O, class A>
inline void yr_load_tile(O* dst, const A* src, D4 t, D4 st, long base) {
  long n = t.d[0] * t.d[1] * t.d[2] * t.d[3];
  for (long e = 0; e < n; ++e) dst[e] = src[base + yr_at(t, st, e)];
}
inline void yr_load_commit() {}
inline void yr_load_wait(int) {}
)PRE";
}

}  // namespace yirage::codegen
