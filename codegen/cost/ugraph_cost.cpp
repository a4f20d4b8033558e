#include "codegen/cost/ugraph_cost.h"

#include "codegen/cost/block_latency.h"
#include "codegen/ir/thread_fusion.h"
#include "codegen/lower/block_program.h"
#include "codegen/lower/library_matmul.h"
#include "costmodel/fused_kernel.h"
#include "devices/support/check.h"

#include <algorithm>

namespace yirage::codegen {
namespace {

double count(const Shape& s) {
  return static_cast<double>(elements(s));
}

// Non-matrix operations of an op producing `out` from `in` (one per element touched; an
// exp, sqrt or division counts as one).
double vector_ops(const BlockOp& op, const std::vector<Shape>& shapes, const Shape& out) {
  double in = op.in.empty() ? 0 : count(shapes[static_cast<std::size_t>(op.in[0])]);
  if (op.kind == OpKind::kAccum || is_reduction(op.kind))
    return 2 * in;
  return op.kind == OpKind::kMatmul ? 0 : count(out);
}

// The lowering of a µGraph that the GPU backends emit as generated block programs (the
// generic path), whose shared memory and serial latency the model prices as lowered (the
// latency at the device's fitted cycles, none where they are not fitted); nullopt for a
// streaming GEMV or a CPU.
std::optional<BlockProgram> generic_gpu_path(const KernelGraph& g, const devices::DeviceSpec& d) {
  bool gpu = d.backend == devices::Backend::kCuda || d.backend == devices::Backend::kHip;
  bool custom = std::any_of(g.ops.begin(), g.ops.end(),
                            [](const KernelOp& op) { return op.kind == OpKind::kCustom; });
  if (!gpu || !custom)
    return std::nullopt;
  BlockProgram p = lower(g);
  if (match_gemv(p, nullptr))
    return std::nullopt;
  return p;
}

costmodel::FusedProgram fused_program(const BlockGraph& b,
                                      const std::vector<Shape>& in_shapes,
                                      devices::DType dtype,
                                      const devices::DeviceSpec& d,
                                      const LoweredBlock* lowered) {
  double bytes = devices::dtype_bytes(dtype);
  std::string why;
  std::vector<Shape> s = block_shapes(b, in_shapes, &why);
  CHECK(!s.empty()) << "pricing an invalid block graph: " << why;
  std::vector<bool> post = after_accum(b);
  costmodel::FusedProgram p;
  p.blocks = b.blocks();
  p.iterations = b.forloop;
  for (std::size_t i = 0; i < b.inputs.size(); ++i) {
    const BlockInput& in = b.inputs[i];
    bool replicated = false;
    for (std::size_t a = 0; a < 3; ++a)
      replicated = replicated || (b.grid[a] > 1 && in.imap[a] == kReplicated);
    p.inputs.push_back({count(in_shapes[static_cast<std::size_t>(in.input)]) * bytes,
                        count(s[i]) * bytes, replicated});
  }
  for (const BlockOutput& o : b.outputs)
    p.output_bytes += count(s[static_cast<std::size_t>(o.tensor)]) * bytes;
  for (std::size_t i = 0; i < b.ops.size(); ++i) {
    const BlockOp& op = b.ops[i];
    const Shape& out = s[b.inputs.size() + i];
    if (op.kind == OpKind::kMatmul) {
      const Shape& a = s[static_cast<std::size_t>(op.in[0])];
      p.matrix_flops += 2 * count(out) * static_cast<double>(a.back());
      p.matrix_rows = std::max(p.matrix_rows, a[a.size() - 2]);
    }
    (post[b.inputs.size() + i] && op.kind != OpKind::kAccum ? p.epilogue_flops : p.vector_flops) +=
        vector_ops(op, s, out);
  }
  p.shared_bytes = static_cast<double>(shared_memory_bytes(b, s, devices::DType::kFp16)) * bytes /
                   2;  // shared_memory_bytes counts 2-byte elements for non-accumulators
  if (lowered != nullptr) {
    BlockLatency l = block_latency(b, s, d.backend == devices::Backend::kCuda);
    p.serial_steps = l.steps;
    p.mma_steps = l.mma_steps;
    p.barriers = l.barriers;
    p.shared_bytes = static_cast<double>(lowered->shared_elems) * 4;  // as the backend lays it out
  }
  return p;
}

// Bytes per element of kernel tensor t as the generated code holds it: the program's type for
// its inputs and outputs, fp32 for the intermediates (backend.h, tensor_type).
double tensor_bytes(const KernelGraph& g, int t) {
  return program_tensor(g, t) ? devices::dtype_bytes(g.dtype) : 4.0;
}

// An elementwise copy of n elements between widths (a widened operand, a narrowed product).
costmodel::KernelEstimate convert_kernel(const devices::DeviceSpec& d,
                                         const costmodel::GpuEfficiency& eff,
                                         double n,
                                         double from,
                                         double to) {
  return costmodel::stream_kernel(d, eff, "elementwise", "convert", n * from, n * to, n);
}

// A library matmul's launches. On CUDA as cublas_step.cpp runs it (library_matmul.h): the
// widened operand, the cuBLAS call (TF32 where an operand is fp32, K in slices as a batch),
// then the slices' sum or the narrowed product; elsewhere one GEMM at the program's type.
std::vector<costmodel::KernelEstimate> matmul_kernels(const KernelGraph& g,
                                                      const std::vector<Shape>& shapes,
                                                      const KernelOp& op,
                                                      int out,
                                                      const devices::DeviceSpec& d,
                                                      const costmodel::GpuEfficiency& eff) {
  LibraryMatmul mm = library_matmul(g, shapes, op, out);
  if (d.backend != devices::Backend::kCuda || !mm.fp32)
    return {costmodel::gemm_kernel(d, g.dtype, eff, mm.m, mm.n, mm.k, mm.batch)};
  std::vector<costmodel::KernelEstimate> k;
  double n_out = count(shapes[static_cast<std::size_t>(out)]);
  if (mm.widened >= 0)
    k.push_back(convert_kernel(
        d, eff,
        count(shapes[static_cast<std::size_t>(op.in[static_cast<std::size_t>(mm.widened)])]),
        tensor_bytes(g, op.in[static_cast<std::size_t>(mm.widened)]), 4));
  k.push_back(costmodel::gemm_kernel(d, devices::DType::kTf32, eff, mm.m, mm.n, mm.k / mm.slices,
                                     mm.batch * mm.slices));
  if (mm.slices > 1)
    k.push_back(costmodel::stream_kernel(
        d, eff, "elementwise", "sum of K slices", n_out * static_cast<double>(mm.slices) * 4,
        n_out * tensor_bytes(g, out), n_out * static_cast<double>(mm.slices)));
  else if (mm.narrowed)
    k.push_back(convert_kernel(d, eff, n_out, 4, tensor_bytes(g, out)));
  return k;
}

costmodel::KernelEstimate library_kernel(const KernelGraph& g,
                                         const KernelOp& op,
                                         const std::vector<Shape>& in,
                                         int out_tensor,
                                         const Shape& out,
                                         const devices::DeviceSpec& d,
                                         const costmodel::GpuEfficiency& eff) {
  double read = 0;
  for (std::size_t i = 0; i < in.size(); ++i)
    read += count(in[i]) * tensor_bytes(g, op.in[i]);
  std::string kind =
      is_reduction(op.kind) ? (op.kind == OpKind::kRms ? "rmsnorm" : "softmax") : "elementwise";
  double flops = is_reduction(op.kind) ? 2 * count(in[0]) : count(out);
  return costmodel::stream_kernel(d, eff, kind, op_name(op.kind), read,
                                  count(out) * tensor_bytes(g, out_tensor), flops,
                                  is_reduction(op.kind) ? in[0].back() : 0);
}

// A row chain (row_chain.h) as the one kernel the backends emit: its input read once (a row
// again from cache), its output written once, priced as the fitted softmax (or RMSNorm)
// kernel: a row-wise map, reduction and combine.
costmodel::KernelEstimate row_chain_kernel(const KernelGraph& g,
                                           const RowChain& c,
                                           const devices::DeviceSpec& d,
                                           const costmodel::GpuEfficiency& eff) {
  double n = static_cast<double>(c.rows * c.len);
  std::string kind = c.reduce == OpKind::kRms ? "rmsnorm" : "softmax";
  return costmodel::stream_kernel(d, eff, kind, "row " + row_chain_name(c),
                                  n * tensor_bytes(g, c.x), n * tensor_bytes(g, c.out),
                                  n * (c.ops + 1), c.len);
}

}  // namespace

UgraphCost price_ugraph(const KernelGraph& g,
                        const devices::DeviceSpec& d,
                        const costmodel::GpuEfficiency& eff) {
  std::string why;
  std::vector<Shape> shapes = kernel_shapes(g, &why);
  CHECK(!shapes.empty()) << "pricing an invalid µGraph: " << why;
  UgraphCost c;
  std::optional<BlockProgram> generic = generic_gpu_path(g, d);
  std::vector<RowChain> chains = row_chains(g, shapes);
  auto chain = chains.begin();
  std::size_t next = g.inputs.size();
  // In a CUDA graph a kernel pays program_launch, unless its fitted latency holds its start
  // (a fitted stream kernel). Fitted with those paying it too, before programs_graph.csv's
  // last row, the held-out error was 23.7% against 22.2%.
  auto add = [&c, &eff](costmodel::KernelEstimate k) {
    if (eff.in_graph && !k.fitted_start)
      k.launch = k.launch + eff.program_launch;
    c.time = c.time + k.time();
    c.kernels.push_back(std::move(k));
  };
  std::size_t step = 0;  // the lowered step (one per op, or per row chain)
  for (std::size_t i = 0; i < g.ops.size(); ++i, ++step) {
    const KernelOp& op = g.ops[i];
    if (chain != chains.end() && chain->first == static_cast<int>(i)) {
      add(row_chain_kernel(g, *chain, d, eff));
      next += static_cast<std::size_t>(chain->ops);
      i += static_cast<std::size_t>(chain->ops) - 1;
      ++chain;
      continue;
    }
    std::vector<Shape> in;
    for (int t : op.in)
      in.push_back(shapes[static_cast<std::size_t>(t)]);
    if (op.kind == OpKind::kCustom) {
      const BlockGraph& b = g.blocks[static_cast<std::size_t>(op.block)];
      const LoweredBlock* lowered = generic ? &*generic->steps[step].block : nullptr;
      costmodel::FusedProgram p = fused_program(b, in, g.dtype, d, lowered);
      p.name = "custom op " + std::to_string(step);
      add(costmodel::fused_kernel(d, g.dtype, eff, p));
      next += b.outputs.size();
    } else if (op.kind == OpKind::kMatmul) {
      for (costmodel::KernelEstimate& k :
           matmul_kernels(g, shapes, op, static_cast<int>(next), d, eff))
        add(std::move(k));
      ++next;
    } else {
      add(library_kernel(g, op, in, static_cast<int>(next), shapes[next], d, eff));
      ++next;
    }
  }
  return c;
}

}  // namespace yirage::codegen
