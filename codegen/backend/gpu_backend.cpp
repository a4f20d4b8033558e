// The CUDA and HIP backends (backend.h): one __global__ kernel per launch of the lowered
// program (thread blocks of kBlockThreads threads, the block's tiles in dynamic shared
// memory), intermediates in the caller's workspace, and a C launcher. A program in GEMV form
// (block_program.h) gets the streaming GEMV kernel of gemv_emitter.cpp instead.
#include "codegen/backend/backend.h"

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
    w.line("// a library op, run by one block (a simple generated kernel, not a tuned library)");
    emit_library_op(w, p, s);
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

// Bytes of the workspace: every intermediate kernel tensor (fp32), 256-byte aligned.
std::vector<std::int64_t> workspace_offsets(const BlockProgram& p, std::int64_t* total) {
  std::vector<std::int64_t> off(p.shapes.size(), -1);
  std::int64_t at = 0;
  for (std::size_t t = p.graph.inputs.size(); t < p.shapes.size(); ++t) {
    if (tensor_type(p, static_cast<int>(t)) != "float")
      continue;
    off[t] = at;
    at += (elements(p.shapes[t]) * 4 + 255) / 256 * 256;
  }
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
  std::vector<std::int64_t> off = workspace_offsets(p, &bytes);
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
    std::string k = name + "_launch" + std::to_string(i);
    std::string grid = "dim3(1)";
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
    for (std::size_t i = 0; i < p.steps.size(); ++i)
      emit_kernel(w, p, i, b);
    w.line("");
    emit_launcher(w, p, b);
  }
  return KernelSource{name + (b == Backend::kCuda ? ".cu" : ".hip"), name, w.str()};
}

}  // namespace yirage::codegen
