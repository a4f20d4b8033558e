#include "planner/workload/pricer.h"

#include "costmodel/collective.h"
#include "costmodel/overlap_fit.h"
#include "devices/support/check.h"
#include "planner/workload/eager_traffic.h"

#include <algorithm>

namespace yirage::planner {

using costmodel::OpEstimate;

devices::DType op_dtype(const DeviceContext& cx, const std::string& name) {
  if (name == "attention")
    return cx.kv_dtype.value_or(cx.dtype);
  const costmodel::GpuOpInfo* info = costmodel::find_gpu_op(name);
  if (name == "gemm" || (info != nullptr && info->compound))
    return cx.gemm_dtype.value_or(cx.dtype);  // GEMMs and the compounds around them
  return cx.dtype;                            // the memory-bound kernels move activations
}

// Backward over forward for the memory-bound kernels, by the bytes each moves per element: an
// elementwise op's (dropout, bias, GeLU, residual) reads the gradient and a mask or input and
// writes one, as its forward does. (A softmax's backward and a norm's are operations of their
// own, costmodel's softmax_backward, rmsnorm_backward and layernorm_backward: Pricer::op
// prices them so.)
double& kernel_slot(KernelTime& k, const std::string& name) {
  if (name == "attention")
    return k.attention;
  const costmodel::GpuOpInfo* info = costmodel::find_gpu_op(name);
  bool matrix = name == "gemm" || (info != nullptr && info->compound);
  return matrix ? k.gemm : k.memory;
}

std::string backward_op(const std::string& op) {
  if (op == "softmax" || op == "rmsnorm" || op == "layernorm")
    return op + "_backward";
  return "";
}

double backward_ratio(const std::string& op) {
  if (op == "elementwise")
    return 1.0;
  if (op == "attention")
    return costmodel::kFlashBackward;
  return kBackwardGemm;  // GEMMs, norms and the compound operations around GEMMs
}

OpEstimate price(const DeviceContext& cx,
                 const std::string& name,
                 std::vector<std::int64_t> dims,
                 bool fused,
                 bool causal) {
  const costmodel::GpuOpInfo* info = costmodel::find_gpu_op(name);
  CHECK(info != nullptr) << name;
  costmodel::OpShape shape{std::move(dims), causal};
  std::string why;
  auto e = costmodel::estimate_gpu_op(cx.device, op_dtype(cx, name), cx.efficiency, *info, shape,
                                      fused, &why);
  CHECK(e.has_value()) << name << ": " << why;
  return *e;
}

// An eager framework's host issues every kernel of a pass (`kernels` in forward, twice as
// many in backward: each forward op has two backward products or their like) at
// GpuEfficiency::host each; a pass takes the longer of its GPU time with its collectives and
// that issue time. The forward and backward compute grow by what the host adds. Of
// `c.tp_comm`, `backward_wait` is the backward's alone (backward_wait below).
void with_host_issue(devices::Seconds per_kernel,
                     std::int64_t kernels,
                     LayerCost& c,
                     double backward_wait) {
  with_issue_time(per_kernel.value * static_cast<double>(kernels), c, backward_wait);
}

void with_issue_time(double issue, LayerCost& c, double backward_wait, double backward_issue) {
  if (issue <= 0)
    return;
  c.issue = issue;
  double comm = (c.tp_comm - backward_wait) / 2;
  c.forward = std::max(c.forward, issue - comm);
  c.backward = std::max(c.backward, backward_issue * issue - comm - backward_wait);
}

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

bool megatron_torch_path(const DeviceContext& cx, const LayerShape& s, std::int64_t heads) {
  if (cx.eager || s.inference)
    return false;
  return megatron_torch_softmax_runs(!cx.megatron_local, s.micro_batch, heads, s.seq);
}

std::vector<CpAttentionTile> cp_attention_tiles(const LayerShape& s,
                                                std::int64_t heads,
                                                std::int64_t kv,
                                                std::int64_t head_dim) {
  std::int64_t t = s.seq;
  std::vector<CpAttentionTile> tiles{{{s.micro_batch, heads, kv, t, t, head_dim}, true, 1}};
  if (s.cp > 1)
    tiles.push_back({{s.micro_batch, heads, kv, t, std::max<std::int64_t>(1, t / 2), head_dim},
                     false,
                     s.cp - 1});
  return tiles;
}

PassTime cp_merge_bytes(const LayerShape& s,
                        std::int64_t heads,
                        std::int64_t kv,
                        std::int64_t head_dim) {
  double later = 0.75 * static_cast<double>(s.cp - 1);  // later steps, at full size
  double tokens = static_cast<double>(s.micro_batch * s.seq);
  double q = tokens * static_cast<double>(heads * head_dim);
  double k = tokens * static_cast<double>(kv * head_dim);
  return {q * (6 + 10 * later + 6), (q + 2 * k) * (4 + 6 * later)};
}

namespace {

// Context parallelism's attention: each rank's tiles (cp_attention_tiles), then the merges of
// their partial outputs.
AttentionForward cp_attention_time(
    Pricer& p, const LayerShape& s, std::int64_t heads, std::int64_t kv, std::int64_t head_dim) {
  AttentionForward out;
  for (const CpAttentionTile& tile : cp_attention_tiles(s, heads, kv, head_dim)) {
    for (std::int64_t i = 0; i < tile.count; ++i) {
      OpEstimate a = p.op("attention", tile.dims, tile.causal);
      out.time += a.time.value;
      out.flops += a.flops;
      out.unequal_tail += a.unequal_tail.value;
      out.backward_beside += a.backward_beside.value;
    }
  }
  PassTime bytes = cp_merge_bytes(s, heads, kv, head_dim);
  double merges = eager_stream_time(p.context(), bytes.forward);
  p.stream(merges, eager_stream_time(p.context(), bytes.backward), 2 * s.cp + 1);
  out.time += merges;
  return out;
}

}  // namespace

// Attention as the framework runs it: one fused kernel, or (older stacks) a batched QK^T,
// the softmax over s x s scores, dropout on them and a batched PV, all through memory.
AttentionForward attention_time(
    Pricer& p, const LayerShape& s, std::int64_t heads, std::int64_t kv, std::int64_t head_dim) {
  if (!s.unfused_attention && s.cp > 1)
    return cp_attention_time(p, s, heads, kv, head_dim);
  if (!s.unfused_attention && s.grouped_decode && s.seq == 1) {
    // One block per sequence and KV head, its group of query heads as the block's rows.
    OpEstimate a = p.op("attention", {s.micro_batch, kv, kv, heads / kv, s.kv_len, head_dim});
    return {a.time.value, a.flops, 0, 0};
  }
  if (!s.unfused_attention) {
    std::int64_t keys = s.kv_len > 0 ? s.kv_len : s.seq;
    OpEstimate a = p.op("attention", {s.micro_batch, heads, kv, s.seq, keys, head_dim}, true);
    return {a.time.value, a.flops, a.unequal_tail.value, a.backward_beside.value};
  }
  std::int64_t batch = s.micro_batch * heads;
  OpEstimate qk = p.plain_op("gemm", {batch, s.seq, s.seq, head_dim});
  double soft = 0;
  const DeviceContext& cx = p.context();
  if (megatron_torch_path(cx, s, heads)) {
    PassTime t = megatron_torch_softmax(cx, batch * s.seq, s.seq);
    p.stream(t.forward, t.backward, megatron_torch_softmax_kernels(cx));
    soft = t.forward;
  } else {
    soft = p.plain_op("softmax", {batch * s.seq, s.seq}).time.value;
  }
  OpEstimate drop = p.plain_op("elementwise", {batch * s.seq * s.seq});
  OpEstimate pv = p.plain_op("gemm", {batch, s.seq, head_dim, s.seq});
  return {qk.time.value + soft + drop.time.value + pv.time.value, qk.flops + pv.flops, 0, 0};
}

}  // namespace yirage::planner
