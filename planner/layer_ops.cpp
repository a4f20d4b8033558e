#include "planner/layer_ops.h"

#include "devices/support/check.h"
#include "planner/workload/eager_traffic.h"
#include "planner/workload/model_size.h"
#include "planner/workload/pricer.h"

#include <algorithm>

namespace yirage::planner {
namespace {

using costmodel::OpEstimate;

// The operation graph below is layer_cost()'s (planner/workload/layer_cost.cpp), listed op by
// op; tests/unit/planner/layer_ops_test.cpp checks that the two add up to the same time.

OpEstimate price(const DeviceContext& cx,
                 const std::string& op,
                 const std::vector<std::int64_t>& dims,
                 bool fused,
                 bool causal,
                 std::string* why) {
  const costmodel::GpuOpInfo* info = costmodel::find_gpu_op(op);
  CHECK(info != nullptr) << op;
  costmodel::OpShape shape{dims, causal};
  auto e = costmodel::estimate_gpu_op(cx.device, cx.dtype, cx.efficiency, *info, shape, fused, why);
  CHECK(e.has_value()) << op << ": " << *why;
  return *e;
}

class OpList {
 public:
  explicit OpList(const DeviceContext& cx) : cx_(cx) {}

  void basic(std::string name,
             const std::string& op,
             std::vector<std::int64_t> dims,
             bool causal = false) {
    std::string why;
    OpEstimate e = price(cx_, op, dims, false, causal, &why);
    LayerOp o;
    o.name = std::move(name);
    o.op = op;
    o.dims = std::move(dims);
    o.estimate = std::move(e);
    ops_.push_back(std::move(o));
  }

  // Memory-bound kernels priced by their bytes (eager_traffic.h): `seconds` of forward.
  void streamed(std::string name,
                const std::string& op,
                std::vector<std::int64_t> dims,
                double seconds,
                std::string note) {
    LayerOp o;
    o.name = std::move(name);
    o.op = op;
    o.dims = std::move(dims);
    o.estimate.op = op;
    o.estimate.time = devices::Seconds{seconds};
    o.estimate.note = std::move(note);
    ops_.push_back(std::move(o));
  }

  const DeviceContext& context() const { return cx_; }

  // Fused when that is possible and faster on this device (and the context fuses).
  void compound(std::string name, const std::string& op, std::vector<std::int64_t> dims) {
    const costmodel::GpuOpInfo* info = costmodel::find_gpu_op(op);
    CHECK(info != nullptr) << op;
    LayerOp o;
    o.name = std::move(name);
    o.op = op;
    o.dims = dims;
    o.compound = true;
    costmodel::OpShape shape{std::move(dims), false};
    o.fused = costmodel::estimate_gpu_op(cx_.device, cx_.dtype, cx_.efficiency, *info, shape, true,
                                         &o.why);
    std::string unused;
    o.unfused = price(cx_, op, shape.dims, false, false, &unused);
    bool fuse = cx_.fuse && o.fused && o.fused->time < o.unfused->time;
    o.estimate = fuse ? *o.fused : *o.unfused;
    ops_.push_back(std::move(o));
  }

  std::vector<LayerOp> take() { return std::move(ops_); }

 private:
  const DeviceContext& cx_;
  std::vector<LayerOp> ops_;
};

void attention(
    OpList& ops, const LayerShape& s, std::int64_t heads, std::int64_t kv, std::int64_t head_dim) {
  if (!s.unfused_attention && s.cp > 1) {
    for (const CpAttentionTile& tile : cp_attention_tiles(s, heads, kv, head_dim)) {
      for (std::int64_t i = 0; i < tile.count; ++i)
        ops.basic(tile.causal ? "attention (own chunks)" : "attention (a ring step)", "attention",
                  tile.dims, tile.causal);
    }
    ops.streamed("context-parallel merges", "elementwise",
                 {s.micro_batch * s.seq * heads * head_dim},
                 eager_stream_time(ops.context(), cp_merge_bytes(s, heads, kv, head_dim).forward),
                 "each ring step's partial output rescaled and summed in fp32");
    return;
  }
  if (!s.unfused_attention) {
    std::int64_t keys = s.kv_len > 0 ? s.kv_len : s.seq;
    ops.basic("attention", "attention", {s.micro_batch, heads, kv, s.seq, keys, head_dim}, true);
    return;
  }
  std::int64_t batch = s.micro_batch * heads;
  ops.basic("attention QK^T", "gemm", {batch, s.seq, s.seq, head_dim});
  if (megatron_torch_path(ops.context(), s, heads)) {
    ops.streamed("attention softmax", "softmax", {batch * s.seq, s.seq},
                 megatron_torch_softmax(ops.context(), batch * s.seq, s.seq).forward,
                 "PyTorch's fp32 path: Megatron-LM's compiled softmax is not built or refuses "
                 "the shape");
  } else {
    ops.basic("attention softmax", "softmax", {batch * s.seq, s.seq});
  }
  ops.basic("attention dropout", "elementwise", {batch * s.seq * s.seq});
  ops.basic("attention PV", "gemm", {batch, s.seq, head_dim, s.seq});
}

void pointwise(OpList& ops,
               const devices::ModelSpec& m,
               const LayerShape& s,
               std::int64_t qkv_out,
               std::int64_t ffn_out) {
  std::int64_t tokens = s.micro_batch * s.seq;
  ops.basic("residual add", "elementwise", {norm_rows(s) * m.hidden});
  ops.basic("residual add", "elementwise", {norm_rows(s) * m.hidden});
  if (m.position == devices::PositionKind::kRope)
    ops.basic("rotary embedding", "elementwise", {tokens * qkv_out});
  if (m.bias == devices::BiasKind::kAll) {
    ops.basic("QKV bias", "elementwise", {tokens * qkv_out});
    ops.basic("bias + GeLU", "elementwise", {tokens * ffn_out});
  }
}

}  // namespace

std::vector<LayerOp> layer_ops(const devices::ModelSpec& m,
                               const LayerShape& s,
                               const DeviceContext& cx) {
  OpList ops(cx);
  std::int64_t t = s.tp;
  std::int64_t tokens = s.micro_batch * s.seq;
  std::int64_t heads = std::max<std::int64_t>(1, m.heads / t);
  std::int64_t kv = std::max<std::int64_t>(1, m.kv_heads / t);
  std::int64_t head_dim = m.mla ? m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim : m.head_dim;
  bool rms = m.norm == devices::NormKind::kRmsNorm;
  std::string norm = rms ? "rmsnorm" : "layernorm";
  std::int64_t qkv_out = qkv_width(m) / t;
  if (rms) {
    ops.compound("norm + QKV projection", "rmsnorm_linear", {tokens, m.hidden, qkv_out});
  } else {
    ops.basic("pre-attention norm", norm, {norm_rows(s), m.hidden});
    ops.basic("QKV projection", "gemm", {tokens, qkv_out, m.hidden});
  }
  attention(ops, s, heads, kv, head_dim);
  ops.basic("output projection", "gemm", {tokens, m.hidden, attention_out_width(m) / t});
  ops.basic("pre-MLP norm", norm, {norm_rows(s), m.hidden});
  std::int64_t ffn = s.moe_layer ? m.moe->expert_ffn : m.ffn;
  std::int64_t rows = s.moe_layer ? tokens * (m.moe->top_k + m.moe->shared_experts) : tokens;
  std::string mlp = s.moe_layer ? "experts' " : "";
  if (m.ffn_kind == devices::FfnKind::kGated) {
    ops.compound(mlp + "gated MLP", "gated_mlp", {rows, m.hidden, ffn / t});
  } else {
    ops.basic(mlp + "MLP up", "gemm", {rows, ffn / t, m.hidden});
    ops.basic(mlp + "MLP down", "gemm", {rows, m.hidden, ffn / t});
  }
  pointwise(ops, m, s, qkv_out, rows / tokens * ffn / t);
  return ops.take();
}

LayerShape training_layer_shape(const devices::TaskSpec& t, const Layout& l) {
  bool all_moe = t.model.moe && t.model.moe->dense_layers == 0;
  LayerShape s{l.micro_batch, t.sequence_length / l.cp, l.tp, all_moe,
               t.attention == devices::AttentionKernel::kUnfused};
  s.cp = l.cp;
  s.sp = l.sp;
  s.tp_overlap = l.tp_overlap;
  return s;
}

LayerShape inference_layer_shape(const devices::TaskSpec& t, const InferLayout& l) {
  bool all_moe = t.model.moe && t.model.moe->dense_layers == 0;
  bool unfused = t.attention == devices::AttentionKernel::kUnfused;
  if (t.mode == devices::Mode::kPrefill)
    return {l.batch, t.sequence_length, l.tp, all_moe, unfused, t.sequence_length, true};
  std::int64_t keys = t.mode == devices::Mode::kServe && t.serve
                          ? t.serve->prompt_length + t.serve->output_length / 2
                      : t.mode == devices::Mode::kGenerate ? t.sequence_length + t.output_length / 2
                                                           : t.sequence_length;
  return {l.batch, 1, l.tp, all_moe, unfused, keys, true};
}

DeviceContext op_context(const devices::DeviceSpec& d,
                         const devices::TaskSpec& t,
                         const costmodel::CalibrationSet& calibrations,
                         const LayerShape& s) {
  DeviceContext cx{d, {}, t.precision, std::nullopt};
  if (const costmodel::GpuEfficiency* e = calibrations.find_gpu(d.name))
    cx.efficiency = *e;
  cx.efficiency.in_graph = s.inference && s.seq == 1;
  // As the plans price them: a training step runs its framework's kernels unfused
  // (train_stage.cpp's device_context), an inference engine fuses where faster.
  cx.fuse = s.inference && t.framework != devices::Framework::kPytorch;
  return cx;
}

double arithmetic_intensity(const costmodel::OpEstimate& e) {
  return e.hbm_bytes > 0 ? e.flops / e.hbm_bytes : 0;
}

double achieved_rate(const costmodel::OpEstimate& e) {
  return e.time.value > 0 ? e.flops / e.time.value : 0;
}

double roofline_bound(const devices::DeviceSpec& d, devices::DType t, double intensity) {
  std::optional<devices::FlopsPerSec> peak = d.peak_rate(t);
  if (!peak)
    return 0;
  return std::min(peak->value, intensity * d.memory_bandwidth.value.value);
}

}  // namespace yirage::planner
