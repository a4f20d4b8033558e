// The CPU backend (backend.h): C++ with OpenMP. Each launch is a function whose thread blocks
// run in parallel over the grid, each with its own copy of the shared-memory plan; fp32.
#include "codegen/backend/backend.h"

#include <cctype>

namespace yirage::codegen {
namespace {

std::string param_list(const BlockProgram& p, const LoweredStep& s) {
  std::string r;
  for (int u : s.op.in)
    r += (r.empty() ? "" : ", ") + std::string("const ") + tensor_type(p, u) + "* k" +
         std::to_string(u);
  for (int o : s.out)
    r += ", " + tensor_type(p, o) + "* k" + std::to_string(o);
  return r;
}

std::string arg_list(const LoweredStep& s) {
  std::string r;
  for (int u : s.op.in)
    r += (r.empty() ? "k" : ", k") + std::to_string(u);
  for (int o : s.out)
    r += ", k" + std::to_string(o);
  return r;
}

void emit_step(CodeWriter& w, const BlockProgram& p, std::size_t i, const std::string& name) {
  const LoweredStep& s = p.steps[i];
  w.open("static void " + name + "_launch" + std::to_string(i) + "(" + param_list(p, s) + ")");
  if (!s.block) {
    emit_library_op(w, p, s, false);
    w.close();
    return;
  }
  const Grid& g = s.block->graph.grid;
  w.open("#pragma omp parallel\n");
  w.line("std::vector<float> shared(" + std::to_string(s.block->shared_elems + 4) +
         ");  // this thread's copy of the block's shared memory");
  w.line("float* smem = shared.data();");
  w.line("#pragma omp for collapse(3) schedule(static)");
  w.line("for (long bz = 0; bz < " + std::to_string(g[2]) + "; ++bz)");
  w.line("for (long by = 0; by < " + std::to_string(g[1]) + "; ++by)");
  w.open("for (long bx = 0; bx < " + std::to_string(g[0]) + "; ++bx)");
  emit_block_body(w, p, s, Backend::kCpu);
  w.close();
  w.close();
  w.close();
}

}  // namespace

std::string backend_name(Backend b) {
  return b == Backend::kCpu ? "cpu" : b == Backend::kCuda ? "cuda" : "hip";
}

std::string c_identifier(const std::string& name) {
  std::string r;
  for (char ch : name)
    r += std::isalnum(static_cast<unsigned char>(ch)) != 0 ? ch : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0])) != 0)
    r = "k_" + r;
  return r;
}

KernelSource emit_cpu(const BlockProgram& p) {
  std::string name = c_identifier(p.name);
  CodeWriter w;
  emit_schedule_comment(w, p, "CPU backend: C++ with OpenMP over thread blocks, fp32.");
  w.raw(prelude_cpu());
  w.line("");
  for (std::size_t i = 0; i < p.steps.size(); ++i)
    emit_step(w, p, i, name);
  w.line("");
  w.open("extern \"C\" void " + name + "(const float* const* inputs, float* const* outputs)");
  for (std::size_t i = 0; i < p.graph.inputs.size(); ++i)
    w.line("const float* k" + std::to_string(i) + " = inputs[" + std::to_string(i) + "];  // " +
           p.graph.inputs[i].name + " " + shape_text(p.shapes[i]));
  for (std::size_t i = 0; i < p.graph.outputs.size(); ++i)
    w.line("float* k" + std::to_string(p.graph.outputs[i]) + " = outputs[" + std::to_string(i) +
           "];");
  for (std::size_t t = p.graph.inputs.size(); t < p.shapes.size(); ++t) {
    if (!is_intermediate(p, static_cast<int>(t)))
      continue;  // an input, an output, or a row chain's tensor that no step writes
    std::string v = "k" + std::to_string(t);
    w.line("std::vector<float> " + v + "_buffer(" + std::to_string(elements(p.shapes[t])) +
           ");  // " + shape_text(p.shapes[t]));
    w.line("float* " + v + " = " + v + "_buffer.data();");
  }
  for (std::size_t i = 0; i < p.steps.size(); ++i)
    w.line(name + "_launch" + std::to_string(i) + "(" + arg_list(p.steps[i]) + ");");
  w.close();
  return KernelSource{name + ".cpp", name, w.str()};
}

}  // namespace yirage::codegen
