// The GPU half of the prelude (backend.h): types, conversions, and the tile loads of each
// target. CUDA loads tiles with cp.async (16 bytes a thread, committed as one group per
// iteration, so a double-buffered loop overlaps the next tile's load with this one's ops) and
// multiplies fp16 tiles with mma.sync (m16n8k16, sm_80+). HIP loads 16 bytes a thread through
// registers; its blocks are four 64-lane wavefronts.
#include "codegen/backend/backend.h"

namespace yirage::codegen {
namespace {

const char* kCudaHead = R"PRE(#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include <atomic>

#define YR_DEV __device__ __forceinline__
#define YR_TID ((long)threadIdx.x)
#define YR_NT ((long)blockDim.x)
#define YR_GTID ((long)blockIdx.x * blockDim.x + threadIdx.x)  // a library op's thread
#define YR_GNT ((long)gridDim.x * blockDim.x)
#define YR_SYNC() __syncthreads()
#define YR_WARP 32
typedef cudaStream_t yr_stream_t;
YR_DEV float yr_shfl_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
)PRE";

const char* kHipHead = R"PRE(#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#include <math.h>
#include <stdint.h>

#define YR_DEV __device__ __forceinline__
#define YR_TID ((long)threadIdx.x)
#define YR_NT ((long)blockDim.x)
#define YR_GTID ((long)blockIdx.x * blockDim.x + threadIdx.x)  // a library op's thread
#define YR_GNT ((long)gridDim.x * blockDim.x)
#define YR_SYNC() __syncthreads()
#define YR_WARP 64  // a wavefront
typedef hipStream_t yr_stream_t;
YR_DEV float yr_shfl_xor(float v, int o) { return __shfl_xor(v, o); }
)PRE";

const char* kTypes = R"PRE(typedef __half yr_in_t;   // the kernel's input tensors
typedef __half yr_out_t;  // the kernel's output tensors
YR_DEV float yr_f(float v) { return v; }
YR_DEV float yr_f(__half v) { return __half2float(v); }
template <class T> YR_DEV T yr_to(float v);
template <> YR_DEV float yr_to<float>(float v) { return v; }
template <> YR_DEV __half yr_to<__half>(float v) { return __float2half(v); }

)PRE";

const char* kVectorOk = R"PRE(
// Whether a tile can move in 16-byte pieces: same element type, rows of whole pieces, and
// every row start aligned.
template <class O, class A>
YR_DEV bool yr_vector_ok(const A* src, D4 t, D4 st, long base) {
  const long v = 16 / (long)sizeof(A);
  return sizeof(O) == sizeof(A) && t.d[3] % v == 0 && st.d[0] % v == 0 && st.d[1] % v == 0 &&
         st.d[2] % v == 0 && base % v == 0 && ((uintptr_t)src & 15) == 0;
}
)PRE";

const char* kRowReduce = R"PRE(
// A library reduction over contiguous rows (the last dim) on a GPU: one warp a row, its
// lanes across the row, then a butterfly of shuffles.
template <class O, class A>
YR_DEV void yr_reduce_rows(int op, O* out, const A* a, long rows, long len, long count) {
  const long lane = threadIdx.x % YR_WARP;
  for (long r = YR_GTID / YR_WARP; r < rows; r += YR_GNT / YR_WARP) {
    const A* p = a + r * len;
    float acc = op == kMax ? -INFINITY : 0.0f;
    for (long l = lane; l < len; l += YR_WARP) {
      float v = yr_f(p[l]);
      acc = op == kMax ? fmaxf(acc, v) : op == kRms ? acc + v * v : acc + v;
    }
    for (int o = YR_WARP / 2; o > 0; o >>= 1) {
      float t = yr_shfl_xor(acc, o);
      acc = op == kMax ? fmaxf(acc, t) : acc + t;
    }
    if (op == kMean) acc /= (float)count;
    if (op == kRms) acc = sqrtf(acc / (float)count);
    if (lane == 0) out[r] = yr_to<O>(acc);
  }
}

// Four elements of a row from p (aligned to four elements), as floats.
template <class A>
YR_DEV void yr_load4(const A* p, float (&v)[4]) {
  if constexpr (sizeof(A) == 4) {
    const float4 f = *reinterpret_cast<const float4*>(p);
    v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
  } else {
    const uint2 u = *reinterpret_cast<const uint2*>(p);
    const A* h = reinterpret_cast<const A*>(&u);
    for (int j = 0; j < 4; ++j) v[j] = yr_f(h[j]);
  }
}

// Four floats to p (aligned to four elements) in one store: four scalar stores from a warp
// would each touch every sector of its 512 bytes (twice as slow for GQA's softmax on H100).
template <class O>
YR_DEV void yr_store4(O* p, const float (&v)[4]) {
  if constexpr (sizeof(O) == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    O h[4];
    for (int j = 0; j < 4; ++j) h[j] = yr_to<O>(v[j]);
    *reinterpret_cast<uint2*>(p) = *reinterpret_cast<const uint2*>(h);
  }
}

// A row chain (yr_row_chain) over the grid: one block a row when block_rows (long rows), else
// one warp a row; lanes across the row four elements at a time (len a multiple of 4), a
// butterfly of shuffles, and a block's warps added in warp order, so that the result does
// not depend on timing. The row is read twice, the second time mostly from cache.
#ifndef YR_ROW_LOADS
#define YR_ROW_LOADS 4
#endif
// A lane's pieces of a row of len (four elements each, at lane * 4, + 4 g, ...) to f(l, v) in
// order: while YR_ROW_LOADS pieces remain, all are loaded before f sees the first (one at a
// time, GQA's 512 rows of 16384 fp32 took 31.6 us on H100, four 25.7 us:
// kernel_times_one_load.csv, kernel_times.csv); then one at a time.
template <class A, class F>
YR_DEV void yr_row_pieces(const A* p, long len, long lane, long g, F&& f) {
  long l = lane * 4;
  for (; l + (YR_ROW_LOADS - 1) * g * 4 < len; l += g * 4 * YR_ROW_LOADS) {
    float v[YR_ROW_LOADS][4];
#pragma unroll
    for (int u = 0; u < YR_ROW_LOADS; ++u) yr_load4(p + l + u * g * 4, v[u]);
#pragma unroll
    for (int u = 0; u < YR_ROW_LOADS; ++u) f(l + u * g * 4, v[u]);
  }
  for (; l < len; l += g * 4) {
    float v[4];
    yr_load4(p + l, v);
    f(l, v);
  }
}
template <class O, class A>
YR_DEV void yr_row_chain_grid(int map, int red, int comb, bool t_left, O* out, const A* x,
                              long rows, long len, bool block_rows) {
  __shared__ float part[32];
  const long g = block_rows ? (long)blockDim.x : YR_WARP, lane = threadIdx.x % g;
  const long r0 = block_rows ? (long)blockIdx.x : YR_GTID / YR_WARP;
  const long rs = block_rows ? (long)gridDim.x : YR_GNT / YR_WARP;
  const bool quad = len % 4 == 0;
  for (long r = r0; r < rows; r += rs) {
    const A* p = x + r * len;
    float acc = red == kMax ? -INFINITY : 0.0f;
    if (quad) {
      yr_row_pieces(p, len, lane, g, [&](long, float (&v)[4]) {
#pragma unroll
        for (int j = 0; j < 4; ++j) acc = yr_row_step(red, acc, yr_row_map(map, v[j]));
      });
    } else {
      for (long l = lane; l < len; l += g) acc = yr_row_step(red, acc, yr_row_map(map, p[l]));
    }
    for (int o = YR_WARP / 2; o > 0; o >>= 1) {
      const float t = yr_shfl_xor(acc, o);
      acc = red == kMax ? fmaxf(acc, t) : acc + t;
    }
    if (block_rows) {
      if (threadIdx.x % YR_WARP == 0) part[threadIdx.x / YR_WARP] = acc;
      __syncthreads();
      acc = part[0];
      for (long w = 1; w < (long)blockDim.x / YR_WARP; ++w)
        acc = red == kMax ? fmaxf(acc, part[w]) : acc + part[w];
      __syncthreads();  // every warp has its sum before the next row's overwrite
    }
    acc = yr_row_final(red, acc, len);
    auto y = [&](float t) { return t_left ? yr_apply2(comb, t, acc) : yr_apply2(comb, acc, t); };
    if (quad) {
      yr_row_pieces(p, len, lane, g, [&](long l, float (&v)[4]) {
#pragma unroll
        for (int j = 0; j < 4; ++j) v[j] = y(yr_row_map(map, v[j]));
        yr_store4(out + r * len + l, v);
      });
    } else {
      for (long l = lane; l < len; l += g) out[r * len + l] = yr_to<O>(y(yr_row_map(map, p[l])));
    }
  }
}
)PRE";

const char* kCudaLoads = R"PRE(
// Starts copying a tile (shape t, strides st, at base) into shared memory with cp.async.
template <class O, class A>
YR_DEV void yr_load_tile(O* dst, const A* src, D4 t, D4 st, long base) {
  long n = t.d[0] * t.d[1] * t.d[2] * t.d[3];
  if (yr_vector_ok<O>(src, t, st, base)) {
    const long v = 16 / (long)sizeof(A);
    for (long e = YR_TID * v; e < n; e += YR_NT * v) {
      unsigned s = (unsigned)__cvta_generic_to_shared(dst + e);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s),
                   "l"(src + base + yr_at(t, st, e)));
    }
  } else {
    for (long e = YR_TID; e < n; e += YR_NT) dst[e] = yr_to<O>(yr_f(src[base + yr_at(t, st, e)]));
  }
}
YR_DEV void yr_load_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most `pending` groups (the next iteration's) are in flight.
YR_DEV void yr_load_wait(int pending) {
  if (pending) asm volatile("cp.async.wait_group 1;\n" ::);
  else asm volatile("cp.async.wait_group 0;\n" ::);
}

YR_DEV unsigned yr_pack(__half lo, __half hi) {
  __half2 h = __halves2half2(lo, hi);
  return *reinterpret_cast<unsigned*>(&h);
}

// out (fp32) = a x b for fp16 row-major tiles, one 16x8 output tile per warp at a time with
// mma.sync.m16n8k16 (fragments per the PTX ISA's m16n8k16 layout: g = lane / 4, c = lane % 4).
YR_DEV void yr_matmul_mma(float* out, const __half* a, const __half* b, long batch, long m, long k,
                          long n) {
  const int lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3;
  const long tiles = batch * (m / 16) * (n / 8);
  for (long tile = threadIdx.x >> 5; tile < tiles; tile += blockDim.x >> 5) {
    const long bi = tile / ((m / 16) * (n / 8)), r = tile % ((m / 16) * (n / 8));
    const long i0 = r / (n / 8) * 16, j0 = r % (n / 8) * 8;
    const __half* pa = a + bi * m * k;
    const __half* pb = b + bi * k * n;
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (long k0 = 0; k0 < k; k0 += 16) {
      const __half* r0 = pa + (i0 + g) * k + k0 + 2 * c;
      const __half* r8 = r0 + 8 * k;
      unsigned fa0 = yr_pack(r0[0], r0[1]), fa1 = yr_pack(r8[0], r8[1]);
      unsigned fa2 = yr_pack(r0[8], r0[9]), fa3 = yr_pack(r8[8], r8[9]);
      const __half* q = pb + (k0 + 2 * c) * n + j0 + g;
      unsigned fb0 = yr_pack(q[0], q[n]), fb1 = yr_pack(q[8 * n], q[9 * n]);
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%0,%1,%2,%3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(fa0), "r"(fa1), "r"(fa2), "r"(fa3), "r"(fb0), "r"(fb1));
    }
    float* po = out + bi * m * n;
    po[(i0 + g) * n + j0 + 2 * c] = d[0];
    po[(i0 + g) * n + j0 + 2 * c + 1] = d[1];
    po[(i0 + g + 8) * n + j0 + 2 * c] = d[2];
    po[(i0 + g + 8) * n + j0 + 2 * c + 1] = d[3];
  }
}
)PRE";

const char* kHipLoads = R"PRE(
// Copies a tile (shape t, strides st, at base) into shared memory, 16 bytes a thread where it
// can (through registers: gfx90a has no asynchronous global-to-LDS copy of this kind).
template <class O, class A>
YR_DEV void yr_load_tile(O* dst, const A* src, D4 t, D4 st, long base) {
  long n = t.d[0] * t.d[1] * t.d[2] * t.d[3];
  if (yr_vector_ok<O>(src, t, st, base)) {
    const long v = 16 / (long)sizeof(A);
    for (long e = YR_TID * v; e < n; e += YR_NT * v)
      *reinterpret_cast<uint4*>(dst + e) =
          *reinterpret_cast<const uint4*>(src + base + yr_at(t, st, e));
  } else {
    for (long e = YR_TID; e < n; e += YR_NT) dst[e] = yr_to<O>(yr_f(src[base + yr_at(t, st, e)]));
  }
}
YR_DEV void yr_load_commit() {}
YR_DEV void yr_load_wait(int) {}
)PRE";

}  // namespace

std::string prelude_gpu(Backend b) {
  bool cuda = b == Backend::kCuda;
  return std::string(cuda ? kCudaHead : kHipHead) + kTypes + prelude_common() + kRowReduce +
         kVectorOk + (cuda ? kCudaLoads : kHipLoads);
}

}  // namespace yirage::codegen
