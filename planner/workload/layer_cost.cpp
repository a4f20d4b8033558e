#include "planner/workload/layer_cost.h"

#include "costmodel/collective.h"
#include "costmodel/gpu_op.h"
#include "devices/support/check.h"
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
  if (fused && fused->time < unfused.time) {
    c.fusions.push_back(name + ": fused (" +
                        devices::format_number(unfused.time.value / fused->time.value, 3) + "x)");
    return *fused;
  }
  c.fusions.push_back(name + ": unfused" + (fused ? "" : " (" + why + ")"));
  return unfused;
}

std::int64_t attention_out_width(const devices::ModelSpec& m) {
  return m.mla ? m.heads * m.mla->v_head_dim : m.heads * m.head_dim;
}

// Output width of the projections before attention (Q, K, V; for MLA the compressed
// projections, priced by their parameter count).
std::int64_t qkv_width(const devices::ModelSpec& m) {
  if (!m.mla)
    return (m.heads + 2 * m.kv_heads) * m.head_dim;
  ParameterCount p = count_parameters(m);
  double per_layer = p.attention / static_cast<double>(m.layers);
  double out_proj = static_cast<double>(attention_out_width(m) * m.hidden);
  return static_cast<std::int64_t>((per_layer - out_proj) / static_cast<double>(m.hidden));
}

double tp_collectives(const DeviceContext& cx, double bytes) {
  if (!cx.tp_group || cx.tp_group->ranks <= 1)
    return 0;
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

LayerCost layer_cost(const devices::ModelSpec& m, const LayerShape& s, const DeviceContext& cx) {
  LayerCost c;
  std::int64_t t = s.tp;
  std::int64_t tokens = s.micro_batch * s.seq;
  std::int64_t heads = std::max<std::int64_t>(1, m.heads / t);
  std::int64_t kv = std::max<std::int64_t>(1, m.kv_heads / t);
  std::int64_t head_dim = m.mla ? m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim : m.head_dim;
  OpEstimate qkv = compound(cx, "rmsnorm_linear", {tokens, m.hidden, qkv_width(m) / t}, c);
  OpEstimate attn =
      op(cx, "attention", {s.micro_batch, heads, kv, s.seq, s.seq, head_dim}, false, true);
  OpEstimate out = op(cx, "gemm", {tokens, m.hidden, attention_out_width(m) / t}, false);
  OpEstimate norm = op(cx, "rmsnorm", {tokens, m.hidden}, false);
  std::int64_t ffn = s.moe_layer ? m.moe->expert_ffn : m.ffn;
  // Without expert parallelism every device runs its tokens' top-k (and shared) experts,
  // each of them split over the tensor-parallel group.
  std::int64_t rows = s.moe_layer ? tokens * (m.moe->top_k + m.moe->shared_experts) : tokens;
  OpEstimate mlp = m.ffn_kind == devices::FfnKind::kGated
                       ? compound(cx, "gated_mlp", {rows, m.hidden, ffn / t}, c)
                       : op(cx, "gemm", {rows, 2 * ffn / t, m.hidden}, false);
  // The memory-bound rest of a layer: rotary embedding of Q and K, two residual adds.
  OpEstimate rope = op(cx, "elementwise", {tokens * (heads + kv) * head_dim}, false);
  OpEstimate residual = op(cx, "elementwise", {tokens * m.hidden}, false);
  double forward = qkv.time.value + attn.time.value + out.time.value + norm.time.value +
                   mlp.time.value + rope.time.value + 2 * residual.time.value;
  c.attention_forward = attn.time.value;
  c.forward = forward;
  c.backward = kBackwardGemm * (forward - attn.time.value) + kBackwardAttention * attn.time.value;
  c.flops_forward = qkv.flops + attn.flops + out.flops + mlp.flops;
  c.tp_comm =
      tp_collectives(cx, static_cast<double>(tokens * m.hidden) * devices::dtype_bytes(cx.dtype));
  return c;
}

LayerCost head_cost(const devices::ModelSpec& m, const LayerShape& s, const DeviceContext& cx) {
  LayerCost c;
  std::int64_t tokens = s.micro_batch * s.seq;
  std::int64_t vocab = std::max<std::int64_t>(1, m.vocab / s.tp);
  OpEstimate head = op(cx, "gemm", {tokens, vocab, m.hidden}, false);
  OpEstimate loss = op(cx, "softmax", {tokens, vocab}, false);
  c.forward = head.time.value + loss.time.value;
  c.backward = kBackwardGemm * head.time.value + loss.time.value;
  c.flops_forward = head.flops;
  return c;
}

}  // namespace yirage::planner
