// The tensor-core variant of the CUDA GEMV path (gemv_emitter.cpp), for 4 < M <= 16: with
// more than a few rows of X, fp32 FMAs rather than memory bound the CUDA-core kernel, so
// here X (zero-padded to 16 rows) is the A operand of mma.sync.m16n8k16 and the weights the
// B operand. Each block walks its K slice in chunks of SR rows through a ring of YR_STAGES
// shared-memory slots filled by cp.async (one commit group per chunk, YR_STAGES - 1 chunks in
// flight while one is computed); a slot holds the chunk's weight rows (64 or 128 columns,
// 16-byte chunks XOR-swizzled by the row so that ldmatrix.trans reads without bank conflicts)
// and X's matching columns. Warp w owns columns 8w..8w+7 over the whole slice, so no warp
// meets another's partial sums before the common finish.
#include "codegen/backend/backend.h"

#include <algorithm>

namespace yirage::codegen {

namespace {

// What H100 gives a grid that streams weights (data/benchmarks/H100-SXM/read_patterns.csv):
// its memory reads 3.12 TB/s when every SM has the same bytes to read (bench/pattern_probe.cu,
// "bulk 264 blocks"), and shares that about equally among the SMs that are reading, each SM
// taking at most about 31 GB/s (the TMA GEMV: 96 SMs read 50 MB in 16.9 us).
constexpr double kReadBytesPerS = 3.12e12;
constexpr double kSmReadBytesPerS = 31e9;

// The seconds a grid of `tiles` equal tiles of `tile_bytes` takes to stream them, one wave
// over `sms` SMs: while every busy SM reads, each gets an equal share of the memory; those
// with one tile fewer finish first, and the rest then read their last tile at the per-SM cap.
// So 224 tiles of 64 columns (40 SMs with one, 92 with two) are slower than 112 of 128.
double ring_seconds(std::int64_t tiles, double tile_bytes, std::int64_t sms) {
  std::int64_t hi = (tiles + sms - 1) / sms, heavy = tiles - (hi - 1) * sms;
  std::int64_t busy = std::min(tiles, sms);
  double shared = std::min(kSmReadBytesPerS, kReadBytesPerS / static_cast<double>(busy));
  double last = std::min(kSmReadBytesPerS, kReadBytesPerS / static_cast<double>(heavy));
  return static_cast<double>(hi - 1) * tile_bytes / shared + tile_bytes / last;
}

}  // namespace

/// Whether the CUDA GEMV path uses the tensor-core variant for this form.
bool gemv_uses_mma(const GemvForm& f, Backend b) {
  return b == Backend::kCuda && f.m > 4 && f.m <= 16 && f.k % 64 == 0;
}

void emit_gemv_mma_constants(CodeWriter& w, const GemvForm& f) {
  std::size_t nw = f.weight_inputs.size();
  std::int64_t tiles = f.n / 64;
  // The tiling measured best on H100 (bench/tune_kernels.py, data/benchmarks/H100-SXM/
  // kernel_tuning*.csv): chunks of 32 KB of weights (SR = 256 / NW rows), 3 ring slots with
  // one weight and 2 with two, and K split only as far as needed to give 0.7 blocks per SM
  // (96 column tiles at 1 slice: 24.0 us at M = 8 against 24.2 us at 4 slices of 64-row
  // chunks; gated MLP's 224 tiles at 1 slice, 128-row chunks, 2 slots: 78.9 us against 80.0 us
  // at 64 rows, 3 slots, and 98 us at 2 slices).
  std::int64_t ks = 1;
  while (10 * tiles * ks < 7 * f.compute_units && (f.k / (ks * 2)) % 64 == 0)
    ks *= 2;
  std::int64_t sr = 256 / static_cast<std::int64_t>(nw);
  while (sr > 64 && (f.k / ks) % sr != 0)
    sr /= 2;
  std::int64_t stages = nw == 1 ? 3 : 2;
  // Without a K split, 128-column tiles (16 warps) where they spread the bytes more evenly
  // over the SMs, by at least 1% of the time, and the ring fits sm_90's 227 KB: the gated MLP's 112
  // tiles took 77.4 us on H100 against 78.0 for 224 of 64 (kernel_tuning_direct.csv, run 58).
  std::int64_t nb = 64;
  auto ring_bytes = [&](std::int64_t cols) {
    return stages * (static_cast<std::int64_t>(nw) * sr * cols + f.m * (sr + 8)) * 2 + f.m * 4;
  };
  double column_bytes = 2.0 * static_cast<double>(f.k * static_cast<std::int64_t>(nw));
  if (ks == 1 && f.n % 128 == 0 && ring_bytes(128) <= 227 * 1024 &&
      ring_seconds(f.n / 128, 128 * column_bytes, f.compute_units) <
          0.99 * ring_seconds(tiles, 64 * column_bytes, f.compute_units))
    nb = 128;
  w.line("#ifndef YR_KSPLIT");
  w.line("#define YR_KSPLIT " + std::to_string(ks) + "  // blocks along K");
  w.line("#endif");
  w.line("#ifndef YR_STAGES");
  w.line("#define YR_STAGES " + std::to_string(stages) + "  // ring slots: chunks in flight + 1");
  w.line("#endif");
  w.line("constexpr int M = " + std::to_string(f.m) + ", K = " + std::to_string(f.k) +
         ", N = " + std::to_string(f.n) + ", NW = " + std::to_string(nw) + ";");
  w.line("constexpr bool kHasRms = " + std::string(f.rms_accum >= 0 ? "true" : "false") + ";");
  w.line("constexpr int NB = " + std::to_string(nb) +
         ", NT = 4 * NB;  // columns and threads per block: one n8 tile per warp");
  w.line("// Piece q (16 bytes) of shared row r: XOR-swizzled by the row within each 128 bytes,");
  w.line("// so that ldmatrix.trans reads eight rows without bank conflicts.");
  w.line("YR_DEV int yr_swz(int q, int r) { return (q & ~7) | ((q & 7) ^ (r & 7)); }");
  w.line("constexpr int KS = YR_KSPLIT, KC = K / KS;  // K slices, rows per slice");
  w.line("#ifndef YR_SR");
  w.line("#define YR_SR " + std::to_string(sr) + "  // weight rows per chunk");
  w.line("#endif");
  w.line("constexpr int SR = YR_SR, CHUNKS = KC / SR;");
  w.line("constexpr int STAGES = YR_STAGES, RED_SLICES = 1;");
  w.line("constexpr int XS = SR + 8;                  // X rows padded by 16 bytes");
  w.line("constexpr int SLOT = NW * SR * NB + M * XS; // halves per ring slot");
  w.line(
      "static_assert(N % NB == 0 && KC % SR == 0 && SR % 32 == 0 && M <= 16 && STAGES >= 2, "
      "\"tiling\");");
  w.line("constexpr long kSharedBytes = (long)STAGES * SLOT * 2 + M * 4;");
  w.line("constexpr long kPartialFloats = KS > 1 ? (long)KS * NW * M * N : 0;");
  w.line("constexpr long kSquareFloats = KS > 1 ? (long)(N / NB) * KS * M : 0;");
  w.line("template <int N_> YR_DEV void yr_wait_groups() {");
  w.line("  asm volatile(\"cp.async.wait_group %0;\\n\" ::\"n\"(N_));");
  w.line("}");
  w.line("YR_DEV void yr_cp16(void* dst, const void* src) {");
  w.line("  unsigned s = (unsigned)__cvta_generic_to_shared(dst);");
  w.line(
      "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\\n\" ::\"r\"(s), \"l\"(src));");
  w.line("}");
}

namespace {

const char* kMmaStep = R"MMA(
// One k16 step of warp `warp`'s n8 tile into accumulator set `acc`: A = X[0:16, k0:k0+16]
// (rows >= M are zero), B = the slot's weight rows k0..k0+15 at columns 8 warp..8 warp+7,
// from ldmatrix.trans. Warp 0 also adds the squares of its A fragment to `sq` (rows g and
// g + 8, a quarter of the step's columns each): rms(X) comes from the tiles already loaded.
YR_DEV void yr_mma_step(float (&acc)[NW][4], float (&sq)[2], const __half* slot,
                        const __half* xs, int k0, int warp, int lane) {
  const int g = lane >> 2, t = lane & 3;
  auto ld = [&](int row, int col) {
    return row < M ? *reinterpret_cast<const unsigned*>(xs + row * XS + col) : 0u;
  };
  const unsigned a0 = ld(g, k0 + 2 * t), a1 = ld(g + 8, k0 + 2 * t);
  const unsigned a2 = ld(g, k0 + 2 * t + 8), a3 = ld(g + 8, k0 + 2 * t + 8);
  if (kHasRms && warp == 0) {
    auto sq2 = [](unsigned v) {
      const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&v));
      return f.x * f.x + f.y * f.y;
    };
    sq[0] += sq2(a0) + sq2(a2);
    sq[1] += sq2(a1) + sq2(a3);
  }
  const int k = k0 + (lane & 15);
#pragma unroll
  for (int i = 0; i < NW; ++i) {
    const __half* row = slot + (i * SR + k) * NB + yr_swz(warp, k) * 8;
    unsigned b0, b1;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(b0), "=r"(b1)
                 : "r"((unsigned)__cvta_generic_to_shared(row)));
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(acc[i][0]), "+f"(acc[i][1]), "+f"(acc[i][2]), "+f"(acc[i][3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}
)MMA";

const char* kMmaBody = R"MMA(  extern __shared__ float4 smem4[];
  __half* ring = reinterpret_cast<__half*>(smem4);  // STAGES slots of SLOT halves
  float* ss = reinterpret_cast<float*>(ring + STAGES * SLOT);  // M
  float* red = reinterpret_cast<float*>(smem4);  // NW x M x NB, over the ring after the loop
  __shared__ bool last;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int ks = blockIdx.y;
  const long kbase = (long)ks * KC, nbase = (long)blockIdx.x * NB;
  (void)partial; (void)squares; (void)counters; (void)last;
  // Each thread's part of a chunk's weights, fixed over the chunks: 16-byte piece q of rows
  // r0 + 32 p (p < SR / 32) of every weight.
  constexpr int PASSES = SR / 32;
  const int r0 = tid / (NB / 8), q = tid % (NB / 8);
  const __half* wsrc[NW] = {WEIGHTS};
#pragma unroll
  for (int i = 0; i < NW; ++i) wsrc[i] += (kbase + r0) * N + nbase + q * 8;
  const int wdst = r0 * NB + yr_swz(q, r0) * 8;  // (r0 + 32 p) & 7 == r0 & 7
  // Chunk c (rows kbase + c SR ..) into slot c % STAGES: its weights, then X's columns and
  // the commit that makes them one group (empty past the end).
  auto load_w = [&](int c) {
    if (c < CHUNKS) {
      __half* slot = ring + (c % STAGES) * SLOT;
#pragma unroll
      for (int i = 0; i < NW; ++i)
#pragma unroll
        for (int p = 0; p < PASSES; ++p)
          yr_cp16(slot + (i * SR + 32 * p) * NB + wdst, wsrc[i] + ((long)c * SR + 32 * p) * N);
    }
  };
  auto load_x = [&](int c) {
    if (c < CHUNKS) {
      __half* slot = ring + (c % STAGES) * SLOT;
      for (int e = tid * 8; e < M * SR; e += NT * 8)  // SR is a power of two: shifts
        yr_cp16(slot + NW * SR * NB + (e / SR) * XS + e % SR,
                x + (long)(e / SR) * K + kbase + (long)c * SR + e % SR);
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };
  // The weights depend on no kernel before this one: the first chunks' weights are in flight
  // before the wait for that kernel (yr_grid_wait), which X, the workspace and Y come after.
  // The first group holds them all, the others one chunk's X each.
  for (int c = 0; c < STAGES - 1; ++c) load_w(c);
  yr_grid_wait();
  for (int c = 0; c < STAGES - 1; ++c) load_x(c);
  // Two accumulator sets, even and odd k16 steps, so that consecutive mma do not wait on each
  // other; summed after the loop.
  float acc[NW][4], acc2[NW][4];
#pragma unroll
  for (int i = 0; i < NW; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = acc2[i][j] = 0.0f;
  float sq[2] = {0.0f, 0.0f};  // warp 0: this lane's share of the squares of rows g, g + 8
  for (int c = 0; c < CHUNKS; ++c) {
    yr_wait_groups<STAGES - 2>();  // chunk c has landed
    __syncthreads();               // and every warp is done with the slot refilled next
    load_w(c + STAGES - 1);
    load_x(c + STAGES - 1);
    const __half* slot = ring + (c % STAGES) * SLOT;
    const __half* xs = slot + NW * SR * NB;
#pragma unroll
    for (int k0 = 0; k0 < SR; k0 += 32) {
      yr_mma_step(acc, sq, slot, xs, k0, warp, lane);
      yr_mma_step(acc2, sq, slot, xs, k0 + 16, warp, lane);
    }
  }
  yr_wait_groups<0>();
  // Only now may the next kernel start: launched at the start, its blocks would take SM room
  // beside these (94.8 us against 78.8 for the gated MLP on H100); here 0.6 us is won.
  yr_launch_dependents();
#pragma unroll
  for (int i = 0; i < NW; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] += acc2[i][j];
  if (kHasRms && warp == 0)
    for (int h = 0; h < 2; ++h) {
      float v = sq[h];
      v += yr_shfl_xor(v, 1);
      v += yr_shfl_xor(v, 2);
      const int g = lane >> 2;
      if ((lane & 3) == 0 && g + 8 * h < M) ss[g + 8 * h] = v;
    }
  __syncthreads();  // the ring is read; its space now holds the block's tile for the finish
  {
    const int g = lane >> 2, t = lane & 3, col = warp * 8 + 2 * t;
#pragma unroll
    for (int i = 0; i < NW; ++i) {
      float* r = red + (long)i * M * NB + col;
      if (g < M) { r[g * NB] = acc[i][0]; r[g * NB + 1] = acc[i][1]; }
      if (g + 8 < M) { r[(g + 8) * NB] = acc[i][2]; r[(g + 8) * NB + 1] = acc[i][3]; }
    }
  }
  __syncthreads();
)MMA";

}  // namespace

void emit_gemv_mma_step(CodeWriter& w) {
  w.raw(kMmaStep);
}

void emit_gemv_mma_body(CodeWriter& w, const GemvForm& f) {
  std::string weights;
  for (std::size_t i = 0; i < f.weight_inputs.size(); ++i)
    weights += (i ? ", w" : "w") + std::to_string(i);
  std::string body = kMmaBody;
  body.replace(body.find("WEIGHTS"), 7, weights);
  w.raw(body);
}

}  // namespace yirage::codegen
