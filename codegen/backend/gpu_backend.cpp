// The CUDA and HIP backends (backend.h): one __global__ kernel per launch of the lowered
// program (thread blocks of kBlockThreads threads, the block's tiles in dynamic shared
// memory), intermediates in the caller's workspace, and a C launcher; on CUDA a library
// matmul is a cuBLAS call instead of a kernel. A program in GEMV form (block_program.h) gets
// the streaming GEMV kernel of gemv_emitter.cpp instead.
#include "codegen/backend/backend.h"

#include <algorithm>

namespace yirage::codegen {
namespace {

std::string gpu_params(const BlockProgram& p, const LoweredStep& s) {
  std::string r;
  for (int u : s.op.in)
    r += (r.empty() ? "" : ", ") + std::string("const ") + tensor_type(p, u) + "* __restrict__ k" +
         std::to_string(u);
  for (int o : s.out)
    r += ", " + tensor_type(p, o) + "* __restrict__ k" + std::to_string(o);
  return r;
}

std::string gpu_args(const LoweredStep& s) {
  std::string r;
  for (int u : s.op.in)
    r += (r.empty() ? "k" : ", k") + std::to_string(u);
  for (int o : s.out)
    r += ", k" + std::to_string(o);
  return r;
}

void emit_kernel(CodeWriter& w, const BlockProgram& p, std::size_t i, Backend b) {
  const LoweredStep& s = p.steps[i];
  std::string name = c_identifier(p.name) + "_launch" + std::to_string(i);
  w.line("__global__ void __launch_bounds__(" + std::to_string(kBlockThreads) + ")");
  w.open(name + "(" + gpu_params(p, s) + ")");
  if (!s.block) {
    w.line("// a library op over the grid, one output element a thread or one warp a row (a");
    w.line("// simple generated kernel, not a tuned library)");
    emit_library_op(w, p, s, true);
    w.close();
    return;
  }
  w.line("extern __shared__ float4 smem4[];");
  w.line("float* smem = reinterpret_cast<float*>(smem4);");
  w.line("const long bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;");
  w.line("(void)bx; (void)by; (void)bz;");
  emit_block_body(w, p, s, b);
  w.close();
}

// Library matmuls on CUDA go to cuBLAS; the launcher calls yr_gemm in place of a kernel.
bool uses_cublas(const LoweredStep& s, Backend b) {
  return b == Backend::kCuda && !s.block && s.op.kind == OpKind::kMatmul;
}

// The operand (0 or 1) of a cuBLAS matmul that is fp16 while the other is fp32, or -1: it is
// widened to fp32 in the workspace first (cuBLAS multiplies operands of one type).
int widened_operand(const BlockProgram& p, const LoweredStep& s, Backend b) {
  if (!uses_cublas(s, b))
    return -1;
  bool f0 = tensor_type(p, s.op.in[0]) == "float", f1 = tensor_type(p, s.op.in[1]) == "float";
  return f0 == f1 ? -1 : f0 ? 1 : 0;
}

// Whether a cuBLAS matmul multiplies in fp32 (an operand is fp32) into an fp16 tensor: cuBLAS
// then writes an fp32 buffer that yr_convert narrows (fp32 operands give only fp32 results).
bool narrowed_result(const BlockProgram& p, const LoweredStep& s, Backend b) {
  return uses_cublas(s, b) && tensor_type(p, s.out[0]) != "float" &&
         (tensor_type(p, s.op.in[0]) == "float" || tensor_type(p, s.op.in[1]) == "float");
}

const char* kCublas = R"CU(#include <cublas_v2.h>

// Library matmuls call cuBLAS (link with -lcublas): row-major C = A B is column-major
// C^T = B^T A^T. The handle is made on the first call, so call once before a CUDA-graph
// capture. Returns 0, or 1000 + the cuBLAS status.
static int yr_gemm(const void* a, cudaDataType ta, long sa, const void* b, cudaDataType tb,
                   long sb, void* c, cudaDataType tc, long batch, long m, long k, long n,
                   cudaStream_t stream) {
  static cublasHandle_t handle = nullptr;
  if (handle == nullptr) {
    cublasStatus_t made = cublasCreate(&handle);
    if (made != CUBLAS_STATUS_SUCCESS) {
      handle = nullptr;
      return 1000 + (int)made;
    }
  }
  cublasSetStream(handle, stream);
  const float one = 1.0f, zero = 0.0f;
  // fp32 operands go through the tensor cores in TF32 (fp32 range, fp16's 10-bit mantissa,
  // fp32 sums): cuBLAS's fp32 kernel for a long K and few tiles (GQA's P V: 2 x 256 x 4096 x
  // 64) ran 87 us on an H100 where its fp16 kernel runs 5 us.
  cublasComputeType_t compute =
      ta == CUDA_R_32F ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasStatus_t st = cublasGemmStridedBatchedEx(
      handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, b, tb, (int)n, sb, a, ta,
      (int)k, sa, &zero, c, tc, (int)n, m * n, (int)batch, compute, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : 1000 + (int)st;
}

// An fp16 operand widened to fp32 for a cuBLAS matmul whose other operand is fp32, or an
// fp32 result narrowed to its fp16 tensor.
template <class O, class A>
__global__ void __launch_bounds__(256) yr_convert(const A* __restrict__ src, O* __restrict__ dst, long n) {
  for (long e = YR_GTID; e < n; e += YR_GNT) dst[e] = yr_to<O>(yr_f(src[e]));
}
)CU";

std::string cuda_type(const BlockProgram& p, int t) {
  return tensor_type(p, t) == "float" ? "CUDA_R_32F" : "CUDA_R_16F";
}

// The launcher's cuBLAS call for library matmul step i (batch strides 0 for an operand
// without the batch dims); a widened operand is read from w<i>.
std::string cublas_call(const BlockProgram& p, const LoweredStep& s, std::size_t i, Backend b) {
  const Shape& a = p.shapes[static_cast<std::size_t>(s.op.in[0])];
  const Shape& bm = p.shapes[static_cast<std::size_t>(s.op.in[1])];
  const Shape& c = p.shapes[static_cast<std::size_t>(s.out[0])];
  std::int64_t m = a[a.size() - 2], k = a.back(), n = bm.back(), batch = elements(c) / (m * n);
  std::int64_t sa = elements(a) == m * k ? 0 : m * k, sb = elements(bm) == k * n ? 0 : k * n;
  int wide = widened_operand(p, s, b);
  auto arg = [&](int j) {
    int t = s.op.in[static_cast<std::size_t>(j)];
    return j == wide ? "w" + std::to_string(i) + ", CUDA_R_32F"
                     : "k" + std::to_string(t) + ", " + cuda_type(p, t);
  };
  std::string out = narrowed_result(p, s, b)
                        ? "r" + std::to_string(i) + ", CUDA_R_32F"
                        : "k" + std::to_string(s.out[0]) + ", " + cuda_type(p, s.out[0]);
  return "if (int rc = yr_gemm(" + arg(0) + ", " + std::to_string(sa) + "L, " + arg(1) + ", " +
         std::to_string(sb) + "L, " + out + ", " + std::to_string(batch) + "L, " +
         std::to_string(m) + "L, " + std::to_string(k) + "L, " + std::to_string(n) +
         "L, stream)) return rc;  // matmul -> " + shape_text(c) + " (cuBLAS)";
}

// Blocks for one thread an element of a grid-wide loop: at most 4096 (the threads then loop).
std::int64_t grid_blocks(std::int64_t threads) {
  return std::clamp<std::int64_t>((threads + kBlockThreads - 1) / kBlockThreads, 1, 4096);
}

// Blocks of a library op's grid: one thread an output element, or 64 (a wavefront) a row of
// a reduction over the last dim.

std::int64_t library_blocks(const BlockProgram& p, const LoweredStep& s) {
  std::int64_t n = elements(p.shapes[static_cast<std::size_t>(s.out[0])]);
  return grid_blocks(library_reduces_rows(p, s) ? n * 64 : n);
}

// A cuBLAS matmul's fp32 buffers in the workspace (byte offsets, -1 if none): its widened
// operand and its result before narrowing.
struct CublasBuffers {
  std::int64_t operand = -1, result = -1;
};

// Bytes of the workspace: every intermediate kernel tensor (fp32), then each cuBLAS step's
// buffers, 256-byte aligned.
std::vector<std::int64_t> workspace_offsets(const BlockProgram& p,
                                            Backend b,
                                            std::vector<CublasBuffers>* cublas,
                                            std::int64_t* total) {
  std::vector<std::int64_t> off(p.shapes.size(), -1);
  std::int64_t at = 0;
  auto take = [&at, &p](int t) {
    std::int64_t here = at;
    at += (elements(p.shapes[static_cast<std::size_t>(t)]) * 4 + 255) / 256 * 256;
    return here;
  };
  for (std::size_t t = p.graph.inputs.size(); t < p.shapes.size(); ++t)
    if (tensor_type(p, static_cast<int>(t)) == "float")
      off[t] = take(static_cast<int>(t));
  cublas->assign(p.steps.size(), CublasBuffers{});
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const LoweredStep& s = p.steps[i];
    if (int j = widened_operand(p, s, b); j >= 0)
      (*cublas)[i].operand = take(s.op.in[static_cast<std::size_t>(j)]);
    if (narrowed_result(p, s, b))
      (*cublas)[i].result = take(s.out[0]);
  }
  *total = at;
  return off;
}

// A yr_convert launch over tensor t's elements, from src to dst.
std::string convert_launch(const BlockProgram& p,
                           int t,
                           const std::string& src,
                           const std::string& dst) {
  std::int64_t n = elements(p.shapes[static_cast<std::size_t>(t)]);
  return "yr_convert<<<dim3(" + std::to_string(grid_blocks(n)) + "), " +
         std::to_string(kBlockThreads) + ", 0, stream>>>(" + src + ", " + dst + ", " +
         std::to_string(n) + "L);";
}

// The launcher's lines for library matmul step i on cuBLAS: the widened operand, the call,
// the narrowed result.
void emit_cublas_step(
    CodeWriter& w, const BlockProgram& p, std::size_t i, CublasBuffers at, Backend b) {
  const LoweredStep& s = p.steps[i];
  std::string id = std::to_string(i);
  if (at.operand >= 0) {
    int t = s.op.in[static_cast<std::size_t>(widened_operand(p, s, b))];
    w.line("float* w" + id + " = reinterpret_cast<float*>(ws + " + std::to_string(at.operand) +
           ");  // k" + std::to_string(t) + " in fp32");
    w.line(convert_launch(p, t, "k" + std::to_string(t), "w" + id));
  }
  if (at.result >= 0)
    w.line("float* r" + id + " = reinterpret_cast<float*>(ws + " + std::to_string(at.result) +
           ");  // k" + std::to_string(s.out[0]) + " in fp32");
  w.line(cublas_call(p, s, i, b));
  if (at.result >= 0)
    w.line(convert_launch(p, s.out[0], "r" + id, "k" + std::to_string(s.out[0])));
}

void emit_tensor_bindings(CodeWriter& w, const BlockProgram& p) {
  for (std::size_t i = 0; i < p.graph.inputs.size(); ++i)
    w.line("const __half* k" + std::to_string(i) + " = static_cast<const __half*>(inputs[" +
           std::to_string(i) + "]);  // " + p.graph.inputs[i].name + " " + shape_text(p.shapes[i]));
  for (std::size_t i = 0; i < p.graph.outputs.size(); ++i)
    w.line("__half* k" + std::to_string(p.graph.outputs[i]) + " = static_cast<__half*>(outputs[" +
           std::to_string(i) + "]);");
}

void emit_launcher(CodeWriter& w, const BlockProgram& p, Backend b) {
  std::string name = c_identifier(p.name);
  std::string api = b == Backend::kCuda ? "cuda" : "hip";
  std::int64_t bytes = 0;
  std::vector<CublasBuffers> cublas;
  std::vector<std::int64_t> off = workspace_offsets(p, b, &cublas, &bytes);
  w.line("extern \"C\" long " + name + "_workspace_bytes() { return " + std::to_string(bytes) +
         "L; }");
  w.line("");
  w.open("extern \"C\" int " + name +
         "_launch(const void* const* inputs, void* const* outputs, void* workspace, "
         "yr_stream_t stream)");
  emit_tensor_bindings(w, p);
  if (bytes > 0)
    w.line("char* ws = static_cast<char*>(workspace);");
  else
    w.line("(void)workspace;");
  for (std::size_t t = 0; t < off.size(); ++t)
    if (off[t] >= 0)
      w.line("float* k" + std::to_string(t) + " = reinterpret_cast<float*>(ws + " +
             std::to_string(off[t]) + ");  // " + shape_text(p.shapes[t]));
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const LoweredStep& s = p.steps[i];
    if (uses_cublas(s, b)) {
      emit_cublas_step(w, p, i, cublas[i], b);
      continue;
    }
    std::string k = name + "_launch" + std::to_string(i);
    std::string grid = "dim3(" + std::to_string(library_blocks(p, s)) + ")";
    std::int64_t smem = 0;
    if (s.block) {
      const Grid& g = s.block->graph.grid;
      grid = "dim3(" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " +
             std::to_string(g[2]) + ")";
      smem = (s.block->shared_elems + 4) * 4;
    }
    if (smem > 48 * 1024)
      w.line("(void)" + api + "FuncSetAttribute(reinterpret_cast<const void*>(" + k + "), " + api +
             "FuncAttributeMaxDynamicSharedMemorySize, " + std::to_string(smem) + ");");
    w.line(k + "<<<" + grid + ", " + std::to_string(kBlockThreads) + ", " + std::to_string(smem) +
           ", stream>>>(" + gpu_args(s) + ");");
  }
  w.line("return static_cast<int>(" + api + "GetLastError());");
  w.close();
}

}  // namespace

KernelSource emit_cpu(const BlockProgram& p);

KernelSource emit_kernels(const BlockProgram& p, Backend b) {
  if (b == Backend::kCpu)
    return emit_cpu(p);
  std::string name = c_identifier(p.name);
  CodeWriter w;
  std::string what = b == Backend::kCuda
                         ? "CUDA backend for sm_80 and sm_90a, fp16 tensors, fp32 arithmetic."
                         : "HIP backend for gfx90a (64-lane wavefronts), fp16 tensors, fp32 "
                           "arithmetic.";
  emit_schedule_comment(w, p, what);
  w.raw(prelude_gpu(b));
  w.line("");
  if (p.gemv) {
    emit_gemv(w, p, b);
  } else {
    bool cublas = false;
    for (const LoweredStep& s : p.steps)
      cublas = cublas || uses_cublas(s, b);
    if (cublas)
      w.raw(kCublas);
    for (std::size_t i = 0; i < p.steps.size(); ++i)
      if (!uses_cublas(p.steps[i], b))
        emit_kernel(w, p, i, b);
    w.line("");
    emit_launcher(w, p, b);
  }
  return KernelSource{name + (b == Backend::kCuda ? ".cu" : ".hip"), name, w.str()};
}

}  // namespace yirage::codegen
