// Library matmuls on CUDA (backend.h): the launcher calls cuBLAS in place of a kernel. cuBLAS
// multiplies operands of one type and gives fp32 products only in fp32, so an fp16 operand
// beside an fp32 one is widened into the workspace first and an fp32 product bound for an
// fp16 tensor is narrowed after. A long K over few output tiles is split into slices that
// cuBLAS multiplies as a batch, summed after in slice order.
#include "codegen/backend/backend.h"
#include "codegen/lower/library_matmul.h"

#include <algorithm>

namespace yirage::codegen {
namespace {

const char* kCublas = R"CU(#include <cublas_v2.h>

// Library matmuls call cuBLAS (link with -lcublas): row-major C = A B is column-major
// C^T = B^T A^T. The handle is made on the first call, so call once before a CUDA-graph
// capture. Each returns 0, or 1000 + the cuBLAS status. Plain inline (not static): nvcc
// warns of a static function that a program does not call.
inline cublasHandle_t yr_cublas(cudaStream_t stream) {
  static cublasHandle_t handle = nullptr;
  if (handle == nullptr && cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
    handle = nullptr;
  if (handle != nullptr)
    cublasSetStream(handle, stream);
  return handle;
}

// fp32 operands go through the tensor cores in TF32 (fp32 range, fp16's 10-bit mantissa,
// fp32 sums): cuBLAS's fp32 kernel for a long K and few tiles (GQA's P V: 2 x 256 x 4096 x
// 64) ran 87 us on an H100 where its fp16 kernel runs 5 us.
inline cublasComputeType_t yr_compute(cudaDataType t) {
  return t == CUDA_R_32F ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

// C[batch] = A[batch] B[batch]; lda is A's row length (K, or more for a slice of K).
inline int yr_gemm_ld(const void* a, cudaDataType ta, long sa, long lda, const void* b,
                      cudaDataType tb, long sb, void* c, cudaDataType tc, long sc, long batch,
                      long m, long k, long n, cudaStream_t stream) {
  cublasHandle_t handle = yr_cublas(stream);
  if (handle == nullptr) return 1000 + (int)CUBLAS_STATUS_NOT_INITIALIZED;
  const float one = 1.0f, zero = 0.0f;
  cublasStatus_t st = cublasGemmStridedBatchedEx(
      handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, b, tb, (int)n, sb, a, ta,
      (int)lda, sa, &zero, c, tc, (int)n, sc, (int)batch, yr_compute(ta), CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : 1000 + (int)st;
}

inline int yr_gemm(const void* a, cudaDataType ta, long sa, const void* b, cudaDataType tb,
                   long sb, void* c, cudaDataType tc, long batch, long m, long k, long n,
                   cudaStream_t stream) {
  return yr_gemm_ld(a, ta, sa, k, b, tb, sb, c, tc, m * n, batch, m, k, n, stream);
}

// The products of `slices` slices of K, each matrix of the batch in turn, into fp32 parts
// laid out [batch][slice][m][n]: one cuBLAS batch over the slices (A advances by the slice's
// columns, B by its rows).
inline int yr_gemm_slices(const void* a, cudaDataType ta, long sa, const void* b,
                          cudaDataType tb, long sb, float* parts, long batch, long m, long k,
                          long n, long slices, cudaStream_t stream) {
  const long kc = k / slices;
  const long ea = ta == CUDA_R_32F ? 4 : 2, eb = tb == CUDA_R_32F ? 4 : 2;
  for (long i = 0; i < batch; ++i) {
    const char* ai = static_cast<const char*>(a) + i * sa * ea;
    const char* bi = static_cast<const char*>(b) + i * sb * eb;
    if (int rc = yr_gemm_ld(ai, ta, kc, k, bi, tb, kc * n, parts + i * slices * m * n,
                            CUDA_R_32F, m * n, slices, m, kc, n, stream))
      return rc;
  }
  return 0;
}

// An fp16 operand widened to fp32 for a cuBLAS matmul whose other operand is fp32, or an
// fp32 result narrowed to its fp16 tensor.
template <class O, class A>
__global__ void __launch_bounds__(256) yr_convert(const A* __restrict__ src, O* __restrict__ dst, long n) {
  for (long e = YR_GTID; e < n; e += YR_GNT) dst[e] = yr_to<O>(yr_f(src[e]));
}

// The sum of the K slices' parts ([batch][slice][mn]) in slice order, into the product.
template <class O>
__global__ void __launch_bounds__(256) yr_sum_slices(const float* __restrict__ parts, O* __restrict__ dst, long n, long mn, long slices) {
  for (long e = YR_GTID; e < n; e += YR_GNT) {
    const float* p = parts + (e / mn) * slices * mn + e % mn;
    float acc = 0.0f;
    for (long s = 0; s < slices; ++s) acc += p[s * mn];
    dst[e] = yr_to<O>(acc);
  }
}
)CU";

LibraryMatmul plan(const BlockProgram& p, const LoweredStep& s) {
  return library_matmul(p.graph, p.shapes, s.op, s.out[0]);
}

// The operand (0 or 1) of a cuBLAS matmul that is fp16 while the other is fp32, or -1.
int widened_operand(const BlockProgram& p, const LoweredStep& s, Backend b) {
  return uses_cublas(s, b) ? plan(p, s).widened : -1;
}

std::string cuda_type(const BlockProgram& p, int t) {
  return tensor_type(p, t) == "float" ? "CUDA_R_32F" : "CUDA_R_16F";
}

std::string ws_pointer(const std::string& name, std::int64_t at, const std::string& what) {
  return "float* " + name + " = reinterpret_cast<float*>(ws + " + std::to_string(at) + ");  // " +
         what;
}

// A grid-wide launch of `kernel` over n elements.
std::string grid_launch(const std::string& kernel, std::int64_t n, const std::string& args) {
  return kernel + "<<<dim3(" + std::to_string(grid_blocks(n)) + "), " +
         std::to_string(kBlockThreads) + ", 0, stream>>>(" + args + ");";
}

}  // namespace

bool uses_cublas(const LoweredStep& s, Backend b) {
  return b == Backend::kCuda && !s.block && s.op.kind == OpKind::kMatmul;
}

std::string cublas_prelude() {
  return kCublas;
}

std::int64_t grid_blocks(std::int64_t threads) {
  return std::clamp<std::int64_t>((threads + kBlockThreads - 1) / kBlockThreads, 1, 4096);
}

std::int64_t cublas_slices(const BlockProgram& p, const LoweredStep& s, Backend b) {
  return uses_cublas(s, b) ? plan(p, s).slices : 1;  // not a matmul: no second operand to read
}

CublasBuffers cublas_buffers(const BlockProgram& p,
                             const LoweredStep& s,
                             Backend b,
                             std::int64_t& at) {
  auto take = [&at](std::int64_t elems) {
    std::int64_t here = at;
    at += (elems * 4 + 255) / 256 * 256;
    return here;
  };
  CublasBuffers c;
  if (int j = widened_operand(p, s, b); j >= 0)
    c.operand =
        take(elements(p.shapes[static_cast<std::size_t>(s.op.in[static_cast<std::size_t>(j)])]));
  std::int64_t out = elements(p.shapes[static_cast<std::size_t>(s.out[0])]);
  if (std::int64_t slices = cublas_slices(p, s, b); slices > 1)
    c.parts = take(out * slices);
  else if (uses_cublas(s, b) && plan(p, s).narrowed)
    c.result = take(out);
  return c;
}

void emit_cublas_step(
    CodeWriter& w, const BlockProgram& p, std::size_t i, CublasBuffers at, Backend b) {
  const LoweredStep& s = p.steps[i];
  std::string id = std::to_string(i), out = "k" + std::to_string(s.out[0]);
  int wide = widened_operand(p, s, b);
  if (at.operand >= 0) {
    int t = s.op.in[static_cast<std::size_t>(wide)];
    std::int64_t n = elements(p.shapes[static_cast<std::size_t>(t)]);
    std::string k = "k" + std::to_string(t);
    w.line(ws_pointer("w" + id, at.operand, k + " in fp32"));
    w.line(grid_launch("yr_convert", n, k + ", w" + id + ", " + std::to_string(n) + "L"));
  }
  auto arg = [&](int j) {
    int t = s.op.in[static_cast<std::size_t>(j)];
    return j == wide ? "w" + id + ", CUDA_R_32F" : "k" + std::to_string(t) + ", " + cuda_type(p, t);
  };
  LibraryMatmul d = plan(p, s);
  std::string dims_text = std::to_string(d.batch) + "L, " + std::to_string(d.m) + "L, " +
                          std::to_string(d.k) + "L, " + std::to_string(d.n) + "L";
  std::string operands =
      arg(0) + ", " + std::to_string(d.sa) + "L, " + arg(1) + ", " + std::to_string(d.sb) + "L, ";
  std::string shape = shape_text(p.shapes[static_cast<std::size_t>(s.out[0])]);
  std::int64_t n = elements(p.shapes[static_cast<std::size_t>(s.out[0])]);
  if (at.parts >= 0) {
    std::int64_t slices = cublas_slices(p, s, b);
    w.line(ws_pointer("p" + id, at.parts,
                      out + " in " + std::to_string(slices) + " slices of K, fp32"));
    w.line("if (int rc = yr_gemm_slices(" + operands + "p" + id + ", " + dims_text + ", " +
           std::to_string(slices) + "L, stream)) return rc;  // matmul -> " + shape +
           " (cuBLAS, K split)");
    w.line(grid_launch("yr_sum_slices", n,
                       "p" + id + ", " + out + ", " + std::to_string(n) + "L, " +
                           std::to_string(d.m * d.n) + "L, " + std::to_string(slices) + "L"));
    return;
  }
  std::string dst = at.result >= 0 ? "r" + id : out;
  if (at.result >= 0)
    w.line(ws_pointer(dst, at.result, out + " in fp32"));
  w.line("if (int rc = yr_gemm(" + operands + dst + ", " +
         (at.result >= 0 ? std::string("CUDA_R_32F") : cuda_type(p, s.out[0])) + ", " + dims_text +
         ", stream)) return rc;  // matmul -> " + shape + " (cuBLAS)");
  if (at.result >= 0)
    w.line(grid_launch("yr_convert", n, dst + ", " + out + ", " + std::to_string(n) + "L"));
}

}  // namespace yirage::codegen
