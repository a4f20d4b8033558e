#include "planner/workload/layer_cost.h"

#include "costmodel/collective.h"
#include "costmodel/gpu_op.h"
#include "costmodel/overlap_fit.h"
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

// Backward over forward for the memory-bound kernels, by the bytes each moves per element:
// a softmax's backward reads its output and the gradient and writes one (6 B against the
// forward's 4 B); an elementwise op's (dropout, bias, GeLU, residual) reads the gradient and
// a mask or input and writes one, as its forward does; a norm's reads the input and the
// gradient, writes one and reduces the weight gradients (twice the forward's traffic).
double backward_ratio(const std::string& op) {
  if (op == "softmax")
    return 1.5;
  if (op == "elementwise")
    return 1.0;
  if (op == "attention")
    return kBackwardAttention;
  return kBackwardGemm;  // GEMMs, norms and the compound operations around GEMMs
}

OpEstimate price(const DeviceContext& cx,
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

// Prices a layer's operations on one device and counts the kernels they launch. Each kernel
// is priced at the GPU's time alone: the host's issue time (GpuEfficiency::host) is charged
// per pass by with_host_issue, since the host runs ahead of long kernels and the GPU waits
// only when the pass as a whole issues slower than it runs.
class Pricer {
 public:
  explicit Pricer(const DeviceContext& cx) : cx_(cx) { cx_.efficiency.host = {}; }

  const DeviceContext& context() const { return cx_; }

  std::int64_t kernels() const { return kernels_; }

  // The backward of every operation priced so far (backward_ratio of each).
  double backward() const { return backward_; }

  // The mean time of the GEMMs priced so far (0 if none): what a collective launched beside
  // a weight-gradient GEMM of the same shape waits behind.
  double mean_gemm() const { return gemms_ > 0 ? gemm_time_ / static_cast<double>(gemms_) : 0; }

  OpEstimate op(const std::string& name, std::vector<std::int64_t> dims, bool causal = false) {
    OpEstimate e = price(cx_, name, std::move(dims), false, causal);
    count(name, e);
    return e;
  }

  // A compound operation, fused when that is possible and faster on this device.
  OpEstimate compound(const std::string& name,
                      const std::vector<std::int64_t>& dims,
                      LayerCost& c) {
    const costmodel::GpuOpInfo* info = costmodel::find_gpu_op(name);
    costmodel::OpShape shape{dims, false};
    std::string why;
    auto fused =
        costmodel::estimate_gpu_op(cx_.device, cx_.dtype, cx_.efficiency, *info, shape, true, &why);
    OpEstimate unfused = price(cx_, name, dims, false);
    c.compounds.push_back(
        {name, dims, false, fused ? fused->time.value : 0, unfused.time.value, fused ? "" : why});
    OpEstimate chosen = unfused;
    if (cx_.fuse && fused && fused->time < unfused.time) {
      c.compounds.back().fused = true;
      c.fusions.push_back(name + ": fused (" +
                          devices::format_number(unfused.time.value / fused->time.value, 3) + "x)");
      chosen = *fused;
    } else {
      c.fusions.push_back(name + ": unfused" + (fused ? "" : " (" + why + ")"));
    }
    count(name, chosen);
    return chosen;
  }

 private:
  void count(const std::string& name, const OpEstimate& e) {
    kernels_ += static_cast<std::int64_t>(e.kernels.size());
    backward_ += backward_ratio(name) * e.time.value;
    if (name == "gemm") {
      gemm_time_ += e.time.value;
      ++gemms_;
    }
  }

  DeviceContext cx_;
  std::int64_t kernels_ = 0;
  double backward_ = 0;
  double gemm_time_ = 0;
  std::int64_t gemms_ = 0;
};

// An eager framework's host issues every kernel of a pass (`kernels` in forward, twice as
// many in backward: each forward op has two backward products or their like) at
// GpuEfficiency::host each; a pass takes the longer of its GPU time with its collectives and
// that issue time. The forward and backward compute grow by what the host adds. Of
// `c.tp_comm`, `backward_wait` is the backward's alone (backward_wait below).
void with_host_issue(devices::Seconds per_kernel,
                     std::int64_t kernels,
                     LayerCost& c,
                     double backward_wait = 0) {
  double issue = per_kernel.value * static_cast<double>(kernels);
  if (issue <= 0)
    return;
  double comm = (c.tp_comm - backward_wait) / 2;
  c.forward = std::max(c.forward, issue - comm);
  c.backward = std::max(c.backward, 2 * issue - comm - backward_wait);
}

// The tensor-parallel collectives of one layer's forward: their seconds and how many calls.
struct TpCollectives {
  double time = 0;
  std::int64_t calls = 0;
};

// In backward each tensor-parallel collective is launched beside a weight-gradient GEMM that
// does not need it, and starts when that GEMM ends on every rank (costmodel/overlap_fit.h):
// the collectives' total wait, for GEMMs of `mean_gemm` seconds.
double backward_wait(const DeviceContext& cx, const TpCollectives& tp, double mean_gemm) {
  if (!cx.tp_group || tp.calls == 0)
    return 0;
  return static_cast<double>(tp.calls) *
         costmodel::overlap_delay(cx.efficiency.overlap_wait, cx.tp_group->ranks, mean_gemm);
}

TpCollectives tp_collectives(const DeviceContext& cx, double bytes, const LayerShape& s) {
  if (!cx.tp_group || cx.tp_group->ranks <= 1) {
    return {};
  }
  auto latency = [&](costmodel::Collective c) {
    return costmodel::estimate_collective(*cx.tp_group, c, bytes).latency().value;
  };
  if (s.inference || !s.sp) {
    // Megatron tensor parallelism without sequence parallelism: two all-reduces per layer
    // in forward (and two in backward).
    return {2 * latency(costmodel::Collective::kAllReduce), 2};
  }
  // Sequence parallelism (Korthikanti et al. 2022, §4.2.2): per layer, forward runs two
  // all-gathers and two reduce-scatters of the layer's activations; backward the same.
  return {2 * latency(costmodel::Collective::kAllGather) +
              2 * latency(costmodel::Collective::kReduceScatter),
          4};
}

}  // namespace

namespace {

// Attention as the framework runs it: one fused kernel, or (older stacks) a batched QK^T,
// the softmax over s x s scores, dropout on them and a batched PV, all through memory.
double attention_time(Pricer& p,
                      const LayerShape& s,
                      std::int64_t heads,
                      std::int64_t kv,
                      std::int64_t head_dim,
                      double* flops) {
  if (!s.unfused_attention && s.cp > 1) {
    OpEstimate a = p.op("attention", {s.micro_batch, heads, kv, s.seq, s.seq * s.cp / 2, head_dim});
    *flops = a.flops;
    return a.time.value;
  }
  if (!s.unfused_attention) {
    std::int64_t keys = s.kv_len > 0 ? s.kv_len : s.seq;
    OpEstimate a = p.op("attention", {s.micro_batch, heads, kv, s.seq, keys, head_dim}, true);
    *flops = a.flops;
    return a.time.value;
  }
  std::int64_t batch = s.micro_batch * heads;
  OpEstimate qk = p.op("gemm", {batch, s.seq, s.seq, head_dim});
  OpEstimate soft = p.op("softmax", {batch * s.seq, s.seq});
  OpEstimate drop = p.op("elementwise", {batch * s.seq * s.seq});
  OpEstimate pv = p.op("gemm", {batch, s.seq, head_dim, s.seq});
  *flops = qk.flops + pv.flops;
  return qk.time.value + soft.time.value + drop.time.value + pv.time.value;
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
  double attn_flops = 0;
  double attn = attention_time(p, s, heads, kv, head_dim, &attn_flops);
  EagerBytes bytes = eager_layer_bytes(m, s);
  c.fusions = {"rmsnorm_linear: unfused (eager PyTorch)", "gated_mlp: unfused (eager PyTorch)"};
  c.attention_forward = attn;
  c.forward = gemm + attn + eager_stream_time(p.context(), bytes.forward);
  c.backward = kBackwardGemm * gemm + kBackwardAttention * attn +
               eager_stream_time(p.context(), bytes.backward);
  c.flops_forward += attn_flops;
  TpCollectives tp = tp_collectives(
      cx, static_cast<double>(tokens * m.hidden) * devices::dtype_bytes(cx.dtype), s);
  double wait = backward_wait(cx, tp, p.mean_gemm());
  c.tp_comm = 2 * tp.time + wait;
  // Under tensor parallelism every operation goes through DTensor's dispatch in Python, and
  // the GPU waits for it (GpuEfficiency::eager_tp_host per operation); without it the host
  // runs ahead of the GPU (the 1-GPU steps keep the GPU 97-100% busy).
  if (s.tp > 1)
    with_host_issue(cx.efficiency.eager_tp_host, p.kernels() + eager_layer_operations(m) + tp.calls,
                    c, wait);
  return c;
}

}  // namespace

std::int64_t norm_rows(const LayerShape& s) {
  std::int64_t tokens = s.micro_batch * s.seq;
  return s.sp && !s.inference ? std::max<std::int64_t>(1, tokens / s.tp) : tokens;
}

LayerCost layer_cost(const devices::ModelSpec& m, const LayerShape& s, const DeviceContext& cx) {
  if (cx.eager && !s.inference)
    return eager_layer_cost(m, s, cx);
  LayerCost c;
  Pricer p(cx);
  std::int64_t t = s.tp;
  std::int64_t tokens = s.micro_batch * s.seq;
  auto [heads, kv, head_dim] = local_heads(m, t);
  bool rms = m.norm == devices::NormKind::kRmsNorm;
  std::int64_t qkv_out = qkv_width(m) / t;
  std::string norm = rms ? "rmsnorm" : "layernorm";
  // Pre-attention norm and QKV projection: RMSNorm+Linear may fuse; LayerNorm stays apart.
  double qkv = rms ? p.compound("rmsnorm_linear", {tokens, m.hidden, qkv_out}, c).time.value
                   : p.op(norm, {norm_rows(s), m.hidden}).time.value +
                         p.op("gemm", {tokens, qkv_out, m.hidden}).time.value;
  double qkv_flops = price(p.context(), "gemm", {tokens, qkv_out, m.hidden}, false).flops;
  double attn_flops = 0;
  double attn = attention_time(p, s, heads, kv, head_dim, &attn_flops);
  OpEstimate out = p.op("gemm", {tokens, m.hidden, attention_out_width(m) / t});
  double norm_time = p.op(norm, {norm_rows(s), m.hidden}).time.value;  // before the MLP
  std::int64_t ffn = s.moe_layer ? m.moe->expert_ffn : m.ffn;
  // Without expert parallelism every device runs its tokens' top-k (and shared) experts,
  // each of them split over the tensor-parallel group.
  std::int64_t rows = s.moe_layer ? tokens * (m.moe->top_k + m.moe->shared_experts) : tokens;
  double mlp = 0;
  double mlp_flops = 0;
  if (m.ffn_kind == devices::FfnKind::kGated) {
    OpEstimate g = p.compound("gated_mlp", {rows, m.hidden, ffn / t}, c);
    mlp = g.time.value;
    mlp_flops = g.flops;
  } else {
    OpEstimate up = p.op("gemm", {rows, ffn / t, m.hidden});
    OpEstimate down = p.op("gemm", {rows, m.hidden, ffn / t});
    mlp = up.time.value + down.time.value;
    mlp_flops = up.flops + down.flops;
  }
  double forward = qkv + attn + out.time.value + norm_time + mlp +
                   pointwise_time(p, m, s, qkv_out, rows / tokens * ffn / t);
  c.attention_forward = attn;
  c.forward = forward;
  c.backward = p.backward();
  c.flops_forward = qkv_flops + attn_flops + out.flops + mlp_flops;
  TpCollectives tp = tp_collectives(
      cx, static_cast<double>(tokens * m.hidden) * devices::dtype_bytes(cx.dtype), s);
  double wait = s.inference ? 0 : backward_wait(cx, tp, p.mean_gemm());
  c.tp_comm = s.inference ? tp.time : 2 * tp.time + wait;
  with_host_issue(cx.efficiency.host, p.kernels() + tp.calls, c, wait);
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
    EagerBytes bytes = eager_head_bytes(m, s);
    if (whole > vocab && cx.tp_group) {
      // The head's output shards gathered into whole bf16 logits on every rank.
      c.tp_comm = costmodel::estimate_collective(*cx.tp_group, costmodel::Collective::kAllGather,
                                                 static_cast<double>(tokens * whole) * 2)
                      .latency()
                      .value;
    }
    c.forward = head.time.value + loss + eager_stream_time(p.context(), bytes.forward);
    c.backward =
        kBackwardGemm * head.time.value + loss + eager_stream_time(p.context(), bytes.backward);
    return c;
  }
  OpEstimate loss = p.op("softmax", {tokens, vocab});
  c.forward = head.time.value + loss.time.value;
  c.backward = p.backward();
  with_host_issue(cx.efficiency.host, p.kernels(), c);
  return c;
}

}  // namespace yirage::planner
