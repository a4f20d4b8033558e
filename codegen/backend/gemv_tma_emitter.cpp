// The Hopper variant of the direct GEMV (gemv_direct_emitter.cpp): the Tensor Memory
// Accelerator copies the weights and X into a ring of shared-memory stages, one lane of a
// producer warp issuing the copies and mbarriers counting their bytes, while consumer warps
// read each stage with ldmatrix into mma.sync.m16n8k16 fragments. A block owns 64 columns
// and the whole of K, so the grid has N / 64 blocks and no finish.
//
// A stage is TR rows of the block's 64 weight columns (one box, 128-byte rows, swizzled so that
// ldmatrix.trans reads them without bank conflicts) and the matching TR columns of X as TR / 64
// boxes of [M][64], each 1024-aligned and swizzled the same way (read with ldmatrix), counted on
// one barrier. Weights depend on no earlier kernel: the producer copies the first TS stages'
// weights before the programmatic launch's wait, and their X after it. A consumer warp takes a
// stage's k16 steps w, w + TCW, ... and hands the stage back (its empty barrier) when done; at
// the end the warps' sums meet in the ring's memory, a column a thread, in warp order.
//
// Figures, H100 SXM (data/benchmarks/H100-SXM/kernel_tuning_direct.csv, runs 41-48): X loaded
// from global memory a step at a time, as the register path loads it, held every stage back
// (M = 8: 21.2 us; the same kernel with X's loads removed 17.9 us); X through the ring, 17.3 us.
// More rows a stage and more stages were faster: 256 rows and 6 stages (5 at M = 16, where six
// do not fit) took 16.9, 17.3 and 18.6 us at M = 1, 8, 16 against 18.8, 19.0 and 20.4 us for the
// register path, and 17.2 us for every byte read once (bench/stream_probe.cu). X in a ring of
// its own, so that M = 16 fits six stages of weights beside four of X, was 0.4 us slower (run 48).
#include "codegen/backend/backend.h"

#include <algorithm>

namespace yirage::codegen {

namespace {

// sm_90's shared memory a block may have; the ring takes what is left after the swizzle's
// 1 KB alignment and the barriers' static memory, at most kTmaFlightRows rows of weights in
// flight (6 stages of 256: more stages were faster up to there, runs 44-45).
constexpr std::int64_t kSm90SharedBytes = 227 * 1024;
constexpr std::int64_t kRingSlack = 1024 + 256;  // the alignment, and the barriers' static memory
constexpr std::int64_t kTmaFlightRows = 6 * 256;
constexpr int kTmaConsumerWarps = 8;  // runs 41-45: 8 level with or faster than 4 and 16
// What one SM's ring streams (run 45: 96 SMs held 2.95-3.2 TB/s, the HBM's ceiling, once the
// kernel's start and end are taken off), for the choice against the register path.
constexpr double kTmaSmBytesPerS = 33e9;
constexpr double kHbmBytesPerS = 3.0e12;  // the grid's cap, as the register path's model has it

struct TmaTiling {
  std::int64_t rows = 0;    // weight rows a stage
  std::int64_t stages = 0;  // stages in the ring
  std::int64_t xbox = 0;    // bytes a [M][64] box of X takes in a stage
};

TmaTiling tma_tiling(const GemvForm& f) {
  TmaTiling t;
  for (std::int64_t r : {256, 128, 64})
    if (f.k % r == 0) {
      t.rows = r;
      break;
    }
  if (t.rows == 0)
    return t;
  t.xbox = (f.m * 128 + 1023) / 1024 * 1024;
  const std::int64_t stage = t.rows * 128 + t.rows / 64 * t.xbox;
  t.stages = std::min((kSm90SharedBytes - kRingSlack) / stage, kTmaFlightRows / t.rows);
  return t;
}

const char* kTmaCode =
    R"CU(#include <cuda.h>  // CUtensorMap and its enums (no driver library linked: see the launcher)
// The weights' and X's path through the Tensor Memory Accelerator on sm_90 (YR_TMA 0: the
// register path everywhere). The launcher takes it where the device is sm_90 or later, the
// driver encodes tensor maps and X and the weights are 16-byte aligned.
#ifndef YR_TMA
#define YR_TMA 1
#endif
#if YR_TMA && CUDART_VERSION < 12050
#undef YR_TMA
#define YR_TMA 0  // cudaGetDriverEntryPointByVersion came with CUDA 12.5
#endif
constexpr int TR = TR_ROWS, TS = TR_STAGES, TCW = TR_WARPS;  // rows a stage, stages, consumer warps
constexpr int T_THREADS = (TCW + 1) * 32;
// A stage: weights [TR][64], then X as TR / 64 boxes of [M][64], each 1024-aligned.
constexpr int T_WBYTES = TR * 128, T_XBOX = (M * 128 + 1023) / 1024 * 1024;
constexpr int T_STAGE = T_WBYTES + TR / 64 * T_XBOX;
constexpr long T_RING = (long)TS * T_STAGE;
constexpr long T_RED = ((long)TCW * M * 64 + TCW * M) * 4;  // the warps' sums and squares
[[maybe_unused]] constexpr long kTmaSharedBytes = 1024 + (T_RING > T_RED ? T_RING : T_RED);
static_assert(N % 64 == 0 && K % TR == 0 && TR % 64 == 0 && TR <= 256 && NW == 1 && M <= 16, "TMA tiling");

YR_DEV unsigned yr_smem(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
YR_DEV void yr_mb_init(uint64_t* b, unsigned n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(yr_smem(b)), "r"(n) : "memory");
}
// Arrives once and expects `bytes` of copies before the barrier's phase completes.
YR_DEV void yr_mb_expect(uint64_t* b, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(yr_smem(b)), "r"(bytes) : "memory");
}
YR_DEV void yr_mb_arrive(uint64_t* b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(yr_smem(b)) : "memory");
}
YR_DEV void yr_mb_wait(uint64_t* b, unsigned parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT;\n}\n"
      ::"r"(yr_smem(b)), "r"(parity) : "memory");
}
// A 2-D box of `map` at (c0, c1) (innermost first) to dst, counted on bar.
YR_DEV void yr_tma_copy(const CUtensorMap* map, unsigned char* dst, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      ::"r"(yr_smem(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(yr_smem(bar)) : "memory");
}
// The 16-byte piece `chunk` of 128-byte row `row` of a box copied with the 128-byte swizzle.
YR_DEV unsigned yr_swizzled(unsigned box, int row, int chunk) {
  return box + row * 128 + ((chunk ^ (row & 7)) << 4);
}
#endif

__global__ void __launch_bounds__(T_THREADS, 1)
NAME_gemv_tma(const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap xmap, __half* __restrict__ y) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int T_STEPS = TR / 16, T_STAGES_K = K / TR, T_QMAX = (T_STEPS + TCW - 1) / TCW;
  constexpr int T_XBYTES = M * TR * 2;  // what a stage's copies of X bring
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) uint64_t full[TS], empty[TS];
  unsigned char* ring = smem_raw + ((1024 - (yr_smem(smem_raw) & 1023)) & 1023);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, tile = blockIdx.x;
  if (tid == 0) {
    for (int s = 0; s < TS; ++s) {
      yr_mb_init(&full[s], 1);
      yr_mb_init(&empty[s], TCW);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  yr_launch_dependents();
  if (warp == TCW) {  // the producer
    if (lane == 0) {
      // Stage p's X, TR / 64 boxes, into its slot.
      auto copy_x = [&](int p) {
        for (int b = 0; b < TR / 64; ++b)
          yr_tma_copy(&xmap, ring + (long)(p % TS) * T_STAGE + T_WBYTES + b * T_XBOX, p * TR + b * 64, 0, &full[p % TS]);
      };
      // Stage s into slot s % TS once stage s - TS is read: the first TS stages' weights
      // before the wait for the kernel before, their X after it.
      constexpr int FIRST = TS < T_STAGES_K ? TS : T_STAGES_K;
      for (int s = 0; s < T_STAGES_K; ++s) {
        const int slot = s % TS;
        if (s >= TS) yr_mb_wait(&empty[slot], (s / TS - 1) & 1);
        yr_mb_expect(&full[slot], T_WBYTES + T_XBYTES);
        yr_tma_copy(&wmap, ring + (long)slot * T_STAGE, tile * 64, s * TR, &full[slot]);
        if (s == FIRST - 1) {
          yr_grid_wait();  // X comes from the kernel before
          for (int p = 0; p < FIRST; ++p) copy_x(p);
        } else if (s >= FIRST) {
          copy_x(s);
        }
      }
    }
    return;
  }
  const int g = lane >> 2, c = lane & 3;
  float acc[MT][4][4], sq[MT];
#pragma unroll
  for (int t = 0; t < MT; ++t) {
    sq[t] = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[t][j][e] = 0.0f;
  }
  for (int s = 0; s < T_STAGES_K; ++s) {
    const int slot = s % TS;
    yr_mb_wait(&full[slot], (s / TS) & 1);
    const unsigned st = yr_smem(ring + (long)slot * T_STAGE), xs = st + T_WBYTES;
#pragma unroll
    for (int qi = 0; qi < T_QMAX; ++qi) {
      const int q = warp + qi * TCW;  // the step's rows: q * 16 .. q * 16 + 15 of the stage
      if (q >= T_STEPS) continue;
      // B: ldmatrix's matrix i = lane / 8 is X rows 8 (i / 2) .. + 7 at the step's k-half i % 2.
      unsigned b[MT][2];
      {
        const int i = lane >> 3, row = min(8 * (i >> 1) + (lane & 7), M - 1);
        const unsigned at = yr_swizzled(xs + q * 16 / 64 * T_XBOX, row, q * 16 % 64 / 8 + (i & 1));
        if (MT == 2)
          asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                       : "=r"(b[0][0]), "=r"(b[0][1]), "=r"(b[MT - 1][0]), "=r"(b[MT - 1][1]) : "r"(at));
        else
          asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                       : "=r"(b[0][0]), "=r"(b[0][1]) : "r"(at));
      }
#pragma unroll
      for (int t = 0; t < MT; ++t) {
        if (8 * t + g >= M) b[t][0] = b[t][1] = 0u;  // rows past M are zero
        if (kHasRms) sq[t] += yr_squares(b[t][0]) + yr_squares(b[t][1]);
      }
      // A = W^T: matrix i is rows 8 (i / 2) .. + 7 of the step at columns 16j + 8 (i % 2) .. + 7.
      const int row = q * 16 + (lane & 7) + 8 * (lane >> 4);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        unsigned a0, a1, a2, a3;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
                     : "r"(yr_swizzled(st, row, 2 * j + ((lane >> 3) & 1))));
#pragma unroll
        for (int t = 0; t < MT; ++t)
          asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
              : "+f"(acc[t][j][0]), "+f"(acc[t][j][1]), "+f"(acc[t][j][2]), "+f"(acc[t][j][3])
              : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b[t][0]), "r"(b[t][1]));
      }
    }
    __syncwarp();
    if (lane == 0) yr_mb_arrive(&empty[slot]);
  }
  // Every copy has landed and every stage is read: the ring becomes the warps' sums,
  // [TCW][M][64] floats, acc[t][j][e] being Y[8t + 2c + (e & 1)][16j + g + 8 (e >> 1)], then
  // their squares [TCW][M].
  yr_grid_wait();  // Y after the kernel before (the producer waited for it before X)
  asm volatile("bar.sync 1, %0;" ::"n"(TCW * 32) : "memory");
  float* red = reinterpret_cast<float*>(ring);
  float* ss = red + TCW * M * 64;
#pragma unroll
  for (int t = 0; t < MT; ++t)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int m = 8 * t + 2 * c + (e & 1);
        if (m < M) red[(warp * M + m) * 64 + 16 * j + g + 8 * (e >> 1)] = acc[t][j][e];
      }
#pragma unroll
  for (int t = 0; t < MT; ++t) {
    float v = sq[t];
    v += yr_shfl_xor(v, 1);
    v += yr_shfl_xor(v, 2);
    if (c == 0 && 8 * t + g < M) ss[warp * M + 8 * t + g] = v;
  }
  asm volatile("bar.sync 1, %0;" ::"n"(TCW * 32) : "memory");
  // A column a thread, the warps added in warp order, then the µGraph's epilogue: all the
  // consumers share the sum (eight columns a thread, 0.54 us slower at M = 1: run 48).
  for (int e = tid; e < M * 64; e += TCW * 32) {
    const int m = e / 64, n = e % 64;
    float a = 0.0f, s2 = 0.0f;
    for (int q = 0; q < TCW; ++q) {
      a += red[(q * M + m) * 64 + n];
      s2 += ss[q * M + m];
    }
    const float rms = kHasRms ? sqrtf(s2 / K) : 0.0f;
    y[(long)m * N + tile * 64 + n] = __float2half(NAME_epilogue(&a, rms));
  }
#endif
}

typedef CUresult (*yr_encode_tiled_t)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                      const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                      CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// A row-major fp16 [rows, cols] matrix at p as boxes of [box_rows][64], 128-byte swizzle.
[[maybe_unused]] static bool yr_tensor_map(yr_encode_tiled_t encode, CUtensorMap* map, const void* p, long rows, long cols, int box_rows) {
  const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
  const cuuint64_t strides[1] = {(cuuint64_t)cols * 2};
  const cuuint32_t box[2] = {64u, (cuuint32_t)box_rows}, unit[2] = {1u, 1u};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void*>(p), dims, strides, box, unit,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

#if YR_TMA
// The driver's tensor-map encoder, found once; null where the driver has none.
static yr_encode_tiled_t NAME_tma_encoder() {
  static const yr_encode_tiled_t encode = []() -> yr_encode_tiled_t {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return nullptr;
    return reinterpret_cast<yr_encode_tiled_t>(fn);
  }();
  return encode;
}

// Whether the current device runs this kernel's sm_90 code, with its shared memory set, checked
// once a device (the first 64): not before sm_90, nor where the only code for the device is PTX
// of an older target (a build for sm_80 alone, JIT-compiled on an H100, has an empty body there),
// so that the register path runs instead.
static bool NAME_tma_ready() {
  static std::atomic<int> ready[64];  // 0 not yet checked, 1 yes, 2 no
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64)
    return false;
  int r = ready[dev].load(std::memory_order_acquire);
  if (r == 0) {
    cudaFuncAttributes fa;
    const bool ok = yr_device_major() >= 9 && cudaFuncGetAttributes(&fa, NAME_gemv_tma) == cudaSuccess &&
                    fa.ptxVersion >= 90 &&
                    cudaFuncSetAttribute(reinterpret_cast<const void*>(NAME_gemv_tma),
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, kTmaSharedBytes) == cudaSuccess;
    r = ok ? 1 : 2;
    ready[dev].store(r, std::memory_order_release);
  }
  return r == 1;
}
#endif

// Launches the TMA kernel; -1 where it does not apply (the caller takes the register path).
static int NAME_launch_tma(const void* x, const void* w, void* y, yr_stream_t stream) {
#if YR_TMA
  const yr_encode_tiled_t encode = NAME_tma_encoder();
  CUtensorMap wmap, xmap;
  if (!encode || !NAME_tma_ready() || ((uintptr_t)x | (uintptr_t)w) % 16 != 0 || !yr_tensor_map(encode, &wmap, w, K, N, TR) ||
      !yr_tensor_map(encode, &xmap, x, M, K, M))
    return -1;
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(N / 64);
  cfg.blockDim = dim3(T_THREADS);
  cfg.dynamicSmemBytes = kTmaSharedBytes;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = YR_PDL ? 1 : 0;
  return static_cast<int>(cudaLaunchKernelEx(&cfg, NAME_gemv_tma, wmap, xmap, static_cast<__half*>(y)));
#else
  (void)x, (void)w, (void)y, (void)stream;
  return -1;
#endif
}
)CU";

}  // namespace

double gemv_tma_seconds(const GemvForm& f) {
  TmaTiling t = tma_tiling(f);
  if (t.rows == 0 || t.stages < 2 || f.n % 64 != 0 || f.weight_inputs.size() != 1 || f.m > 16)
    return -1.0;
  const std::int64_t sms = std::max<std::int64_t>(1, f.compute_units), tiles = f.n / 64;
  const std::int64_t waves = (tiles + sms - 1) / sms;
  const double busy = static_cast<double>(tiles) / static_cast<double>(waves);
  return 2.0 * static_cast<double>(f.k * f.n) / std::min(kHbmBytesPerS, busy * kTmaSmBytesPerS);
}

bool gemv_uses_tma(const GemvForm& f, Backend b) {
  if (!gemv_uses_direct(f, b))
    return false;
  double tma = gemv_tma_seconds(f);
  return tma > 0 && tma <= gemv_direct_seconds(f);
}

void emit_gemv_tma(CodeWriter& w, const GemvForm& f, const std::string& name) {
  TmaTiling t = tma_tiling(f);
  std::string code = kTmaCode;
  replace_all(code, "TR_ROWS", std::to_string(t.rows));
  replace_all(code, "TR_STAGES", std::to_string(t.stages));
  replace_all(code, "TR_WARPS", std::to_string(kTmaConsumerWarps));
  replace_all(code, "NAME", name);
  w.raw(code);
  w.line("");
}

}  // namespace yirage::codegen
