#include "planner/workload/layer_cost.h"

#include "costmodel/collective.h"
#include "costmodel/gpu_op.h"
#include "devices/support/check.h"
#include "planner/workload/eager_traffic.h"
#include "planner/workload/model_size.h"

#include <algorithm>

namespace yirage::planner {
namespace {

using costmodel::OpEstimate;

// Backward over forward: a GEMM's backward computes two products of the forward's size
// (input and weight gradients); FlashAttention-2's backward does 5 matrix products to the
// forward's 2 (Dao 2023, §3.1), 2.5x.
constexpr double kBackwardGemm = 2.0;
constexpr double kBackwardAttention = 2.5;

OpEstimate op(const DeviceContext& cx,
              const std::string& name,
              std::vector<std::int64_t> dims,
              bool fused,
              bool causal = false) {
  const costmodel::GpuOpInfo* info = costmodel::find_gpu_op(name);
  CHECK(info != nullptr) << name;
  costmodel::OpShape shape{std::move(dims), causal};
  std::string why;
  auto e =
      costmodel::estimate_gpu_op(cx.device, cx.dtype, cx.efficiency, *info, shape, fused, &why);
  CHECK(e.has_value()) << name << ": " << why;
  return *e;
}

// A compound operation, fused when that is possible and faster on this device.
OpEstimate compound(const DeviceContext& cx,
                    const std::string& name,
                    const std::vector<std::int64_t>& dims,
                    LayerCost& c) {
  const costmodel::GpuOpInfo* info = costmodel::find_gpu_op(name);
  costmodel::OpShape shape{dims, false};
  std::string why;
  auto fused =
      costmodel::estimate_gpu_op(cx.device, cx.dtype, cx.efficiency, *info, shape, true, &why);
  OpEstimate unfused = op(cx, name, dims, false);
  c.compounds.push_back(
      {name, dims, false, fused ? fused->time.value : 0, unfused.time.value, fused ? "" : why});
  if (cx.fuse && fused && fused->time < unfused.time) {
    c.compounds.back().fused = true;
    c.fusions.push_back(name + ": fused (" +
                        devices::format_number(unfused.time.value / fused->time.value, 3) + "x)");
    return *fused;
  }
  c.fusions.push_back(name + ": unfused" + (fused ? "" : " (" + why + ")"));
  return unfused;
}

double tp_collectives(const DeviceContext& cx, double bytes, bool inference) {
  if (!cx.tp_group || cx.tp_group->ranks <= 1) {
    return 0;
  }
  if (inference) {
    // Megatron tensor parallelism without sequence parallelism: two all-reduces per layer.
    return 2 *
           costmodel::estimate_collective(*cx.tp_group, costmodel::Collective::kAllReduce, bytes)
               .latency()
               .value;
  }
  // Sequence parallelism (Korthikanti et al. 2022, §4.2.2): per layer, forward runs two
  // all-gathers and two reduce-scatters of the layer's activations; backward the same.
  double ag = costmodel::estimate_collective(*cx.tp_group, costmodel::Collective::kAllGather, bytes)
                  .latency()
                  .value;
  double rs =
      costmodel::estimate_collective(*cx.tp_group, costmodel::Collective::kReduceScatter, bytes)
          .latency()
          .value;
  return 2 * (2 * ag + 2 * rs);
}

}  // namespace

namespace {

// Attention as the framework runs it: one fused kernel, or (older stacks) a batched QK^T,
// the softmax over s x s scores, dropout on them and a batched PV, all through memory.
double attention_time(const DeviceContext& cx,
                      const LayerShape& s,
                      std::int64_t heads,
                      std::int64_t kv,
                      std::int64_t head_dim,
                      double* flops) {
  if (!s.unfused_attention && s.cp > 1) {
    OpEstimate a =
        op(cx, "attention", {s.micro_batch, heads, kv, s.seq, s.seq * s.cp / 2, head_dim}, false);
    *flops = a.flops;
    return a.time.value;
  }
  if (!s.unfused_attention) {
    std::int64_t keys = s.kv_len > 0 ? s.kv_len : s.seq;
    OpEstimate a =
        op(cx, "attention", {s.micro_batch, heads, kv, s.seq, keys, head_dim}, false, true);
    *flops = a.flops;
    return a.time.value;
  }
  std::int64_t batch = s.micro_batch * heads;
  OpEstimate qk = op(cx, "gemm", {batch, s.seq, s.seq, head_dim}, false);
  OpEstimate soft = op(cx, "softmax", {batch * s.seq, s.seq}, false);
  OpEstimate drop = op(cx, "elementwise", {batch * s.seq * s.seq}, false);
  OpEstimate pv = op(cx, "gemm", {batch, s.seq, head_dim, s.seq}, false);
  *flops = qk.flops + pv.flops;
  return qk.time.value + soft.time.value + drop.time.value + pv.time.value;
}

// The memory-bound kernels between the matrix products: rotary embedding (RoPE models),
// residual adds, and for models with biases the bias additions (Megatron fuses bias with
// GeLU and bias with dropout and the residual add, one kernel each).
double pointwise_time(const DeviceContext& cx,
                      const devices::ModelSpec& m,
                      const LayerShape& s,
                      std::int64_t qkv_out,
                      std::int64_t ffn_out) {
  std::int64_t tokens = s.micro_batch * s.seq;
  double t = 2 * op(cx, "elementwise", {tokens * m.hidden}, false).time.value;
  if (m.position == devices::PositionKind::kRope) {
    t += op(cx, "elementwise", {tokens * qkv_out}, false).time.value;
  }
  if (m.bias == devices::BiasKind::kAll) {
    t += op(cx, "elementwise", {tokens * qkv_out}, false).time.value;  // QKV bias
    t += op(cx, "elementwise", {tokens * ffn_out}, false).time.value;  // bias + GeLU
  }
  return t;
}

}  // namespace

namespace {

// The attention heads and KV heads on one rank of a tensor-parallel group of `t`, and the
// head dimension attention runs at (MLA: its no-RoPE and RoPE parts together).
struct LocalHeads {
  std::int64_t heads;
  std::int64_t kv;
  std::int64_t head_dim;
};

LocalHeads local_heads(const devices::ModelSpec& m, std::int64_t t) {
  return {std::max<std::int64_t>(1, m.heads / t), std::max<std::int64_t>(1, m.kv_heads / t),
          m.mla ? m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim : m.head_dim};
}

// The layer as eager PyTorch runs it: each projection a GEMM of its own, the fused attention
// kernel, and the memory traffic of eager_traffic.h between them.
LayerCost eager_layer_cost(const devices::ModelSpec& m,
                           const LayerShape& s,
                           const DeviceContext& cx) {
  LayerCost c;
  std::int64_t t = s.tp;
  std::int64_t tokens = s.micro_batch * s.seq;
  auto [heads, kv, head_dim] = local_heads(m, t);
  std::int64_t q_out = std::max<std::int64_t>(1, qkv_width(m) / t - 2 * kv * m.head_dim);
  std::vector<OpEstimate> gemms = {
      op(cx, "gemm", {tokens, q_out, m.hidden}, false),
      op(cx, "gemm", {tokens, kv * m.head_dim, m.hidden}, false),
      op(cx, "gemm", {tokens, kv * m.head_dim, m.hidden}, false),
      op(cx, "gemm", {tokens, m.hidden, attention_out_width(m) / t}, false)};
  std::int64_t ffn = s.moe_layer ? m.moe->expert_ffn : m.ffn;
  std::int64_t rows = s.moe_layer ? tokens * (m.moe->top_k + m.moe->shared_experts) : tokens;
  gemms.push_back(op(cx, "gemm", {rows, ffn / t, m.hidden}, false));
  if (m.ffn_kind == devices::FfnKind::kGated)
    gemms.push_back(op(cx, "gemm", {rows, ffn / t, m.hidden}, false));
  gemms.push_back(op(cx, "gemm", {rows, m.hidden, ffn / t}, false));
  double gemm = 0;
  for (const OpEstimate& g : gemms) {
    gemm += g.time.value;
    c.flops_forward += g.flops;
  }
  double attn_flops = 0;
  double attn = attention_time(cx, s, heads, kv, head_dim, &attn_flops);
  EagerBytes bytes = eager_layer_bytes(m, s);
  c.fusions = {"rmsnorm_linear: unfused (eager PyTorch)", "gated_mlp: unfused (eager PyTorch)"};
  c.attention_forward = attn;
  c.forward = gemm + attn + eager_stream_time(cx, bytes.forward);
  c.backward =
      kBackwardGemm * gemm + kBackwardAttention * attn + eager_stream_time(cx, bytes.backward);
  c.flops_forward += attn_flops;
  c.tp_comm = tp_collectives(
      cx, static_cast<double>(tokens * m.hidden) * devices::dtype_bytes(cx.dtype), s.inference);
  return c;
}

}  // namespace

LayerCost layer_cost(const devices::ModelSpec& m, const LayerShape& s, const DeviceContext& cx) {
  if (cx.eager && !s.inference)
    return eager_layer_cost(m, s, cx);
  LayerCost c;
  std::int64_t t = s.tp;
  std::int64_t tokens = s.micro_batch * s.seq;
  auto [heads, kv, head_dim] = local_heads(m, t);
  bool rms = m.norm == devices::NormKind::kRmsNorm;
  std::int64_t qkv_out = qkv_width(m) / t;
  double norm_time = op(cx, rms ? "rmsnorm" : "layernorm", {tokens, m.hidden}, false).time.value;
  // Pre-attention norm and QKV projection: RMSNorm+Linear may fuse; LayerNorm stays apart.
  double qkv = rms ? compound(cx, "rmsnorm_linear", {tokens, m.hidden, qkv_out}, c).time.value
                   : norm_time + op(cx, "gemm", {tokens, qkv_out, m.hidden}, false).time.value;
  OpEstimate qkv_gemm = op(cx, "gemm", {tokens, qkv_out, m.hidden}, false);
  double attn_flops = 0;
  double attn = attention_time(cx, s, heads, kv, head_dim, &attn_flops);
  OpEstimate out = op(cx, "gemm", {tokens, m.hidden, attention_out_width(m) / t}, false);
  std::int64_t ffn = s.moe_layer ? m.moe->expert_ffn : m.ffn;
  // Without expert parallelism every device runs its tokens' top-k (and shared) experts,
  // each of them split over the tensor-parallel group.
  std::int64_t rows = s.moe_layer ? tokens * (m.moe->top_k + m.moe->shared_experts) : tokens;
  double mlp = 0;
  double mlp_flops = 0;
  if (m.ffn_kind == devices::FfnKind::kGated) {
    OpEstimate g = compound(cx, "gated_mlp", {rows, m.hidden, ffn / t}, c);
    mlp = g.time.value;
    mlp_flops = g.flops;
  } else {
    OpEstimate up = op(cx, "gemm", {rows, ffn / t, m.hidden}, false);
    OpEstimate down = op(cx, "gemm", {rows, m.hidden, ffn / t}, false);
    mlp = up.time.value + down.time.value;
    mlp_flops = up.flops + down.flops;
  }
  double forward = qkv + attn + out.time.value + norm_time + mlp +
                   pointwise_time(cx, m, s, qkv_out, rows / tokens * ffn / t);
  c.attention_forward = attn;
  c.forward = forward;
  c.backward = kBackwardGemm * (forward - attn) + kBackwardAttention * attn;
  c.flops_forward = qkv_gemm.flops + attn_flops + out.flops + mlp_flops;
  c.tp_comm = tp_collectives(
      cx, static_cast<double>(tokens * m.hidden) * devices::dtype_bytes(cx.dtype), s.inference);
  return c;
}

LayerCost head_cost(const devices::ModelSpec& m, const LayerShape& s, const DeviceContext& cx) {
  LayerCost c;
  std::int64_t tokens = s.micro_batch * s.seq;
  std::int64_t vocab = std::max<std::int64_t>(1, m.vocab / s.tp);
  OpEstimate head = op(cx, "gemm", {tokens, vocab, m.hidden}, false);
  c.flops_forward = head.flops;
  if (cx.eager && !s.inference) {
    // The loss over fp32 logits: the log-softmax forward and its backward, each a softmax
    // over fp32 rows, and the casts and final norm of eager_head_bytes.
    DeviceContext fp32 = cx;
    fp32.dtype = devices::DType::kFp32;
    double loss = op(fp32, "softmax", {tokens, vocab}, false).time.value;
    EagerBytes bytes = eager_head_bytes(m, s);
    c.forward = head.time.value + loss + eager_stream_time(cx, bytes.forward);
    c.backward = kBackwardGemm * head.time.value + loss + eager_stream_time(cx, bytes.backward);
    return c;
  }
  OpEstimate loss = op(cx, "softmax", {tokens, vocab}, false);
  c.forward = head.time.value + loss.time.value;
  c.backward = kBackwardGemm * head.time.value + loss.time.value;
  return c;
}

}  // namespace yirage::planner
