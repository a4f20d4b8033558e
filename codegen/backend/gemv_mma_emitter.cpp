// The tensor-core variant of the CUDA GEMV path (gemv_emitter.cpp), for 4 < M <= 16: with
// more than a few rows of X, fp32 FMAs rather than memory bound the CUDA-core kernel, so
// here X (zero-padded to 16 rows) is the A operand of mma.sync.m16n8k16 and the weights the
// B operand. Each block walks its K slice in chunks of SR rows through a ring of YR_STAGES
// shared-memory slots filled by cp.async (one commit group per chunk, YR_STAGES - 1 chunks in
// flight while one is computed); a slot holds the chunk's weight rows (64 columns, 16-byte
// chunks XOR-swizzled by the row so that ldmatrix.trans reads without bank conflicts) and X's
// matching columns. Warp w owns columns 8w..8w+7 over the whole slice, so no warp meets
// another's partial sums before the common finish.
#include "codegen/backend/backend.h"

namespace yirage::codegen {

/// Whether the CUDA GEMV path uses the tensor-core variant for this form.
bool gemv_uses_mma(const GemvForm& f, Backend b) {
  return b == Backend::kCuda && f.m > 4 && f.m <= 16 && f.k % 64 == 0;
}

void emit_gemv_mma_constants(CodeWriter& w, const GemvForm& f) {
  std::size_t nw = f.weight_inputs.size();
  std::int64_t tiles = f.n / 64;
  // Blocks along K: the fewest (a power of two) that give 1.5 blocks per H100 SM; more slices
  // only add partial sums (bench/tune_kernels.py on H100: 96 column tiles run best at 4
  // slices, 224 at 1: gated MLP 81.1 us against 98.2 us at 2).
  std::int64_t ks = 1;
  while (2 * tiles * ks < 3 * 132 && (f.k / (ks * 2)) % 64 == 0)
    ks *= 2;
  w.line("#ifndef YR_KSPLIT");
  w.line("#define YR_KSPLIT " + std::to_string(ks) + "  // blocks along K");
  w.line("#endif");
  w.line("#ifndef YR_STAGES");
  w.line("#define YR_STAGES 3  // ring slots: chunks in flight + 1");
  w.line("#endif");
  w.line("constexpr int M = " + std::to_string(f.m) + ", K = " + std::to_string(f.k) +
         ", N = " + std::to_string(f.n) + ", NW = " + std::to_string(nw) + ";");
  w.line("constexpr bool kHasRms = " + std::string(f.rms_accum >= 0 ? "true" : "false") + ";");
  w.line("constexpr int NB = 64;                      // columns per block: one n8 tile per warp");
  w.line("constexpr int KS = YR_KSPLIT, KC = K / KS;  // K slices, rows per slice");
  w.line("constexpr int SR = 64, CHUNKS = KC / SR;    // rows per chunk");
  w.line("constexpr int STAGES = YR_STAGES, RED_SLICES = 1;");
  w.line("constexpr int XS = SR + 8;                  // X rows padded by 16 bytes");
  w.line("constexpr int SLOT = NW * SR * NB + M * XS; // halves per ring slot");
  w.line("static_assert(N % NB == 0 && KC % SR == 0 && M <= 16 && STAGES >= 2, \"tiling\");");
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
// One k16 step of warp `warp`'s n8 tile: A = X[0:16, k0:k0+16] (rows >= M are zero), B = the
// slot's weight rows k0..k0+15 at columns 8 warp..8 warp+7, from ldmatrix.trans.
YR_DEV void yr_mma_step(float (&acc)[NW][4], const __half* slot, const __half* xs, int k0,
                        int warp, int lane) {
  const int g = lane >> 2, t = lane & 3;
  auto ld = [&](int row, int col) {
    return row < M ? *reinterpret_cast<const unsigned*>(xs + row * XS + col) : 0u;
  };
  const unsigned a0 = ld(g, k0 + 2 * t), a1 = ld(g + 8, k0 + 2 * t);
  const unsigned a2 = ld(g, k0 + 2 * t + 8), a3 = ld(g + 8, k0 + 2 * t + 8);
  const int k = k0 + (lane & 15);
#pragma unroll
  for (int i = 0; i < NW; ++i) {
    const __half* row = slot + (i * SR + k) * NB + ((warp ^ (k & 7)) * 8);
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
  const __half* wp[NW] = {WEIGHTS};
  // Chunk c (rows kbase + c SR ..) into slot c % STAGES, as one commit group (empty past the end).
  auto load = [&](int c) {
    if (c < CHUNKS) {
      __half* slot = ring + (c % STAGES) * SLOT;
      for (int e = tid; e < NW * SR * 8; e += 256) {
        const int i = e / (SR * 8), r = e / 8 % SR, q = e % 8;
        yr_cp16(slot + (i * SR + r) * NB + ((q ^ (r & 7)) * 8),
                wp[i] + (kbase + (long)c * SR + r) * N + nbase + q * 8);
      }
      __half* xs = slot + NW * SR * NB;
      for (int e = tid * 8; e < M * SR; e += 256 * 8)
        yr_cp16(xs + (e / SR) * XS + e % SR, x + (long)(e / SR) * K + kbase + (long)c * SR + e % SR);
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };
  for (int c = 0; c < STAGES - 1; ++c) load(c);
  float acc[NW][4];
#pragma unroll
  for (int i = 0; i < NW; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
  float sq[2] = {0.0f, 0.0f};  // this lane's share of the squares of rows warp and warp + 8
  for (int c = 0; c < CHUNKS; ++c) {
    yr_wait_groups<STAGES - 2>();  // chunk c has landed
    __syncthreads();               // and every warp is done with the slot refilled next
    load(c + STAGES - 1);
    const __half* slot = ring + (c % STAGES) * SLOT;
    const __half* xs = slot + NW * SR * NB;
    if (kHasRms)
      for (int h = 0; h < 2; ++h)
        if (warp + 8 * h < M)
          for (int j = lane; j < SR; j += 32) {
            const float v = __half2float(xs[(warp + 8 * h) * XS + j]);
            sq[h] += v * v;
          }
#pragma unroll
    for (int k0 = 0; k0 < SR; k0 += 16) yr_mma_step(acc, slot, xs, k0, warp, lane);
  }
  yr_wait_groups<0>();
  if (kHasRms)
    for (int h = 0; h < 2; ++h) {
      float v = sq[h];
      for (int o = 16; o > 0; o >>= 1) v += yr_shfl_xor(v, o);
      if (lane == 0 && warp + 8 * h < M) ss[warp + 8 * h] = v;
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
