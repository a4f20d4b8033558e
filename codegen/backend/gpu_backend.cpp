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

// Blocks of a library op's grid: one thread an output element, 64 (a wavefront) a row of a
// reduction over the last dim or of a short row chain, one block a row of a long one.

std::int64_t library_blocks(const BlockProgram& p, const LoweredStep& s) {
  if (s.row)
    return library_row_blocks(s) ? std::clamp<std::int64_t>(s.row->rows, 1, 4096)
                                 : grid_blocks(s.row->rows * 64);
  std::int64_t n = elements(p.shapes[static_cast<std::size_t>(s.out[0])]);
  return grid_blocks(library_reduces_rows(p, s) ? n * 64 : n);
}

// Bytes of the workspace: every intermediate kernel tensor that a step writes (fp32), then each
// cuBLAS step's buffers, 256-byte aligned.
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
    if (is_intermediate(p, static_cast<int>(t)))
      off[t] = take(static_cast<int>(t));
  cublas->clear();
  for (const LoweredStep& s : p.steps)
    cublas->push_back(cublas_buffers(p, s, b, at));
  *total = at;
  return off;
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
      w.raw(cublas_prelude());
    for (std::size_t i = 0; i < p.steps.size(); ++i)
      if (!uses_cublas(p.steps[i], b))
        emit_kernel(w, p, i, b);
    w.line("");
    emit_launcher(w, p, b);
  }
  return KernelSource{name + (b == Backend::kCuda ? ".cu" : ".hip"), name, w.str()};
}

}  // namespace yirage::codegen
