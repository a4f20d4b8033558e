// The GEMV path of the GPU backends (backend.h) for µGraphs in GEMV form (block_program.h):
// small-M products are bound by streaming the weights, so this kernel re-tiles the µGraph's
// grid for bandwidth. Each block owns 64 columns of N and one of YR_KSPLIT slices of K; X's
// slice (tiny) is staged in shared memory (cp.async on CUDA) and every thread streams its
// weight rows with 16-byte loads, 8 columns each, into fp32 register accumulators. The
// k-lanes of a warp (wavefront on HIP) reduce with shuffles, the warps through shared
// memory, and the K slices through a fp32 workspace: the last block of a column tile to
// finish (an atomic counter, reset by that block) sums them, finishes rms(X) from the
// per-slice sums of squares, and applies the µGraph's epilogue (its ops after the loop).
#include "codegen/backend/backend.h"

#include <sstream>

namespace yirage::codegen {
namespace {

constexpr int kColumnsPerBlock = 64;

// Blocks along K: the fewest (a power of two) that give at least four blocks per SM of the target,
// keeping at least 8 rows of K per thread.
int default_split(const GemvForm& f) {
  std::int64_t tiles = f.n / kColumnsPerBlock;
  int ks = 1;
  while (tiles * ks < 4 * f.compute_units && f.k % (ks * 2 * 32 * 8) == 0)
    ks *= 2;
  return ks;
}

std::string unary_expr(OpKind k, const std::string& a) {
  switch (k) {
    case OpKind::kExp:
      return "expf(" + a + ")";
    case OpKind::kSquare:
      return a + " * " + a;
    case OpKind::kSqrt:
      return "sqrtf(" + a + ")";
    default:
      return a + " / (1.0f + expf(-" + a + "))";  // silu
  }
}

std::string binary_expr(OpKind k, const std::string& a, const std::string& b) {
  const char* op = k == OpKind::kAdd   ? " + "
                   : k == OpKind::kSub ? " - "
                   : k == OpKind::kMul ? " * "
                                       : " / ";
  return a + op + b;
}

// The µGraph's ops after the loop as a scalar function of one output element.
void emit_epilogue(CodeWriter& w, const BlockProgram& p, const std::string& name) {
  const GemvForm& f = *p.gemv;
  const LoweredBlock& b = *p.steps[0].block;
  w.line("// The µGraph's epilogue for one element: acc[i] = (X W_i)[m, n], rms = rms(X[m, :]).");
  w.open("YR_DEV float " + name + "_epilogue(const float* acc, float rms)");
  w.line("(void)rms;");
  for (std::size_t i = 0; i < f.matmul_accums.size(); ++i)
    w.line("const float t" + std::to_string(f.matmul_accums[i]) + " = acc[" + std::to_string(i) +
           "];");
  if (f.rms_accum >= 0)
    w.line("const float t" + std::to_string(f.rms_accum) + " = rms;");
  std::size_t ni = b.graph.inputs.size();
  for (int o : b.after) {
    const BlockOp& op = b.graph.ops[static_cast<std::size_t>(o)];
    std::string a = "t" + std::to_string(op.in[0]);
    // A matmul here has an inner dim of 1 (match_gemv): a broadcast product.
    OpKind k = op.kind == OpKind::kMatmul ? OpKind::kMul : op.kind;
    std::string e =
        is_unary(k) ? unary_expr(k, a) : binary_expr(k, a, "t" + std::to_string(op.in[1]));
    w.line("const float t" + std::to_string(ni + static_cast<std::size_t>(o)) + " = " + e +
           ";  // " + op_name(op.kind));
  }
  w.line("return t" + std::to_string(b.graph.outputs[0].tensor) + ";");
  w.close();
}

void emit_constants(CodeWriter& w, const GemvForm& f) {
  std::ostringstream os;
  w.line("#ifndef YR_KSPLIT");
  w.line("#define YR_KSPLIT " + std::to_string(default_split(f)) + "  // blocks along K");
  w.line("#endif");
  w.line("#ifndef YR_UNROLL");
  int unroll = 4;
  while (unroll > 1 && (f.k / default_split(f)) % (32 * unroll) != 0)
    unroll /= 2;
  w.line("#define YR_UNROLL " + std::to_string(unroll) + "  // weight rows in flight per thread");
  w.line("#endif");
  w.line("constexpr int M = " + std::to_string(f.m) + ", K = " + std::to_string(f.k) +
         ", N = " + std::to_string(f.n) + ", NW = " + std::to_string(f.weight_inputs.size()) + ";");
  w.line("constexpr bool kHasRms = " + std::string(f.rms_accum >= 0 ? "true" : "false") + ";");
  w.line("constexpr int NB = " + std::to_string(kColumnsPerBlock) +
         ";              // columns per block, 8 per thread");
  w.line("constexpr int KS = YR_KSPLIT, KC = K / KS;  // K slices, rows per slice");
  w.line("constexpr int NT = 256;                 // threads per block");
  w.line("constexpr int KL = NT / (NB / 8);      // k-lanes: threads per column group");
  w.line("constexpr int WARPS = NT / YR_WARP, RED_SLICES = WARPS;  // red: one slice a warp");
  w.line("static_assert(N % NB == 0 && KC % (KL * YR_UNROLL) == 0 && KC % 8 == 0, \"tiling\");");
  w.line("constexpr long kSharedBytes = M * KC * 2 + WARPS * NW * M * NB * 4 + M * 4;");
  w.line("constexpr long kPartialFloats = KS > 1 ? (long)KS * NW * M * N : 0;");
  w.line("constexpr long kSquareFloats = KS > 1 ? (long)(N / NB) * KS * M : 0;");
}

void emit_stage_x(CodeWriter& w, Backend b) {
  w.line("// X[:, kbase : kbase + KC] into shared memory, 16 bytes a thread.");
  w.open("for (int e = tid * 8; e < M * KC; e += NT * 8)");
  w.line("const __half* src = x + (long)(e / KC) * K + kbase + e % KC;");
  if (b == Backend::kCuda) {
    w.line("unsigned s = (unsigned)__cvta_generic_to_shared(xs + e);");
    w.line(
        "asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\\n\" ::\"r\"(s), \"l\"(src));");
  } else {
    w.line("*reinterpret_cast<uint4*>(xs + e) = *reinterpret_cast<const uint4*>(src);");
  }
  w.close();
  if (b == Backend::kCuda)
    w.line(
        "asm volatile(\"cp.async.commit_group;\\n\" ::);\nasm volatile(\"cp.async.wait_group "
        "0;\\n\" ::);");
  w.line("__syncthreads();");
  w.open("if (kHasRms)");
  w.line("// Sum of squares of this slice of each row of X, one warp a row.");
  w.open("for (int m = warp; m < M; m += WARPS)");
  w.line("float v = 0.0f;");
  w.line(
      "for (int c = lane; c < KC; c += YR_WARP) { float h = __half2float(xs[m * KC + c]); v += h * "
      "h; }");
  w.line("for (int o = YR_WARP / 2; o > 0; o >>= 1) v += yr_shfl_xor(v, o);");
  w.line("if (lane == 0) ss[m] = v;");
  w.close();
  w.close();
}

void emit_stream(CodeWriter& w, const GemvForm& f) {
  std::string loads, ptrs;
  w.line("float acc[NW][M][8];");
  w.line("#pragma unroll");
  w.line(
      "for (int i = 0; i < NW; ++i) for (int m = 0; m < M; ++m) for (int j = 0; j < 8; ++j) "
      "acc[i][m][j] = 0.0f;");
  w.line("const __half* wp[NW] = {" + [&] {
    std::string r;
    for (std::size_t i = 0; i < f.weight_inputs.size(); ++i)
      r += (i ? ", w" : "w") + std::to_string(i);
    return r;
  }() + "};");
  w.open("for (int r0 = kl; r0 < KC; r0 += KL * YR_UNROLL)");
  w.line("uint4 v[NW][YR_UNROLL];  // YR_UNROLL rows of 8 weights, loaded before any is used");
  w.line("#pragma unroll");
  w.line("for (int u = 0; u < YR_UNROLL; ++u) for (int i = 0; i < NW; ++i)");
  w.line("  v[i][u] = yr_stream_load(wp[i] + (kbase + r0 + u * KL) * N + n0);");
  w.line("#pragma unroll");
  w.open("for (int u = 0; u < YR_UNROLL; ++u)");
  w.line("float xv[M];");
  w.line("#pragma unroll");
  w.line("for (int m = 0; m < M; ++m) xv[m] = __half2float(xs[m * KC + r0 + u * KL]);");
  w.line("#pragma unroll");
  w.open("for (int i = 0; i < NW; ++i)");
  w.line("const __half2* h = reinterpret_cast<const __half2*>(&v[i][u]);");
  w.line("#pragma unroll");
  w.open("for (int j = 0; j < 4; ++j)");
  w.line("float2 wf = __half22float2(h[j]);");
  w.line("#pragma unroll");
  w.line(
      "for (int m = 0; m < M; ++m) { acc[i][m][2 * j] += xv[m] * wf.x; acc[i][m][2 * j + 1] += "
      "xv[m] * wf.y; }");
  w.close();
  w.close();
  w.close();
  w.close();
}

void emit_reduce(CodeWriter& w) {
  w.line("// Reduce over the k-lanes of each warp (lane bits 3 and up), then over the warps.");
  w.line("#pragma unroll");
  w.line("for (int i = 0; i < NW; ++i) for (int m = 0; m < M; ++m) for (int j = 0; j < 8; ++j)");
  w.line("  for (int o = 8; o < YR_WARP; o <<= 1) acc[i][m][j] += yr_shfl_xor(acc[i][m][j], o);");
  w.open("if (lane < 8)");
  w.line("#pragma unroll");
  w.line("for (int i = 0; i < NW; ++i) for (int m = 0; m < M; ++m) for (int j = 0; j < 8; ++j)");
  w.line("  red[((warp * NW + i) * M + m) * NB + cg * 8 + j] = acc[i][m][j];");
  w.close();
  w.line("__syncthreads();");
}

void emit_finish(CodeWriter& w, const std::string& name) {
  w.open("if constexpr (KS == 1)");
  w.open("for (int e = tid; e < M * NB; e += NT)");
  w.line("const int m = e / NB, col = e % NB;");
  w.line("float a[NW];");
  w.line(
      "for (int i = 0; i < NW; ++i) { a[i] = 0.0f; for (int q = 0; q < RED_SLICES; ++q) a[i] += "
      "red[((q "
      "* NW + i) * M + m) * NB + col]; }");
  w.line("y[(long)m * N + blockIdx.x * NB + col] = __float2half(" + name +
         "_epilogue(a, kHasRms ? sqrtf(ss[m] / K) : 0.0f));");
  w.close();
  w.close();
  w.open("else");
  w.line("// This slice's partial sums to the workspace; the last slice of the tile finishes.");
  w.open("for (int e = tid; e < NW * M * NB; e += NT)");
  w.line("const int i = e / (M * NB), m = e / NB % M, col = e % NB;");
  w.line("float s = 0.0f;");
  w.line("for (int q = 0; q < RED_SLICES; ++q) s += red[((q * NW + i) * M + m) * NB + col];");
  w.line("partial[(((long)ks * NW + i) * M + m) * N + blockIdx.x * NB + col] = s;");
  w.close();
  w.line("if (kHasRms && tid < M) squares[((long)blockIdx.x * KS + ks) * M + tid] = ss[tid];");
  w.line("__syncthreads();  // the block's writes come before thread 0's count (yr_arrive)");
  w.line("if (tid == 0) last = yr_arrive(counters + blockIdx.x) == KS - 1;");
  w.line("__syncthreads();");
  w.line("if (!last) return;");
  w.open("for (int e = tid; e < M * NB; e += NT)");
  w.line("const int m = e / NB, col = e % NB;");
  w.line("const long n = (long)blockIdx.x * NB + col;");
  w.line("float a[NW], sq = 0.0f;");
  w.line(
      "for (int i = 0; i < NW; ++i) { a[i] = 0.0f; for (int q = 0; q < KS; ++q) a[i] += "
      "yr_load_cg(partial + (((long)q * NW + i) * M + m) * N + n); }");
  w.line(
      "if (kHasRms) for (int q = 0; q < KS; ++q) sq += yr_load_cg(squares + ((long)blockIdx.x * KS "
      "+ q) * M + m);");
  w.line("y[(long)m * N + n] = __float2half(" + name + "_epilogue(a, sqrtf(sq / K)));");
  w.close();
  w.line("if (tid == 0) counters[blockIdx.x] = 0u;  // ready for the next launch");
  w.close();
}

// The CUDA-core body: X's slice in shared memory, weights streamed into fp32 FMAs.
void emit_fma_body(CodeWriter& w, const GemvForm& f, Backend b) {
  w.line("extern __shared__ float4 smem4[];");
  w.line("__half* xs = reinterpret_cast<__half*>(smem4);                 // M x KC");
  w.line("float* red = reinterpret_cast<float*>(xs + M * KC);            // WARPS x NW x M x NB");
  w.line("float* ss = red + WARPS * NW * M * NB;                         // M");
  w.line("__shared__ bool last;");
  w.line("const int tid = threadIdx.x, lane = tid % YR_WARP, warp = tid / YR_WARP;");
  w.line("const int cg = tid % 8, kl = tid / 8;  // column group, k-lane");
  w.line("const long n0 = (long)blockIdx.x * NB + cg * 8;");
  w.line("const int ks = blockIdx.y;");
  w.line("const long kbase = (long)ks * KC;");
  w.line("(void)ks; (void)partial; (void)squares; (void)counters; (void)last;");
  emit_stage_x(w, b);
  emit_stream(w, f);
  emit_reduce(w);
}

void emit_gemv_helpers(CodeWriter& w, Backend b) {
  emit_gemv_arrive_helper(w, b);
  if (b == Backend::kCuda) {
    w.line("// Weights are read once: stream them past L1 and mark them evict-first in L2.");
    w.line(
        "YR_DEV uint4 yr_stream_load(const __half* p) { return __ldcs(reinterpret_cast<const "
        "uint4*>(p)); }");
    w.line("YR_DEV float yr_load_cg(const float* p) { return __ldcg(p); }  // other SMs wrote it");
  } else {
    w.line(
        "YR_DEV uint4 yr_stream_load(const __half* p) { return *reinterpret_cast<const uint4*>(p); "
        "}");
    w.line(
        "YR_DEV float yr_load_cg(const float* p) { return *reinterpret_cast<const volatile "
        "float*>(p); }");
  }
}

}  // namespace

void emit_gemv_arrive_helper(CodeWriter& w, Backend b) {
  w.line("// A K slice's arrival at its tile's counter; returns the slices there before it. The");
  w.line("// caller's barrier orders the block's slot writes before thread 0's release, and its");
  w.line("// acquire, with the barrier after, orders the last block's reads of the other slots");
  w.line("// (as CUTLASS's semaphore; 0.4-0.5 us faster than fences around atomicAdd on H100).");
  if (b == Backend::kCuda) {
    w.line("YR_DEV unsigned yr_arrive(unsigned* counter) {");
    w.line("  unsigned old;");
    w.line(
        "  asm volatile(\"atom.add.acq_rel.gpu.u32 %0, [%1], 1;\" : \"=r\"(old) : \"l\"(counter) : "
        "\"memory\");");
    w.line("  return old;");
    w.line("}");
  } else {
    w.line("YR_DEV unsigned yr_arrive(unsigned* counter) {");
    w.line(
        "  return __hip_atomic_fetch_add(counter, 1u, __ATOMIC_ACQ_REL, "
        "__HIP_MEMORY_SCOPE_AGENT);");
    w.line("}");
  }
}

void emit_gemv(CodeWriter& w, const BlockProgram& p, Backend b) {
  const GemvForm& f = *p.gemv;
  std::string name = c_identifier(p.name);
  w.line("// GEMV path: X[" + std::to_string(f.m) + ", " + std::to_string(f.k) + "] x " +
         std::to_string(f.weight_inputs.size()) + " weight(s) [" + std::to_string(f.k) + ", " +
         std::to_string(f.n) + "]" + (f.rms_accum >= 0 ? ", rms(X) over K" : "") +
         "; grid (N / NB, KS) of " +
         (gemv_uses_direct(f, b)
              ? std::string("THREADS threads, weights read straight into tensor-core fragments") +
                    (gemv_uses_tma(f, b) ? "; on sm_90 N / 64 blocks of T_THREADS threads, weights "
                                           "and X through a TMA ring."
                                         : ".")
          : gemv_uses_mma(f, b) ? std::string("NT threads, weights through a shared-memory ring.")
                                : std::string("256 threads, fp32 FMAs.")));
  if (gemv_uses_direct(f, b)) {
    emit_gemv_direct_constants(w, f);
    emit_gemv_direct_helpers(w);
    emit_epilogue(w, p, name);
    emit_gemv_direct_kernel(w, f, name);
    return;
  }
  bool mma = gemv_uses_mma(f, b);
  if (mma)
    emit_gemv_mma_constants(w, f);
  else
    emit_constants(w, f);
  emit_gemv_helpers(w, b);
  if (mma) {
    emit_pdl_helpers(w);
    emit_gemv_mma_step(w);
  }
  emit_epilogue(w, p, name);
  std::string wparams;
  for (std::size_t i = 0; i < f.weight_inputs.size(); ++i)
    wparams += ", const __half* __restrict__ w" + std::to_string(i);
  w.line("__global__ void __launch_bounds__(NT)");
  w.open(name + "_gemv(const __half* __restrict__ x" + wparams +
         ", __half* __restrict__ y, float* __restrict__ partial, float* __restrict__ squares, "
         "unsigned* __restrict__ counters)");
  if (mma) {
    emit_gemv_mma_body(w, f);
  } else {
    emit_fma_body(w, f, b);
  }
  emit_finish(w, name);
  w.close();
  w.line("");
  emit_gemv_launcher(w, f, name, b, "NT", mma);
}

void emit_gemv_launcher(CodeWriter& w,
                        const GemvForm& f,
                        const std::string& name,
                        Backend b,
                        const std::string& threads,
                        bool pdl,
                        bool tma) {
  std::string api = b == Backend::kCuda ? "cuda" : "hip";
  w.line("extern \"C\" long " + name +
         "_workspace_bytes() { return (kPartialFloats + kSquareFloats) * 4 + (N / NB) * 4; }");
  w.line("");
  w.open("extern \"C\" int " + name +
         "_launch(const void* const* inputs, void* const* outputs, void* workspace, "
         "yr_stream_t stream)");
  std::string x = "inputs[" + std::to_string(f.x_input) + "]";
  if (tma) {
    w.open("if (const int rc = " + name + "_launch_tma(" + x + ", inputs[" +
           std::to_string(f.weight_inputs.front()) + "], outputs[0], stream); rc >= 0)");
    w.line("return rc;  // sm_90: the TMA kernel");
    w.close();
  }
  w.line("float* partial = static_cast<float*>(workspace);");
  w.line("float* squares = partial + kPartialFloats;");
  w.line("unsigned* counters = reinterpret_cast<unsigned*>(squares + kSquareFloats);");
  w.line("if (kSharedBytes > 48 * 1024)");
  w.line("  (void)" + api + "FuncSetAttribute(reinterpret_cast<const void*>(" + name + "_gemv), " +
         api + "FuncAttributeMaxDynamicSharedMemorySize, kSharedBytes);");
  std::string args = "static_cast<const __half*>(" + x + ")";
  for (int wi : f.weight_inputs)
    args += ", static_cast<const __half*>(inputs[" + std::to_string(wi) + "])";
  args += ", static_cast<__half*>(outputs[0]), partial, squares, counters";
  if (pdl) {
    // On sm_90 the launch lets the next kernel of the stream start early (yr_grid_wait).
    w.raw("#if YR_PDL\n");
    w.line("cudaLaunchAttribute attr = {};");
    w.line("attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;");
    w.line("attr.val.programmaticStreamSerializationAllowed = 1;");
    w.line("cudaLaunchConfig_t cfg = {};");
    w.line("cfg.gridDim = dim3(N / NB, KS);");
    w.line("cfg.blockDim = dim3(" + threads + ");");
    w.line("cfg.dynamicSmemBytes = kSharedBytes;");
    w.line("cfg.stream = stream;");
    w.line("cfg.attrs = &attr;");
    w.line("cfg.numAttrs = yr_device_major() >= 9 ? 1 : 0;");
    w.line("return static_cast<int>(cudaLaunchKernelEx(&cfg, " + name + "_gemv, " + args + "));");
    w.raw("#else\n");
  }
  w.line(name + "_gemv<<<dim3(N / NB, KS), " + threads + ", kSharedBytes, stream>>>(" + args +
         ");");
  w.line("return static_cast<int>(" + api + "GetLastError());");
  if (pdl)
    w.raw("#endif\n");
  w.close();
}

}  // namespace yirage::codegen
