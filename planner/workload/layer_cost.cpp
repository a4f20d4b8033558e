#include "planner/workload/layer_cost.h"

#include "costmodel/collective.h"
#include "costmodel/gpu_op.h"
#include "costmodel/overlap_fit.h"
#include "devices/support/check.h"
#include "planner/workload/eager_traffic.h"
#include "planner/workload/infer_layer.h"
#include "planner/workload/model_size.h"
#include "planner/workload/pricer.h"
#include "planner/workload/tp_overlap.h"

#include <algorithm>

namespace yirage::planner {

using costmodel::OpEstimate;

namespace {

// A GEMM of `rows` x `n` x `k` whole, in tp chunks of its rows and in 4 splits, as the
// overlapped collectives run it (tp_overlap.h).
TpGemm overlap_gemm(
    const DeviceContext& cx, std::int64_t rows, std::int64_t n, std::int64_t k, std::int64_t tp) {
  auto at = [&](std::int64_t parts) {
    std::int64_t r = std::max<std::int64_t>(1, rows / parts);
    return static_cast<double>(parts) * price(cx, "gemm", {r, n, k}, false).time.value;
  };
  return {at(1), at(tp), at(4)};
}

// With Layout::tp_overlap, the layer's tensor-parallel collectives overlapped with its GEMMs
// (tp_overlap.h): `c.tp_comm` becomes what stays exposed, and the GEMMs slow by the SMs the
// collectives take; the backward's wait beside weight-gradient GEMMs is gone.
void overlap_tp_collectives(const DeviceContext& cx,
                            const LayerShape& s,
                            double bytes,
                            const TpGemms& g,
                            LayerCost& c,
                            double* wait) {
  auto latency = [&](costmodel::Collective op) {
    return costmodel::estimate_collective(*cx.tp_group, op, bytes).latency().value;
  };
  // train_estimate refuses tp_overlap on a device without its count of compute units.
  std::int64_t sms = cx.device.onchip.compute_units->value;
  TpOverlapCost o = tp_overlap_cost(latency(costmodel::Collective::kAllGather),
                                    latency(costmodel::Collective::kReduceScatter), g, s.tp, sms);
  *wait = 0;
  c.tp_comm = o.exposed_forward + o.exposed_backward;
  c.forward += o.slower_forward;
  c.backward += o.slower_backward;
  c.forward_kernels.gemm += o.slower_forward;
  c.backward_kernels.gemm += o.slower_backward;
}

// The host's time to issue a Megatron-LM training pass of `modules` kernels from its modules'
// calls (projections, norms, fused attention, collectives) and `plain` from plain PyTorch
// operations inside them: `host` for each where it was fitted (on whole iterations, for a
// device without op rows), else `megatron_host` and `megatron_op_host` (megatron_host where
// that is not fitted).
double megatron_issue(const DeviceContext& cx, std::int64_t modules, std::int64_t plain) {
  const costmodel::GpuEfficiency& e = cx.efficiency;
  double module = e.host.value > 0 ? e.host.value : e.megatron_host.value;
  double op = e.host.value > 0               ? e.host.value
              : e.megatron_op_host.value > 0 ? e.megatron_op_host.value
                                             : e.megatron_host.value;
  return module * static_cast<double>(modules) + op * static_cast<double>(plain);
}

// The memory-bound kernels between the matrix products: rotary embedding (RoPE models),
// residual adds, and for models with biases the bias additions (Megatron fuses bias with
// GeLU and bias with dropout and the residual add, one kernel each).
double pointwise_time(Pricer& p,
                      const devices::ModelSpec& m,
                      const LayerShape& s,
                      std::int64_t qkv_out,
                      std::int64_t ffn_out) {
  std::int64_t tokens = s.micro_batch * s.seq;
  double t = 0;
  for (int i = 0; i < 2; ++i)
    t += p.op("elementwise", {norm_rows(s) * m.hidden}).time.value;  // residual adds
  if (m.position == devices::PositionKind::kRope) {
    t += p.op("elementwise", {tokens * qkv_out}).time.value;
  }
  if (m.bias == devices::BiasKind::kAll) {
    t += p.op("elementwise", {tokens * qkv_out}).time.value;  // QKV bias
    t += p.op("elementwise", {tokens * ffn_out}).time.value;  // bias + GeLU
  }
  return t;
}

// Megatron-Core's own pointwise kernels of a layer (local_layer_bytes), and for models with
// biases every bias's gradient, its output's gradient summed over the tokens (PyTorch's
// reduce_kernel): the QKV (`qkv_out` wide), output, up (`up_out`) and down projections'.
PassTime local_pointwise(const DeviceContext& cx,
                         const devices::ModelSpec& m,
                         const LayerShape& s,
                         std::int64_t qkv_out,
                         std::int64_t up_out) {
  EagerBytes bytes = local_layer_bytes(m, s);
  PassTime t{eager_forward_time(cx, bytes), eager_backward_time(cx, bytes)};
  if (m.bias == devices::BiasKind::kAll) {
    std::int64_t tokens = s.micro_batch * s.seq;
    auto sum = [&](std::int64_t cols) {
      return price(cx, "column_sum", {tokens, std::max<std::int64_t>(1, cols)}, false).time.value;
    };
    t.backward += sum(qkv_out) + 2 * sum(m.hidden) + sum(up_out);
  }
  return t;
}

}  // namespace

namespace {

std::string norm_op(const devices::ModelSpec& m) {
  return m.norm == devices::NormKind::kRmsNorm ? "rmsnorm" : "layernorm";
}

// The layer as eager PyTorch runs it: each projection a GEMM of its own, the fused attention
// kernel, and the memory traffic of eager_traffic.h between them.
LayerCost eager_layer_cost(const devices::ModelSpec& m,
                           const LayerShape& s,
                           const DeviceContext& cx) {
  LayerCost c;
  Pricer p(cx);
  std::int64_t t = s.tp;
  std::int64_t tokens = s.micro_batch * s.seq;
  auto [heads, kv, head_dim] = local_heads(m, t);
  std::int64_t q_out = std::max<std::int64_t>(1, qkv_width(m) / t - 2 * kv * m.head_dim);
  std::vector<OpEstimate> gemms = {p.op("gemm", {tokens, q_out, m.hidden}),
                                   p.op("gemm", {tokens, kv * m.head_dim, m.hidden}),
                                   p.op("gemm", {tokens, kv * m.head_dim, m.hidden}),
                                   p.op("gemm", {tokens, m.hidden, attention_out_width(m) / t})};
  std::int64_t ffn = s.moe_layer ? m.moe->expert_ffn : m.ffn;
  std::int64_t rows = s.moe_layer ? tokens * (m.moe->top_k + m.moe->shared_experts) : tokens;
  gemms.push_back(p.op("gemm", {rows, ffn / t, m.hidden}));
  if (m.ffn_kind == devices::FfnKind::kGated)
    gemms.push_back(p.op("gemm", {rows, ffn / t, m.hidden}));
  gemms.push_back(p.op("gemm", {rows, m.hidden, ffn / t}));
  double gemm = 0;
  for (const OpEstimate& g : gemms) {
    gemm += g.time.value;
    c.flops_forward += g.flops;
  }
  AttentionForward attention = attention_time(p, s, heads, kv, head_dim);
  double attn = attention.time;
  EagerBytes bytes = eager_layer_bytes(m, s, !cx.fused_norms);
  // Fused, the two RMSNorms are PyTorch's norm kernels, on the tokens eager_layer_bytes
  // normalises (sharded over the tensor-parallel group).
  std::vector<std::int64_t> normed = {std::max<std::int64_t>(1, tokens / t), m.hidden};
  double norms = cx.fused_norms ? 2 * p.op(norm_op(m), normed).time.value : 0;
  double norms_back =
      cx.fused_norms ? 2 * price(p.context(), backward_op(norm_op(m)), normed, false).time.value
                     : 0;
  c.fusions = {"rmsnorm_linear: unfused (eager PyTorch)", "gated_mlp: unfused (eager PyTorch)"};
  c.attention_forward = attn;
  c.forward_kernels = {gemm, attn, eager_forward_time(p.context(), bytes) + norms};
  c.backward_kernels = {kBackwardGemm * gemm,
                        costmodel::attention_backward_time(
                            cx.efficiency, attn, attention.unequal_tail, attention.backward_beside),
                        eager_backward_time(p.context(), bytes) + norms_back};
  c.forward = c.forward_kernels.total();
  c.backward = c.backward_kernels.total();
  c.flops_forward += attention.flops;
  TpCollectives tp = tp_collectives(
      cx, static_cast<double>(tokens * m.hidden) * devices::dtype_bytes(cx.dtype), s);
  double wait = backward_wait(cx, tp, p.mean_gemm());
  c.tp_comm = 2 * tp.time + wait;
  if (!s.moe_layer) {
    // The down projection's output is kept by nothing (the residual add's backward needs no
    // input); an MoE layer's experts' outputs are kept by the weighted combine.
    c.forward_tail.gemm = gemms.back().time.value;
    c.forward_tail.memory = eager_stream_time(p.context(), eager_residual_bytes(m, s));
    c.tp_tail = tp.calls > 0 ? tp.time / static_cast<double>(tp.calls) : 0;
  }
  // Under tensor parallelism every operation goes through DTensor's dispatch in Python, and
  // the GPU waits for it (GpuEfficiency::eager_tp_host per operation); without it the host
  // runs ahead of the GPU (the 1-GPU steps keep the GPU 97-100% busy).
  if (s.tp > 1)
    with_host_issue(cx.efficiency.eager_tp_host,
                    p.kernels() + eager_layer_operations(m, !cx.fused_norms) + tp.calls, c, wait);
  return c;
}

}  // namespace

std::int64_t norm_rows(const LayerShape& s) {
  std::int64_t tokens = s.micro_batch * s.seq;
  return s.sp && !s.inference ? std::max<std::int64_t>(1, tokens / s.tp) : tokens;
}

LayerCost layer_cost(const devices::ModelSpec& m, const LayerShape& s, const DeviceContext& cx) {
  if (cx.eager && s.inference)
    return eager_inference_layer(m, s, cx);
  if (cx.eager)
    return eager_layer_cost(m, s, cx);
  LayerCost c;
  Pricer p(cx);
  std::int64_t t = s.tp;
  std::int64_t tokens = s.micro_batch * s.seq;
  auto [heads, kv, head_dim] = local_heads(m, t);
  bool rms = m.norm == devices::NormKind::kRmsNorm;
  std::int64_t qkv_out = qkv_width(m) / t;
  std::string norm = norm_op(m);
  // Pre-attention norm and QKV projection: RMSNorm+Linear may fuse; LayerNorm stays apart.
  double qkv = rms ? p.compound("rmsnorm_linear", {tokens, m.hidden, qkv_out}, c).time.value
                   : p.op(norm, {norm_rows(s), m.hidden}).time.value +
                         p.op("gemm", {tokens, qkv_out, m.hidden}).time.value;
  double qkv_flops = price(p.context(), "gemm", {tokens, qkv_out, m.hidden}, false).flops;
  AttentionForward attention = attention_time(p, s, heads, kv, head_dim);
  double attn = attention.time;
  OpEstimate out = p.op("gemm", {tokens, m.hidden, attention_out_width(m) / t});
  double norm_time = p.op(norm, {norm_rows(s), m.hidden}).time.value;  // before the MLP
  std::int64_t ffn = s.moe_layer ? m.moe->expert_ffn : m.ffn;
  // Without expert parallelism every device runs its tokens' top-k (and shared) experts,
  // each of them split over the tensor-parallel group.
  std::int64_t rows = s.moe_layer ? tokens * (m.moe->top_k + m.moe->shared_experts) : tokens;
  double mlp = 0;
  double mlp_flops = 0;
  bool gated = m.ffn_kind == devices::FfnKind::kGated;
  if (gated && !cx.megatron_local) {
    OpEstimate g = p.compound("gated_mlp", {rows, m.hidden, ffn / t}, c);
    mlp = g.time.value;
    mlp_flops = g.flops;
  } else {
    // Up (gate and up as one GEMM where gated; Megatron-Core's own SiLU and product are in
    // local_layer_bytes), then down.
    OpEstimate up = p.op("gemm", {rows, (gated ? 2 : 1) * ffn / t, m.hidden});
    OpEstimate down = p.op("gemm", {rows, m.hidden, ffn / t});
    mlp = up.time.value + down.time.value;
    mlp_flops = up.flops + down.flops;
  }
  double pointwise =
      cx.megatron_local ? 0 : pointwise_time(p, m, s, qkv_out, rows / tokens * ffn / t);
  c.attention_forward = attn;
  c.forward = qkv + attn + out.time.value + norm_time + mlp + pointwise;
  c.backward = p.backward();
  c.forward_kernels = p.forward_kernels();
  c.backward_kernels = p.backward_kernels();
  if (cx.megatron_local) {
    PassTime local = local_pointwise(p.context(), m, s, qkv_out, rows / tokens * ffn / t);
    c.forward += local.forward;
    c.backward += local.backward;
    c.forward_kernels.memory += local.forward;
    c.backward_kernels.memory += local.backward;
  }
  c.flops_forward = qkv_flops + attention.flops + out.flops + mlp_flops;
  double tp_bytes = static_cast<double>(tokens * m.hidden) *
                    devices::dtype_bytes(cx.comm_dtype.value_or(cx.dtype));
  TpCollectives tp = tp_collectives(cx, tp_bytes, s);
  double wait = s.inference ? 0 : backward_wait(cx, tp, p.mean_gemm());
  c.tp_comm = s.inference ? tp.time : 2 * tp.time + wait;
  if (s.tp_overlap && !s.inference && s.sp && cx.tp_group && cx.tp_group->ranks > 1) {
    TpGemms g{overlap_gemm(cx, tokens, qkv_out, m.hidden, t),
              overlap_gemm(cx, tokens, m.hidden, attention_out_width(m) / t, t),
              overlap_gemm(cx, rows, (gated ? 2 : 1) * ffn / t, m.hidden, t),
              overlap_gemm(cx, rows, m.hidden, ffn / t, t)};
    overlap_tp_collectives(cx, s, tp_bytes, g, c, &wait);
  }
  if (s.inference) {
    with_host_issue(cx.efficiency.host, p.kernels() + tp.calls, c, wait);
    return c;
  }
  // The plain operations: Megatron-Core's own pointwise pieces (te=off) and unfused
  // attention's, whose module is one more call.
  std::int64_t plain = p.plain_kernels() + (cx.megatron_local ? local_layer_operations(m) : 0);
  std::int64_t modules = p.kernels() - p.plain_kernels() + tp.calls + (s.unfused_attention ? 1 : 0);
  with_issue_time(megatron_issue(cx, modules, plain), c, wait, kMegatronBackwardIssue);
  return c;
}

LayerCost head_cost(const devices::ModelSpec& m, const LayerShape& s, const DeviceContext& cx) {
  LayerCost c;
  Pricer p(cx);
  std::int64_t tokens = s.micro_batch * s.seq;
  std::int64_t vocab = std::max<std::int64_t>(1, m.vocab / s.tp);
  OpEstimate head = p.op("gemm", {tokens, vocab, m.hidden});
  c.flops_forward = head.flops;
  if (cx.eager && !s.inference) {
    // The loss over fp32 logits: the log-softmax forward and its backward, each a softmax
    // over fp32 rows, and the casts and final norm of eager_head_bytes.
    DeviceContext fp32 = p.context();
    fp32.dtype = devices::DType::kFp32;
    std::int64_t whole = eager_loss_vocab(m, s);
    double loss = price(fp32, "softmax", {tokens, whole}, false).time.value;
    EagerBytes bytes = eager_head_bytes(m, s, !cx.fused_norms);
    std::vector<std::int64_t> normed = {std::max<std::int64_t>(1, tokens / s.tp), m.hidden};
    double norm = cx.fused_norms ? price(p.context(), norm_op(m), normed, false).time.value : 0;
    double norm_back =
        cx.fused_norms ? price(p.context(), backward_op(norm_op(m)), normed, false).time.value : 0;
    if (whole > vocab && cx.tp_group) {
      // The head's output shards gathered into whole bf16 logits on every rank.
      c.tp_comm = costmodel::estimate_collective(*cx.tp_group, costmodel::Collective::kAllGather,
                                                 static_cast<double>(tokens * whole) * 2)
                      .latency()
                      .value;
    }
    c.forward_kernels = {head.time.value, 0, eager_forward_time(p.context(), bytes) + norm, loss};
    c.backward_kernels = {kBackwardGemm * head.time.value, 0,
                          eager_backward_time(p.context(), bytes) + norm_back, loss};
    c.forward = c.forward_kernels.total();
    c.backward = c.backward_kernels.total();
    return c;
  }
  if (!s.inference) {
    // Megatron-LM's loss over fp32 logits of the rank's shard, with three all-reduces of a
    // value per token under tensor parallelism (the rows' maximum, the target's logit, the
    // sum of exponentials).
    PassTime loss = megatron_loss_time(p.context(), static_cast<double>(tokens * vocab));
    if (cx.tp_group && cx.tp_group->ranks > 1) {
      c.tp_comm =
          3 * costmodel::estimate_collective(*cx.tp_group, costmodel::Collective::kAllReduce,
                                             static_cast<double>(tokens) * 4)
                  .latency()
                  .value;
    }
    c.forward_kernels = {head.time.value, 0, 0, loss.forward};
    c.backward_kernels = {kBackwardGemm * head.time.value, 0, 0, loss.backward};
    c.forward = c.forward_kernels.total();
    c.backward = c.backward_kernels.total();
    // Its plain operations: the cast, maximum, subtraction, exp, sum, division and the
    // target's gather in forward.
    with_issue_time(megatron_issue(cx, p.kernels(), 7), c, 0, kMegatronBackwardIssue);
    return c;
  }
  OpEstimate loss = p.op("softmax", {tokens, vocab});
  c.forward = head.time.value + loss.time.value;
  c.backward = p.backward();
  c.forward_kernels = {head.time.value, 0, 0, loss.time.value};
  c.backward_kernels = {kBackwardGemm * head.time.value, 0, 0,
                        price(p.context(), "softmax_backward", {tokens, vocab}, false).time.value};
  with_host_issue(cx.efficiency.host, p.kernels(), c);
  return c;
}

double hot_duty(const LayerCost& c) {
  KernelTime k = c.forward_kernels;
  k.add(c.backward_kernels);
  double busy = k.total();
  return busy > 0 ? (k.gemm + k.attention) / busy : 1;
}

namespace {

template <typename Price>
LayerCost at_duty(const DeviceContext& cx, Price price) {
  LayerCost c = price(cx);
  if (cx.efficiency.duty_slope <= 0)
    return c;
  DeviceContext hot = cx;
  hot.efficiency = costmodel::at_duty(cx.efficiency, hot_duty(c));
  return price(hot);
}

}  // namespace

LayerCost layer_cost_at_duty(const devices::ModelSpec& m,
                             const LayerShape& s,
                             const DeviceContext& cx) {
  return at_duty(cx, [&](const DeviceContext& d) { return layer_cost(m, s, d); });
}

LayerCost head_cost_at_duty(const devices::ModelSpec& m,
                            const LayerShape& s,
                            const DeviceContext& cx) {
  return at_duty(cx, [&](const DeviceContext& d) { return head_cost(m, s, d); });
}

}  // namespace yirage::planner
