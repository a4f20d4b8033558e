#include "planner/workload/infer_layer.h"

#include "costmodel/collective.h"
#include "planner/workload/model_size.h"
#include "planner/workload/pricer.h"

namespace yirage::planner {
namespace {

using costmodel::OpEstimate;

// Seconds and matrix FLOPs of the kernels priced so far.
struct Pass {
  Pricer& p;
  bool quantize = false;  // 8-bit GEMMs over wider activations: each input quantised first
  std::int64_t rows = 0;
  double time = 0;
  double flops = 0;

  void op(const std::string& name, std::vector<std::int64_t> dims, bool causal = false) {
    OpEstimate e = p.op(name, std::move(dims), causal);
    time += e.time.value;
    if (name == "gemm" || name == "attention")
      flops += e.flops;
  }

  // x[rows x k] W[k x n], W as the weights are stored.
  void gemm(std::int64_t n, std::int64_t k) {
    if (quantize)
      op("quantize", {rows, k});
    op("gemm", {rows, n, k});
  }

  // PyTorch's rotate-half RoPE on a tensor of `n` elements, a view of the fused QKV output:
  // x * cos (broadcast), -x2 (a strided half), cat(-x2, x1), that times sin (broadcast), and
  // the sum, the one contiguous kernel.
  void rope(std::int64_t n) {
    op("strided", {n});
    op("strided", {n / 2});
    op("cat", {n});
    op("strided", {n});
    op("elementwise", {n});
  }
};

bool quantized(const DeviceContext& cx) {
  devices::DType g = cx.gemm_dtype.value_or(cx.dtype);
  return devices::dtype_bytes(g) < 2 && devices::dtype_bytes(cx.dtype) > devices::dtype_bytes(g);
}

double comm_bytes(const DeviceContext& cx) {
  return devices::dtype_bytes(cx.comm_dtype.value_or(cx.dtype));
}

// The host issues each kernel of an eager pass; a CUDA graph's replay does not.
void host_issue(const DeviceContext& cx, std::int64_t kernels, LayerCost& c) {
  if (!cx.efficiency.in_graph)
    with_host_issue(cx.efficiency.host, kernels, c);
}

}  // namespace

LayerCost eager_inference_layer(const devices::ModelSpec& m,
                                const LayerShape& s,
                                const DeviceContext& cx) {
  LayerCost c;
  Pricer p(cx);
  std::int64_t tokens = s.micro_batch * s.seq;
  auto [heads, kv, head_dim] = local_heads(m, s.tp);
  std::int64_t ffn = (s.moe_layer ? m.moe->expert_ffn : m.ffn) / s.tp;
  // Without expert parallelism every device runs its tokens' top-k (and shared) experts.
  std::int64_t ffn_rows = s.moe_layer ? tokens * (m.moe->top_k + m.moe->shared_experts) : tokens;
  Pass a{p, quantized(cx), tokens};
  a.op("rmsnorm", {tokens, m.hidden});
  a.gemm(qkv_width(m) / s.tp, m.hidden);
  if (m.position == devices::PositionKind::kRope) {
    a.rope(tokens * heads * head_dim);
    a.rope(tokens * kv * head_dim);
  }
  a.op("copy", {tokens * kv * head_dim});  // keys into the cache
  a.op("copy", {tokens * kv * head_dim});  // values
  AttentionForward attention = attention_time(p, s, heads, kv, head_dim);
  c.attention_forward = attention.time;
  a.time += c.attention_forward;
  a.flops += attention.flops;
  if (s.seq > 1)
    a.op("copy", {tokens * heads * head_dim});  // the attention output made contiguous
  a.gemm(m.hidden, attention_out_width(m) / s.tp);
  a.op("elementwise", {tokens * m.hidden});  // residual
  a.op("rmsnorm", {tokens, m.hidden});
  Pass mlp{p, a.quantize, ffn_rows};
  bool gated = m.ffn_kind == devices::FfnKind::kGated;
  mlp.gemm((gated ? 2 : 1) * ffn, m.hidden);
  // SiLU of the gate half of the fused gate/up output, then its product with the up half:
  // both over strided views. A plain MLP's activation reads its GEMM's whole output.
  mlp.op(gated ? "strided" : "copy", {ffn_rows * ffn});
  if (gated)
    mlp.op("strided_binary", {ffn_rows * ffn});
  mlp.gemm(m.hidden, ffn);
  a.op("elementwise", {tokens * m.hidden});  // residual
  TpCollectives tp = tp_collectives(cx, static_cast<double>(tokens * m.hidden) * comm_bytes(cx), s);
  c.forward = a.time + mlp.time;
  c.flops_forward = a.flops + mlp.flops;
  c.tp_comm = tp.time;
  c.fusions = {"rmsnorm_linear: unfused (PyTorch)", "gated_mlp: unfused (PyTorch)"};
  host_issue(cx, p.kernels() + tp.calls, c);
  return c;
}

LayerCost eager_inference_ends(const devices::ModelSpec& m,
                               const LayerShape& s,
                               const DeviceContext& cx) {
  LayerCost c;
  DeviceContext wide = cx;
  wide.gemm_dtype.reset();  // the LM head stays at the activations' width
  Pricer p(wide);
  std::int64_t vocab = std::max<std::int64_t>(1, m.vocab / s.tp);
  Pass a{p, false, s.micro_batch};
  a.op("copy", {s.micro_batch * s.seq * m.hidden});  // the embedding's gather
  a.op("rmsnorm", {s.micro_batch, m.hidden});
  a.op("gemm", {s.micro_batch, vocab, m.hidden});
  c.forward = a.time;
  c.flops_forward = a.flops;
  if (s.tp > 1 && cx.tp_group) {
    c.tp_comm = costmodel::estimate_collective(
                    *cx.tp_group, costmodel::Collective::kAllGather,
                    static_cast<double>(s.micro_batch * vocab * s.tp) * comm_bytes(cx))
                    .latency()
                    .value;
  }
  host_issue(cx, p.kernels() + (s.tp > 1 ? 1 : 0), c);
  return c;
}

}  // namespace yirage::planner
