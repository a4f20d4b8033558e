// The tensor-core GEMV path of the CUDA backend for M <= 16 (gemv_emitter.cpp): weights go
// from global memory straight into mma.sync.m16n8k16 fragments, with no shared-memory
// staging. The product is computed transposed, Y^T = W^T X^T, so the weights are the A
// operand and X (at most 8 rows per n8 tile) the B operand. A lane reads 16 bytes (8
// columns) of 4 consecutive weight rows; two byte permutes per register pair turn the rows'
// column pairs into the fragment's k pairs, and X's matching 4 halves are one 8-byte load.
// The dot product does not care in which order k is walked, so the fragment's logical k
// 2c, 2c + 1, 2c + 8, 2c + 9 are the physical rows 4c .. 4c + 3 of the step.
//
// A block owns a tile of NB = 8 CG CW columns and one of KS slices of K: CW warps across the
// tile, each with CG lane groups of 8 columns (lane groups past CG read nothing and give zero
// rows of A, so that a tile can be narrower than a warp's 64 columns), and KW warps
// interleaved along K. Each warp keeps YR_DEPTH steps of loads in registers, and before the
// wait for the kernel before it (a programmatic dependent launch on sm_90) copies its first
// YR_PREFETCH steps to shared memory. With YR_INTERLEAVE the K slices interleave too, so that
// the grid reads the weights one band of rows at a time. The KW warps meet in shared memory, in
// fragment order so that no two lanes of a warp touch one bank (in the row-major order of Y, eight
// did: 1.3 us at M = 16). With KS > 1 the slices write their sums to numbered slots of a workspace
// and the last to finish (an atomic counter, reset by that block) adds the slots in slot order, so
// the result does not depend on which block finishes first. That finish costs 1.3-1.7 us on H100,
// more than leaving a quarter of the SMs idle: at M <= 8 the 6144 columns go in 96 tiles of 64, no
// K split.
#include "codegen/backend/backend.h"

#include <algorithm>
#include <cmath>

namespace yirage::codegen {

namespace {

const char* kPdlHelpers = R"CU(
#ifndef YR_PDL
#define YR_PDL 1  // programmatic dependent launch on sm_90 (0: a plain launch)
#endif
// Hopper's programmatic dependent launch: the next kernel in the stream may start once every
// block here has called yr_launch_dependents (or exited), and waits (yr_grid_wait) for this
// one to finish before it reads or writes anything that this one touches. No-ops before
// sm_90 and without the launch attribute (the launcher sets it on sm_90 devices).
YR_DEV void yr_grid_wait() {
#if YR_PDL && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
YR_DEV void yr_launch_dependents() {
#if YR_PDL && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}
// The current device's compute capability (major), read once a device (the first 64; a
// process may drive GPUs of different generations); 0 where it cannot be read.
[[maybe_unused]] static int yr_device_major() {
  static std::atomic<int> majors[64];  // major + 1 once read
  int dev = 0, m = 0;
  if (cudaGetDevice(&dev) != cudaSuccess)
    return 0;
  const bool cached = dev >= 0 && dev < 64;
  if (cached && (m = majors[dev].load(std::memory_order_relaxed)) > 0)
    return m - 1;
  if (cudaDeviceGetAttribute(&m, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
    return 0;
  if (cached)
    majors[dev].store(m + 1, std::memory_order_relaxed);
  return m;
}
)CU";

const char* kDirectHelpers = R"CU(// Weights are read once: past L1, as the bandwidth probe reads.
YR_DEV uint4 yr_stream_load(const __half* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
YR_DEV float4 yr_load_cg4(const float* p) { return __ldcg(reinterpret_cast<const float4*>(p)); }
// 16 bytes of weights to shared memory, past L1 (cp.async; sm_80 and later).
YR_DEV void yr_copy16(uint4* dst, const __half* src) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(src) : "memory");
}
YR_DEV void yr_copy_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
YR_DEV void yr_copy_wait() { asm volatile("cp.async.wait_all;" ::: "memory"); }
YR_DEV unsigned yr_word(const uint4& v, int j) {
  return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
}
YR_DEV float yr_squares(unsigned v) {
  const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&v));
  return f.x * f.x + f.y * f.y;
}
// One k16 step of a lane: w[i][r] = 8 columns of weight i at row 4c + r; xv[t] = X[8t + g,
// 4c .. 4c + 3]. acc[i][t][j] is the m16n8 tile of column pair j of the lane's 8 columns.
YR_DEV void yr_direct_step(float (&acc)[NW][MT][4][4], float (&sq)[MT], const uint4 (&w)[NW][4],
                           const uint2 (&xv)[MT], bool squares) {
#pragma unroll
  for (int t = 0; t < MT; ++t)
    if (kHasRms && squares) sq[t] += yr_squares(xv[t].x) + yr_squares(xv[t].y);
#pragma unroll
  for (int i = 0; i < NW; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const unsigned r0 = yr_word(w[i][0], j), r1 = yr_word(w[i][1], j);
      const unsigned r2 = yr_word(w[i][2], j), r3 = yr_word(w[i][3], j);
      // Rows of A: g = column 2j (low halves), g + 8 = column 2j + 1 (high halves).
      const unsigned a0 = __byte_perm(r0, r1, 0x5410), a1 = __byte_perm(r0, r1, 0x7632);
      const unsigned a2 = __byte_perm(r2, r3, 0x5410), a3 = __byte_perm(r2, r3, 0x7632);
#pragma unroll
      for (int t = 0; t < MT; ++t)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(acc[i][t][j][0]), "+f"(acc[i][t][j][1]), "+f"(acc[i][t][j][2]),
                       "+f"(acc[i][t][j][3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(xv[t].x), "r"(xv[t].y));
    }
}
)CU";

// The kernel body. NAME: the epilogue's prefix; WEIGHTS: w0, w1, ...
const char* kDirectBody = R"CU(  extern __shared__ float4 smem4[];
  // The other k-warps' sums in fragment order, [KW - 1][CW][NW][MT][4 column pairs][32 lanes]
  // float4s, so that every access of a warp is one run of 512 bytes (no bank conflicts).
  float4* red = smem4;
  // Each warp's first PREFETCH steps of weights, [warp][PREFETCH][NW][4 rows][32 lanes].
  uint4* pf = reinterpret_cast<uint4*>(red + (KW - 1) * CW * NW * MT * 4 * 32);
  float* ss = reinterpret_cast<float*>(pf + PREFETCH * KW * CW * NW * 4 * 32);  // KW x M: X's squares
  __shared__ bool last;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int cw = warp % CW, kw = warp / CW, g = lane >> 2, c = lane & 3;
  const bool cols = g < CG;  // lane groups past CG have no columns
  const int nl = (cw * CG + g) * 8;  // the lane's 8 columns in the tile
  const long tile = blockIdx.x;
  const int ks = blockIdx.y, sa = ks * STEPS / KS, sb = (ks + 1) * STEPS / KS;
  {
    const long col = tile * NB + (cols ? nl : 0);
    const __half* wp[NW] = {WEIGHTS};
#pragma unroll
    for (int i = 0; i < NW; ++i) wp[i] += (long)(4 * c) * N + col;
    const __half* xp[MT];
#pragma unroll
    for (int t = 0; t < MT; ++t) xp[t] = x + (long)min(8 * t + g, M - 1) * K + 4 * c;
    float acc[NW][MT][4][4], sq[MT];
#pragma unroll
    for (int t = 0; t < MT; ++t) {
      sq[t] = 0.0f;
#pragma unroll
      for (int i = 0; i < NW; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][t][j][e] = 0.0f;
    }
    // This warp's steps: sa + kw, sa + kw + KW, ... in its slice's run of steps; or, with
    // INTERLEAVE, ks + KS kw, + KS KW, ..., so that the whole grid reads one band of rows
    // after the other.
    const int first = INTERLEAVE ? ks + KS * kw : sa + kw, stride = INTERLEAVE ? KS * KW : KW;
    const int end = INTERLEAVE ? STEPS : sb;
    const int count = first < end ? (end - first + stride - 1) / stride : 0;
    auto k_of = [&](int it) { return 16L * (first + (long)stride * it); };  // the step's first row
    // DEPTH steps of loads in registers.
    uint4 wb[DEPTH][NW][4];
    uint2 xb[DEPTH][MT];
    auto load_w = [&](uint4 (&w)[NW][4], int it) {
      const long k = k_of(it);
#pragma unroll
      for (int i = 0; i < NW; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r) w[i][r] = cols ? yr_stream_load(wp[i] + (k + r) * N) : make_uint4(0u, 0u, 0u, 0u);
    };
    auto load_x = [&](uint2 (&xv)[MT], int it) {
      const long k = k_of(it);
#pragma unroll
      for (int t = 0; t < MT; ++t) {
        xv[t] = *reinterpret_cast<const uint2*>(xp[t] + k);
        if (8 * t + g >= M) xv[t] = make_uint2(0u, 0u);  // rows past M are zero
      }
    };
    auto load = [&](uint4 (&w)[NW][4], uint2 (&xv)[MT], int it) {
      load_w(w, it);
      load_x(xv, it);
    };
    // The weights depend on no kernel before this one: the first PREFETCH steps' go to
    // shared memory (cp.async) and the next DEPTH steps' to registers before the wait for that
    // kernel, which X, the workspace and Y come after. A step more in flight than DEPTH at the
    // start, and only there: 0.6-1.1 us faster on H100, where a second prefetched step, or
    // DEPTH 2 throughout, was slower (kernel_tuning_direct.csv, runs 28-29).
    yr_launch_dependents();
    auto slot_of = [&](int d, int i, int r) { return pf + (((warp * PREFETCH + d) * NW + i) * 4 + r) * 32 + lane; };
#pragma unroll
    for (int d = 0; d < PREFETCH; ++d)
      if (d < count && cols) {
        const long k = k_of(d);
#pragma unroll
        for (int i = 0; i < NW; ++i)
#pragma unroll
          for (int r = 0; r < 4; ++r) yr_copy16(slot_of(d, i, r), wp[i] + (k + r) * N);
      }
    if (PREFETCH > 0) yr_copy_commit();
#pragma unroll
    for (int d = 0; d < DEPTH; ++d)
      if (PREFETCH + d < count) load_w(wb[d], PREFETCH + d);
    yr_grid_wait();
    uint2 xf[PREFETCH > 0 ? PREFETCH : 1][MT];
#pragma unroll
    for (int d = 0; d < PREFETCH; ++d)
      if (d < count) load_x(xf[d], d);
#pragma unroll
    for (int d = 0; d < DEPTH; ++d)
      if (PREFETCH + d < count) load_x(xb[d], PREFETCH + d);
    if (PREFETCH > 0) yr_copy_wait();
#pragma unroll
    for (int d = 0; d < PREFETCH; ++d)
      if (d < count) {
        uint4 w[NW][4];
#pragma unroll
        for (int i = 0; i < NW; ++i)
#pragma unroll
          for (int r = 0; r < 4; ++r) w[i][r] = cols ? *slot_of(d, i, r) : make_uint4(0u, 0u, 0u, 0u);
        yr_direct_step(acc, sq, w, xf[d], cw == 0);
      }
    for (int it0 = PREFETCH; it0 < count; it0 += DEPTH) {
#pragma unroll
      for (int d = 0; d < DEPTH; ++d)
        if (it0 + d < count) {
          yr_direct_step(acc, sq, wb[d], xb[d], cw == 0);
          if (it0 + d + DEPTH < count) load(wb[d], xb[d], it0 + d + DEPTH);
        }
    }
    // acc[i][t][j][e] is (X W_i)[m, n] for m = 8t + 2c + (e & 1), n = col + 2j + (e >> 1).
    auto at = [&](int q, int i, int t, int j) { return (((q * CW + cw) * NW + i) * MT + t) * 4 + j; };
    if (kw > 0 && cols) {
#pragma unroll
      for (int i = 0; i < NW; ++i)
#pragma unroll
        for (int t = 0; t < MT; ++t)
#pragma unroll
          for (int j = 0; j < 4; ++j)
            red[at(kw - 1, i, t, j) * 32 + lane] =
                make_float4(acc[i][t][j][0], acc[i][t][j][1], acc[i][t][j][2], acc[i][t][j][3]);
    }
    if (kHasRms && cw == 0)
#pragma unroll
      for (int t = 0; t < MT; ++t) {
        float v = sq[t];
        v += yr_shfl_xor(v, 1);
        v += yr_shfl_xor(v, 2);
        if (c == 0 && 8 * t + g < M) ss[kw * M + 8 * t + g] = v;
      }
    __syncthreads();
    // The k-warps' sums, then the whole tile to Y (KS = 1) or this slice's slot; the last
    // slice to finish (an atomic counter, reset by that block) adds the slots in slice order,
    // so the result does not depend on which block came last.
    float* slot = partial + (tile * KS + ks) * NW * M * NB;
    if (kw == 0 && cols) {
      for (int q = 0; q < KW - 1; ++q)
#pragma unroll
        for (int i = 0; i < NW; ++i)
#pragma unroll
          for (int t = 0; t < MT; ++t)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const float4 v = red[at(q, i, t, j) * 32 + lane];
              acc[i][t][j][0] += v.x; acc[i][t][j][1] += v.y; acc[i][t][j][2] += v.z; acc[i][t][j][3] += v.w;
            }
#pragma unroll
      for (int t = 0; t < MT; ++t)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int m = 8 * t + 2 * c + h;
          if (m >= M) continue;
          if (KS == 1) {
            float s2 = 0.0f;
            for (int q = 0; q < KW; ++q) s2 += ss[q * M + m];
            const float rms = kHasRms ? sqrtf(s2 / K) : 0.0f;
            __align__(16) __half out[8];
#pragma unroll
            for (int n = 0; n < 8; ++n) {
              float a[NW];
#pragma unroll
              for (int i = 0; i < NW; ++i) a[i] = acc[i][t][n / 2][h + 2 * (n & 1)];
              out[n] = __float2half(NAME_epilogue(a, rms));
            }
            *reinterpret_cast<uint4*>(y + (long)m * N + col) = *reinterpret_cast<const uint4*>(out);
          } else {
#pragma unroll
            for (int i = 0; i < NW; ++i) {
              float* dst = slot + ((long)i * M + m) * NB + nl;
              reinterpret_cast<float4*>(dst)[0] = make_float4(acc[i][t][0][h], acc[i][t][0][h + 2], acc[i][t][1][h], acc[i][t][1][h + 2]);
              reinterpret_cast<float4*>(dst)[1] = make_float4(acc[i][t][2][h], acc[i][t][2][h + 2], acc[i][t][3][h], acc[i][t][3][h + 2]);
            }
          }
        }
    }
    if (KS > 1) {
      if (kHasRms && tid < M) {
        float s2 = 0.0f;
        for (int q = 0; q < KW; ++q) s2 += ss[q * M + tid];
        squares[(tile * KS + ks) * M + tid] = s2;
      }
      __syncthreads();  // the block's writes come before thread 0's count (yr_arrive)
      if (tid == 0) last = yr_arrive(counters + tile) == KS - 1;
      __syncthreads();
      if (last) {
        // Four columns a thread: the slots in slice order, then the µGraph's epilogue.
        // Unrolled, so that every load of the finish is in flight at once.
        constexpr int ROUNDS = (M * NB / 4 + THREADS - 1) / THREADS;
#pragma unroll
        for (int r = 0; r < ROUNDS; ++r) {
          const int e = (tid + r * THREADS) * 4;
          if (e >= M * NB) continue;
          const int m = e / NB, n0 = e % NB;
          float4 a[NW];
          float s2 = 0.0f;
#pragma unroll
          for (int i = 0; i < NW; ++i) a[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
          for (int q = 0; q < KS; ++q) {
            const float* base = partial + (tile * KS + q) * NW * M * NB;
#pragma unroll
            for (int i = 0; i < NW; ++i) {
              const float4 v = yr_load_cg4(base + ((long)i * M + m) * NB + n0);
              a[i].x += v.x; a[i].y += v.y; a[i].z += v.z; a[i].w += v.w;
            }
            if (kHasRms) s2 += __ldcg(squares + (tile * KS + q) * M + m);
          }
          const float rms = kHasRms ? sqrtf(s2 / K) : 0.0f;
          __align__(8) __half out[4];
#pragma unroll
          for (int n = 0; n < 4; ++n) {
            float v[NW];
#pragma unroll
            for (int i = 0; i < NW; ++i) v[i] = n == 0 ? a[i].x : n == 1 ? a[i].y : n == 2 ? a[i].z : a[i].w;
            out[n] = __float2half(NAME_epilogue(v, rms));
          }
          *reinterpret_cast<uint2*>(y + (long)m * N + tile * NB + n0) = *reinterpret_cast<const uint2*>(out);
        }
        if (tid == 0) counters[tile] = 0u;  // ready for the next launch
      }
    }
  }
)CU";

// Figures of the tiling choice, from bench/tune_kernels.py on H100 (data/benchmarks/H100-SXM/
// kernel_tuning_direct.csv). A grid streams the weights at the lesser of about 3 TB/s and what
// its SMs keep in flight: an SM whose lanes all read streams about 29.6 GB/s with one n8 tile
// of X a step and 27.3 GB/s with two, and with CG lane groups of 8 reading, CG / 8 of that
// (run 38, no K split: 96 tiles of 64 columns took 18.80 us at M = 1 and 20.90 us at M = 16,
// less 1.1 and 1.7 us of the kernel's start and end, fitted on run 34's kernels without their
// finish; 128 tiles of 48 columns, CG = 6, took 19.50 us at M = 1). Splitting K costs a finish
// of about 0.9 us plus the slots' bytes at about 65 GB/s (run 19: the kernel without its
// finish, 1.28 us faster at M = 8 and 1.66 us at M = 16, 4 slots of 8 or 16 rows of 192 fp32
// columns). The start and end are the same for every tiling and left out.
constexpr double kStreamBytesPerS = 3.0e12;
constexpr double kFinishS = 0.9e-6;
constexpr double kFinishBytesPerS = 6.5e10;
// Warps a block: 18 with a K split (runs 21-22: 0.4 us faster than 16 at M = 8), 24 without
// (run 38: 0.65 us faster than 16 at M = 1 and 0.6 us at M = 8).
constexpr int kSplitWarps = 18;
constexpr int kWholeWarps = 24;

double sm_bytes_per_s(std::int64_t m) {
  return m <= 8 ? 29.6e9 : 27.3e9;
}

struct Tiling {
  int cg = 8;  // lane groups of 8 columns a warp
  int cw = 1;  // warps across the tile
  int ks = 1;  // K slices
  std::int64_t tiles = 0;
  double seconds = 0.0;  // the estimate
};

Tiling estimate(const GemvForm& f, int cg, int cw) {
  Tiling t{cg, cw, 1, f.n / (8 * cg * cw), 0.0};
  const std::int64_t sms = std::max<std::int64_t>(1, f.compute_units);
  t.ks = static_cast<int>(std::clamp<std::int64_t>(sms / t.tiles, 1, f.k / 16));
  std::int64_t blocks = t.tiles * t.ks;
  std::int64_t waves = (blocks + sms - 1) / sms;
  double busy = static_cast<double>(blocks) / static_cast<double>(waves);  // SMs, on average
  double rate = std::min(kStreamBytesPerS, busy * sm_bytes_per_s(f.m) * cg / 8.0);
  double nw = static_cast<double>(f.weight_inputs.size());
  t.seconds = 2.0 * static_cast<double>(f.k * f.n) * nw / rate;
  if (t.ks > 1)
    t.seconds +=
        kFinishS + 4.0 * static_cast<double>(t.ks * f.m * 8 * cg * cw) * nw / kFinishBytesPerS;
  return t;
}

// The tiling with the least estimated time; on a tie (within 1%) the fewer blocks, then the
// more columns a warp.
Tiling choose_tiling(const GemvForm& f) {
  Tiling best;
  for (int cw = 1; cw <= 8; ++cw)
    for (int cg = 8; cg >= 1; --cg) {
      if (f.n % (8 * cg * cw) != 0)
        continue;
      Tiling t = estimate(f, cg, cw);
      bool better = best.tiles == 0 || t.seconds < 0.99 * best.seconds ||
                    (t.seconds < 1.01 * best.seconds &&
                     (t.tiles * t.ks < best.tiles * best.ks ||
                      (t.tiles * t.ks == best.tiles * best.ks && cg > best.cg)));
      if (better)
        best = t;
    }
  return best;
}

}  // namespace

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

double gemv_direct_seconds(const GemvForm& f) {
  return choose_tiling(f).seconds;
}

void emit_pdl_helpers(CodeWriter& w) {
  w.raw(kPdlHelpers);
}

bool gemv_uses_direct(const GemvForm& f, Backend b) {
  // Two weights (gated MLP) stream faster through the shared-memory ring of
  // gemv_mma_emitter.cpp: 78.9 us against 81.8 us at best here (kernel_tuning_direct.csv).
  return b == Backend::kCuda && f.m <= 16 && f.weight_inputs.size() == 1 && f.k % 16 == 0 &&
         f.n % 8 == 0;
}

void emit_gemv_direct_constants(CodeWriter& w, const GemvForm& f) {
  std::size_t nw = f.weight_inputs.size();
  Tiling t = choose_tiling(f);
  w.line("#ifndef YR_CG");
  w.line("#define YR_CG " + std::to_string(t.cg) +
         "  // lane groups of 8 columns a warp (8 at most)");
  w.line("#endif");
  w.line("#ifndef YR_CW");
  w.line("#define YR_CW " + std::to_string(t.cw) + "  // warps across the tile");
  w.line("#endif");
  w.line("#ifndef YR_WARPS");
  w.line("#define YR_WARPS " + std::to_string(t.ks == 1 ? kWholeWarps : kSplitWarps) +
         "  // warps a block: YR_CW across N, YR_WARPS / YR_CW along K");
  w.line("#endif");
  w.line("#ifndef YR_DEPTH");
  w.line("#define YR_DEPTH 1  // k16 steps of loads a warp keeps in registers");
  w.line("#endif");
  w.line("#ifndef YR_PREFETCH");
  w.line("#define YR_PREFETCH 1  // k16 steps a warp copies to shared memory before the wait");
  w.line("#endif");
  w.line("#ifndef YR_INTERLEAVE");
  // Interleaved slices: 0.10-0.22 us faster on H100 at M = 1 and 8 (kernel_tuning_direct.csv,
  // runs 29 and 32); at M = 16 (two n8 tiles of X a step) 0.25 us slower in run 29 and
  // 0.09 us faster in run 32, so left off there.
  w.line("#define YR_INTERLEAVE " + std::string(f.m <= 8 ? "1" : "0") +
         "  // 1: the K slices take every KS-th step, not a run of steps");
  w.line("#endif");
  w.line("#ifndef YR_KSPLIT");
  w.line("#define YR_KSPLIT " + std::to_string(t.ks) + "  // blocks along K");
  w.line("#endif");
  w.line("constexpr int M = " + std::to_string(f.m) + ", K = " + std::to_string(f.k) +
         ", N = " + std::to_string(f.n) + ", NW = " + std::to_string(nw) + ";");
  w.line("constexpr bool kHasRms = " + std::string(f.rms_accum >= 0 ? "true" : "false") + ";");
  w.line("constexpr int CG = YR_CG, CW = YR_CW, KW = YR_WARPS / YR_CW > 0 ? YR_WARPS / YR_CW : 1;");
  w.line("constexpr int DEPTH = YR_DEPTH, PREFETCH = YR_PREFETCH, INTERLEAVE = YR_INTERLEAVE;");
  w.line("constexpr int THREADS = 32 * CW * KW;");
  w.line(
      "constexpr int NB = 8 * CG * CW, MT = (M + 7) / 8, STEPS = K / 16;  // tile columns, n8 "
      "tiles of X");
  w.line("constexpr int KS = YR_KSPLIT;  // K slices of STEPS / KS steps (rounded down or up)");
  w.line(
      "static_assert(N % NB == 0 && K % 16 == 0 && M <= 16 && CG <= 8 && DEPTH >= 1 && THREADS <= "
      "1024 && KS <= STEPS, \"tiling\");");
  w.line("constexpr long kPartialFloats = KS > 1 ? (long)(N / NB) * KS * NW * M * NB : 0;");
  w.line("constexpr long kSquareFloats = KS > 1 ? (long)(N / NB) * KS * M : 0;");
  w.line(
      "constexpr long kSharedBytes = ((long)(KW - 1) * CW * NW * MT * 4 * 32 * 4 + KW * M) * 4 + "
      "(long)PREFETCH * KW * CW * NW * 4 * 32 * 16;");
}

void emit_gemv_direct_helpers(CodeWriter& w) {
  emit_gemv_arrive_helper(w, Backend::kCuda);
  emit_pdl_helpers(w);
  w.raw(kDirectHelpers);
}

void emit_gemv_direct_kernel(CodeWriter& w, const GemvForm& f, const std::string& name) {
  std::string weights, params;
  for (std::size_t i = 0; i < f.weight_inputs.size(); ++i) {
    weights += (i ? ", w" : "w") + std::to_string(i);
    params += ", const __half* __restrict__ w" + std::to_string(i);
  }
  w.line("__global__ void __launch_bounds__(THREADS, 1)");
  w.open(name + "_gemv(const __half* __restrict__ x" + params +
         ", __half* __restrict__ y, float* __restrict__ partial, float* __restrict__ squares, "
         "unsigned* __restrict__ counters)");
  std::string body = kDirectBody;
  replace_all(body, "WEIGHTS", weights);
  replace_all(body, "NAME", name);
  w.raw(body);
  w.close();
  w.line("");
  bool tma = gemv_uses_tma(f, Backend::kCuda);
  if (tma)
    emit_gemv_tma(w, f, name);
  emit_gemv_launcher(w, f, name, Backend::kCuda, "THREADS", true, tma);
}

}  // namespace yirage::codegen
