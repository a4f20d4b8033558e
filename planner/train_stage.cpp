#include "planner/train_stage.h"

#include "costmodel/collective.h"
#include "costmodel/validation.h"
#include "devices/support/check.h"
#include "planner/workload/eager_traffic.h"
#include "planner/workload/memory_floor.h"
#include "planner/workload/model_size.h"

#include <algorithm>

namespace yirage::planner {
namespace {

using devices::ModelSpec;

const devices::NodeGroup& group(const TrainContext& cx) {
  return cx.cluster.groups.front();
}

double f(std::int64_t v) {
  return static_cast<double>(v);
}

// Parameters of one layer and of the embedding and head, from the model's counts.
struct Params {
  double layer = 0;   // per layer, averaged over the layers
  double routed = 0;  // of which routed experts (MoE), averaged over the layers
  double embedding = 0;
  double head = 0;
};

Params params(const ModelSpec& m) {
  ParameterCount p = count_parameters(m);
  Params out;
  out.embedding = p.embedding;
  out.head = m.tied_embeddings ? p.embedding : p.head;
  out.layer = (p.total - p.embedding - p.head) / f(m.layers);
  if (m.moe && m.moe->experts > m.moe->top_k) {
    // ffn_total - ffn_active = MoE layers x (experts - top_k) x one expert
    out.routed = (p.ffn_total - p.ffn_active) * f(m.moe->experts) /
                 f(m.moe->experts - m.moe->top_k) / f(m.layers);
  }
  return out;
}

// Activation bytes one layer keeps per micro-batch for backward, per device. Korthikanti
// et al. 2022 (§4.1): fused (flash) attention keeps no s x s scores, unfused attention keeps
// them (`unfused_attention`); GQA's smaller K and V, and the FFN width of the model: attention 7sbh
// + 4sbh kv/heads, FFN 2sbh + (gated ? 6 : 4) sbF + sbh, norms 4sbh; divided by t with sequence
// parallelism; for 2-byte activations, scaled to the task's precision.
double layer_activations(const ModelSpec& m,
                         std::int64_t seq,
                         std::int64_t mb,
                         std::int64_t t,
                         Recompute r,
                         double bytes,
                         bool sp,
                         bool unfused_attention) {
  double sbh = f(seq) * f(mb) * f(m.hidden);
  double scale = bytes / 2.0 / f(t);
  // Without sequence parallelism the norms (4sbh), dropouts (2sbh) and the inputs of the
  // attention and MLP blocks (4sbh) are whole on every tp rank: 10sbh not divided by t.
  double whole = t > 1 && !sp ? 10 * sbh * bytes / 2.0 * (1 - 1.0 / f(t)) : 0;
  if (r == Recompute::kFull)
    return 2 * sbh * (t > 1 && !sp ? bytes / 2.0 : scale);  // the layer's input only
  double ffn = f(m.moe ? m.moe->expert_ffn * (m.moe->top_k + m.moe->shared_experts) : m.ffn);
  double attn = 7 * sbh + 4 * sbh * f(m.kv_heads) / f(m.heads);
  double mlp = 2 * sbh + (m.ffn_kind == devices::FfnKind::kGated ? 6 : 4) * f(seq * mb) * ffn + sbh;
  // Unfused attention keeps its s x s scores, their softmax (2-byte each) and the dropout's
  // 1-byte mask: 5 a s^2 b (Korthikanti et al. 2022, §4.1), what selective recomputation drops.
  double scores = unfused_attention && r == Recompute::kNone
                      ? (4 * bytes / 2.0 + 1) * f(std::max<std::int64_t>(1, m.heads / t)) * f(seq) *
                            f(seq) * f(mb)
                      : 0;
  return (attn + mlp + 4 * sbh) * scale + whole + scores;
}

costmodel::CommGroup comm_group(const TrainContext& cx, std::int64_t ranks, std::int64_t per_node) {
  costmodel::CommGroupResult r = costmodel::make_comm_group(cx.cluster, ranks, per_node);
  CHECK(r.group.has_value()) << r.reason;
  // Eager calls' device time: the step's host timeline prices their issue.
  costmodel::apply_calibration(*r.group, cx.calibrations, costmodel::Launch::kEager);
  r.group->op_issue_s.fill(0);
  return *r.group;
}

// `ranks` ranks spaced `stride` apart: a node holds devices_per_node / stride of them when
// that divides, and in general they spread evenly over the nodes (where a stride spans more
// than a node, one a node would need as many nodes as ranks).
costmodel::CommGroup spaced_group(const TrainContext& cx, std::int64_t ranks, std::int64_t stride) {
  std::int64_t nodes = cx.cluster.total_nodes();
  std::int64_t per_node = std::max<std::int64_t>(1, group(cx).devices_per_node / stride);
  per_node = std::max(per_node, (ranks + nodes - 1) / nodes);
  return comm_group(cx, ranks, std::min(per_node, ranks));
}

// The ep ranks that hold one set of experts' shards: spaced tp x pp apart like the
// data-parallel group.
costmodel::CommGroup ep_group(const TrainContext& cx, const Layout& l) {
  return spaced_group(cx, l.ep, l.tp * l.pp);
}

// The cp ranks of one context-parallel ring sit next to the tp ranks (Megatron-LM's order
// tp, cp, dp, pp): a node holds devices_per_node / tp of them.
costmodel::CommGroup cp_group(const TrainContext& cx, const Layout& l) {
  return spaced_group(cx, l.cp, l.tp);
}

}  // namespace

// The ranks of one data-parallel group (with context parallelism, the dp x cp ranks that
// hold the same weights) are spaced tp x pp apart: a node holds devices_per_node / (tp x
// pp) of them when that divides, and in general they spread evenly over the nodes.
costmodel::CommGroup dp_group(const TrainContext& cx, const Layout& l) {
  return spaced_group(cx, l.dp * l.cp, l.tp * l.pp);
}

namespace {

const LayerCost& layer(const TrainContext& cx,
                       const LayerShape& shape,
                       const DeviceContext& dcx,
                       LayerCost* scratch) {
  if (cx.layer_cache)
    return cx.layer_cache->get(cx.task.model, shape, dcx);
  *scratch = layer_cost_at_duty(cx.task.model, shape, dcx);
  return *scratch;
}

}  // namespace

const LayerCost& LayerCostCache::get(const ModelSpec& m,
                                     const LayerShape& s,
                                     const DeviceContext& dcx) {
  auto key = std::make_tuple(s.tp, s.cp, s.micro_batch,
                             (s.moe_layer ? 1 : 0) + (s.sp ? 0 : 4) + (dcx.megatron_local ? 8 : 0) +
                                 (s.tp_overlap ? 16 : 0));
  auto it = costs_.find(key);
  if (it == costs_.end())
    it = costs_.emplace(key, layer_cost_at_duty(m, s, dcx)).first;
  return it->second;
}

const LayerCost& LayerCostCache::head(const ModelSpec& m,
                                      const LayerShape& s,
                                      const DeviceContext& dcx) {
  auto key =
      std::make_tuple(s.tp, s.cp, s.micro_batch, 2 + (s.sp ? 0 : 4) + (dcx.megatron_local ? 8 : 0));
  auto it = costs_.find(key);
  if (it == costs_.end())
    it = costs_.emplace(key, head_cost_at_duty(m, s, dcx)).first;
  return it->second;
}

LayerCost stage_layer_cost(const TrainContext& cx, const LayerShape& s, const DeviceContext& dcx) {
  LayerCost scratch;
  return layer(cx, s, dcx, &scratch);
}

LayerCost typical_layer_cost(const TrainContext& cx, const Layout& l, const DeviceContext& dcx) {
  bool all_moe = cx.task.model.moe && cx.task.model.moe->dense_layers == 0;
  LayerShape shape{l.micro_batch, cx.task.sequence_length / l.cp, l.tp, all_moe,
                   cx.task.attention == devices::AttentionKernel::kUnfused};
  shape.cp = l.cp;
  shape.sp = l.sp;
  shape.tp_overlap = l.tp_overlap;
  return stage_layer_cost(cx, shape, dcx);
}

StageSpan even_span(const ModelSpec& m, const Layout& l, std::int64_t stage) {
  auto layers = [&](std::int64_t s) {
    return m.layers / l.pp + (s < m.layers % l.pp ? 1 : 0);
  };
  StageSpan span{stage, l.pp, 0, layers(stage)};
  for (std::int64_t s = 0; s < stage; ++s)
    span.first_layer += layers(s);
  return span;
}

double stage_parameters(const ModelSpec& m, const StageSpan& s) {
  Params p = params(m);
  // Tied, the last stage keeps its own copy of the embedding as its head (Megatron-LM
  // synchronises the two), unless it is the first too: then the head is the embedding.
  bool shared = m.tied_embeddings && s.first();
  return f(s.layers) * p.layer + (s.first() ? p.embedding : 0) + (s.last() && !shared ? p.head : 0);
}

double stage_routed_parameters(const ModelSpec& m, const StageSpan& s) {
  return f(s.layers) * params(m).routed;
}

// The last stage's logits. Megatron-LM's loss holds the rank's 16-bit shard beside its fp32
// copy, which it turns in place into the softmax it keeps for the backward, where the fp32
// gradient meets its 16-bit cast (2 + 4 B either way). Eager PyTorch keeps the bf16 logits,
// their fp32 copy, the log-softmax and its gradient at once (2 + 4 + 4 + 4 B), gathered whole
// on every tensor-parallel rank (no loss parallelism) beside the rank's bf16 shard; a pipeline
// schedule keeps every micro-batch's bf16 output until the step ends.
double logits_bytes(const TrainContext& cx,
                    const Layout& l,
                    std::int64_t seq,
                    std::int64_t micro_batches) {
  double tokens = f(seq * l.micro_batch);
  double vocab = f(cx.task.model.vocab);
  if (cx.task.framework != devices::Framework::kPytorch)
    return tokens * vocab / f(l.tp) * 6;
  double kept = l.pp > 1 ? 2 * f(micro_batches - 1) : 0;
  return tokens * vocab * (14 + kept + (l.tp > 1 ? 2 / f(l.tp) : 0));
}

// Eager PyTorch's ZeRO 2/3 is FSDP2 (bench/run_plan.py): parameters in bf16 without autocast.
bool eager_fsdp(const Layout& l) {
  return l.zero >= 2 && l.dp * l.cp > 1;
}

// Model state of eager PyTorch (bench/run_plan.py's framework) per device, at the two moments
// that can be its peak: as the last micro-batch's backward starts (`start`, with the
// activations added by the caller) and as it ends (every gradient, no activations). Under
// autocast (ZeRO 0/1): fp32 weights (the optimizer's master copy) with a bf16 copy of each held
// from its forward to its backward (under full recomputation only the layer being recomputed
// holds its copies, and the head), fp32 gradients, Adam's two moments; DDP (dp > 1) keeps its
// fp32 gradient buckets beside the gradients. ZeRO 2/3 is FSDP2, which shards every fp32
// parameter, gradient and moment over dp x cp and gathers bf16 copies: all of them from
// forward to backward for ZeRO 2 (no reshard after forward), one layer's at a time for ZeRO 3.
struct StateMoments {
  MemoryUse start;
  MemoryUse end;
};

// A stage's parameters per device outside its layers (embedding, head, final norm: FSDP2's
// root group) and per layer, of the `held` in all.
struct StageGroups {
  double outside = 0;
  double layer = 0;
};

StageGroups stage_groups(const TrainContext& cx, const Layout& l, const StageSpan& s, double held) {
  StageGroups g;
  g.outside = stage_parameters(cx.task.model, StageSpan{s.index, s.stages, 0, 0}) / f(l.tp);
  g.layer = s.layers > 0 ? (held - g.outside) / f(s.layers) : 0;
  return g;
}

// Model state of Megatron-LM per device at the same two moments. Without Transformer Engine
// or Apex its optimizer step runs torch's foreach AdamW, which holds the square root of the
// second moment (fp32) of every parameter it updates beside the state (measured: a one-GPU
// step's allocated peak stays the same from 1,024 to 4,096 tokens,
// H200/train_steps_megatron_host.csv). `dense` and `experts`: the parameters a device holds.
StateMoments megatron_state(const TrainContext& cx, const Layout& l, double dense, double experts) {
  ParameterBytes per = training_parameter_bytes(cx.task);
  // ZeRO shards over every rank holding the same weights (dp x cp of them), and the routed
  // experts' state over the dp / ep ranks that hold the same experts.
  double dpc = f(l.dp * l.cp);
  double edp = dpc / f(l.ep);
  auto held = [&](double bytes, int sharded_from) {
    return dense * bytes / (l.zero >= sharded_from ? dpc : 1) +
           experts * bytes / (l.zero >= sharded_from ? edp : 1);
  };
  StateMoments e;
  e.start.weights = held(per.weights, 3);
  e.start.gradients = held(per.gradients, 2);
  e.start.optimizer = held(per.optimizer, 1);
  e.end = e.start;
  if (!l.te && cx.task.optimizer == devices::Optimizer::kAdam)
    e.end.optimizer += held(4, 1);
  return e;
}

StateMoments eager_state(const TrainContext& cx,
                         const Layout& l,
                         const StageSpan& s,
                         double held,
                         std::int64_t micro_batches) {
  const ModelSpec& m = cx.task.model;
  double adam = cx.task.optimizer == devices::Optimizer::kAdam ? 8 : 4;
  double dpc = f(l.dp * l.cp);
  auto [outside, layer] = stage_groups(cx, l, s, held);
  // As the backward starts, gradients are there only when earlier micro-batches accumulated
  // them; else the head's comes first, beside the logits. DDP (gradient_as_bucket_view) adds
  // its fp32 buckets twice: measured alone, on one GPU (the fake process group, or NCCL with
  // one rank), its peak is the plain step's and one set, on both micro-batch counts
  // (H200/ddp_alone.csv); every step measured between two ranks, one set more
  // (train_steps*.csv: 60.11 and 63.49 GB against 52.41 and 55.80): with a peer, the set its
  // first step rebuilt is still held as the second step's forward allocates the new one (not
  // traced; the likely cause).
  bool accumulated = micro_batches > 1;
  StateMoments e;
  if (eager_fsdp(l)) {
    e.start.weights = held * 4 / dpc + (l.zero >= 3 ? layer : held) * 2;
    e.start.gradients = accumulated ? held * 4 / dpc : 0;
    e.start.optimizer = held * adam / dpc;
    e.end = {held * 4 / dpc, held * 4 / dpc, e.start.optimizer, 0, 0, 0};
    return e;
  }
  bool ddp = dpc > 1;
  double copies = l.recompute == Recompute::kFull ? layer + outside : held;
  double buckets = ddp ? 2 * held * 4 : 0;
  e.start.weights = held * 4 + copies * 2;
  double head = s.last() ? params(m).head / f(l.tp) * 4 : 0;
  e.start.gradients = (accumulated ? held * 4 : head) + buckets;
  e.start.optimizer = held * adam / (l.zero >= 1 ? dpc : 1);
  e.end = {held * 4, ddp ? buckets : held * 4, e.start.optimizer, 0, 0, 0};
  return e;
}

// Measured on one H200 (H200/memory_probe/, call e): on the last rank of every pipelined layout
// probed, the reserve's peak is this segment, taken in the first step, before the optimizer's
// state exists.
double merged_outputs_segment(const devices::TaskSpec& t, const Layout& l) {
  if (t.framework != devices::Framework::kPytorch || l.pp <= 1 || l.dp * l.micro_batch <= 0)
    return 0;
  std::int64_t micro_batches = t.global_batch / (l.dp * l.micro_batch);
  double logits =
      f(t.sequence_length / std::max<std::int64_t>(1, l.cp) * l.micro_batch) * f(t.model.vocab);
  double merged = f(micro_batches) * logits * devices::dtype_bytes(t.precision);
  return merged > 4 * logits ? merged : 0;
}

double gathered_logits_cache(const devices::TaskSpec& t, const Layout& l) {
  if (t.framework != devices::Framework::kPytorch || l.tp <= 1)
    return 0;
  return 2 * f(t.sequence_length * l.micro_batch) * f(t.model.vocab) *
         devices::dtype_bytes(t.precision);
}

// Beyond the live peak, eager PyTorch's caching allocator keeps blocks the compute stream
// freed but could not reuse (`allocator_cache` of the peak, fitted on measured steps; and the
// gathered logits' copies under tensor parallelism, gathered_logits_cache), and
// FSDP2's all-gather and reduce-scatter streams keep pools the compute stream never reuses.
// Measured on two H200s (bench/memory_layouts.sh, data/benchmarks/H200x2/memory/): the
// all-gather copy-in stream holds two buffers of the largest group gathered in bf16 (the root:
// embedding, head and final norm) and five of a layer's; the reduce-scatter stream the largest
// group's fp32 and bf16 shards.
double allocator_reserve(
    const TrainContext& cx, const Layout& l, const StageSpan& s, double held, double live) {
  double reserve = s.last() ? gathered_logits_cache(cx.task, l) : 0;
  if (const costmodel::GpuEfficiency* e =
          cx.calibrations.find_gpu(cx.cluster.device(group(cx)).name))
    reserve += e->allocator_cache * live;
  if (eager_fsdp(l)) {
    auto [outside, layer] = stage_groups(cx, l, s, held);
    double largest = std::max(outside, layer);
    reserve += 2 * 2 * largest + 5 * 2 * layer + (4 + 2) * largest / f(l.dp * l.cp);
  }
  return reserve;
}

namespace {

// torch.distributed.pipelining allocates, for each of a rank's stages (vpp of them) and every
// micro-batch, a buffer to receive the stage's input (all but the pipeline's first stage) and
// one for the gradient of its output (all but the last), and keeps them for the whole run
// (PipelineStage's forward and backward infrastructure): one micro-batch's residual stream
// each, in the activations' dtype, the rank's sequence shard under sequence parallelism.
double pipeline_recv_buffers(const TrainContext& cx,
                             const Layout& l,
                             const StageSpan& s,
                             std::int64_t seq,
                             std::int64_t micro_batches) {
  if (cx.task.framework != devices::Framework::kPytorch || s.stages <= 1)
    return 0;
  double buffers =
      2 * f(std::max<std::int64_t>(1, l.vpp)) - (s.first() ? 1 : 0) - (s.last() ? 1 : 0);
  double tokens = f(seq * l.micro_batch) / (l.tp > 1 && l.sp ? f(l.tp) : 1);
  return buffers * f(micro_batches) * tokens * f(cx.task.model.hidden) *
         devices::dtype_bytes(cx.task.precision);
}

// The last stage's kept outputs and their merge at the end of a step (merged_outputs_segment):
// the outputs, one per micro-batch, and the merged copy, live at once.
struct PipelineMerge {
  double kept = 0;
  double merged = 0;
  double segment = 0;
};

PipelineMerge pipeline_merge(const TrainContext& cx,
                             const Layout& l,
                             const StageSpan& s,
                             std::int64_t seq,
                             std::int64_t micro_batches) {
  if (cx.task.framework != devices::Framework::kPytorch || s.stages <= 1 || !s.last())
    return {};
  double out = f(micro_batches) * f(seq * l.micro_batch) * f(cx.task.model.vocab) *
               devices::dtype_bytes(cx.task.precision);
  return {out, out, merged_outputs_segment(cx.task, l)};
}

}  // namespace

namespace {

// What one layer's unfused pieces keep beyond layer_activations, per micro-batch: eager
// PyTorch's two RMSNorms computed in fp32 under autocast keep their fp32 input and normalised
// value (8 B per element beyond the 2 B counted there); Megatron-Core's own SwiGLU (te=off)
// runs SiLU and the product apart, and the product keeps SiLU's output (2 B per element of the
// FFN width); Megatron-LM's unfused attention on PyTorch's softmax path keeps the fp32
// probabilities where the compiled kernel keeps 16-bit ones. Nothing under full recomputation.
double unfused_activations(const TrainContext& cx, const Layout& l, std::int64_t seq) {
  const ModelSpec& m = cx.task.model;
  bool eager = cx.task.framework == devices::Framework::kPytorch;
  if (l.recompute == Recompute::kFull)
    return 0;
  if (eager) {
    return eager_fsdp(l) ? 0 : 2 * 8 * f(seq * l.micro_batch * m.hidden) / (l.tp > 1 ? f(l.tp) : 1);
  }
  double bytes = devices::dtype_bytes(cx.task.precision);
  double kept = 0;
  std::int64_t heads = std::max<std::int64_t>(1, m.heads / l.tp);
  if (cx.task.attention == devices::AttentionKernel::kUnfused && l.recompute == Recompute::kNone &&
      megatron_torch_softmax_runs(l.te, l.micro_batch, heads, seq)) {
    kept += (4 - bytes) * f(heads) * f(seq) * f(seq) * f(l.micro_batch);
  }
  if (l.te || m.ffn_kind != devices::FfnKind::kGated)
    return kept;
  double ffn = f(m.moe ? m.moe->expert_ffn * (m.moe->top_k + m.moe->shared_experts) : m.ffn);
  return kept + f(seq * l.micro_batch) * ffn / f(l.tp) * bytes;
}

// The larger of the loss phase's peak (`e.start`, with the activations) and the step's end
// (`e.end`: every gradient; on the last stage, the logits the loop still holds, or a
// pipeline's kept outputs and their merge), with what the caching allocator reserves beside it.
MemoryUse with_step_end(const TrainContext& cx,
                        const Layout& l,
                        const StageSpan& s,
                        double held,
                        StateMoments e,
                        std::int64_t micro_batches) {
  bool eager = cx.task.framework == devices::Framework::kPytorch;
  std::int64_t seq = cx.task.sequence_length / l.cp;
  const MemoryUse& loss_phase = e.start;
  MemoryUse& end = e.end;
  if (eager && s.last() && s.stages == 1) {
    // bench/run_plan.py's loop holds the last micro-batch's logits (16-bit, whole under tensor
    // parallelism) through its backward, to the gradient of the embedding, the step's last:
    // a 70B-width model on one H200 ran out of memory there, 0.58 GB over the state alone.
    end.activations +=
        f(seq * l.micro_batch) * f(cx.task.model.vocab) * devices::dtype_bytes(cx.task.precision);
  }
  MemoryUse u = end.total() > loss_phase.total() ? end : loss_phase;
  PipelineMerge merge = pipeline_merge(cx, l, s, seq, micro_batches);
  MemoryUse merging = end;
  merging.activations += merge.kept + merge.merged;
  if (merging.total() > u.total())
    u = merging;
  if (eager) {
    u.reserve = allocator_reserve(cx, l, s, held, u.total());
    if (merge.segment > 0) {
      // The first step's merge, before the optimizer's state exists: the loss phase's reserve
      // with one more segment, the merged outputs'.
      double before = loss_phase.total() - loss_phase.optimizer;
      double first = allocator_reserve(cx, l, s, held, before) + before + merge.segment;
      u.reserve = std::max(u.reserve, first - u.total());
    }
  } else if (const costmodel::GpuEfficiency* g =
                 cx.calibrations.find_gpu(cx.cluster.device(group(cx)).name)) {
    // Megatron-LM runs on the same caching allocator, its cache fitted on its own steps.
    u.reserve = g->megatron_allocator_cache * u.total();
  }
  return u;
}

}  // namespace

MemoryUse stage_memory(const TrainContext& cx,
                       const Layout& l,
                       const StageSpan& s,
                       std::int64_t micro_batches) {
  const ModelSpec& m = cx.task.model;
  double b = devices::dtype_bytes(cx.task.precision);
  double opt_bytes = training_parameter_bytes(cx.task).optimizer;
  // Routed experts are split over ep ranks.
  double routed = stage_routed_parameters(m, s);
  double dense = (stage_parameters(m, s) - routed) / f(l.tp);
  double experts = routed / f(l.tp * l.ep);
  bool eager = cx.task.framework == devices::Framework::kPytorch;
  StateMoments e = eager ? eager_state(cx, l, s, dense + experts, micro_batches)
                         : megatron_state(cx, l, dense, experts);
  MemoryUse u = e.start;
  if (l.offload) {
    // The state (and an fp32 copy of the gradients) lives in host memory instead.
    u.host = u.optimizer + (u.optimizer / opt_bytes) * 4;
    u.optimizer = 0;
    e.end.host = u.host;
    e.end.optimizer = 0;
  }
  // 1F1B keeps up to pp - stage micro-batches in flight on a stage (Narayanan et al. 2021).
  // Interleaved, a device warms up with 2 (pp - stage - 1) + (vpp - 1) pp + 1 chunks of
  // layers / (pp vpp) layers each (Megatron-LM's schedule): for the first stage, pp + (pp -
  // 1) / vpp micro-batches of its layers (Korthikanti et al. 2022, §4.2.3).
  std::int64_t ahead = s.stages - s.index;
  double in_flight =
      l.vpp > 1
          ? std::min(f(2 * (ahead - 1) + (l.vpp - 1) * s.stages + 1) / f(l.vpp), f(micro_batches))
          : f(std::min(ahead, micro_batches));
  std::int64_t seq = cx.task.sequence_length / l.cp;  // this rank's part of each sequence
  bool unfused = cx.task.attention == devices::AttentionKernel::kUnfused;
  double per_layer = layer_activations(m, seq, l.micro_batch, l.tp, l.recompute, b, l.sp, unfused);
  u.activations = per_layer * f(s.layers) * in_flight;
  double recomputed = l.recompute == Recompute::kFull
                          ? layer_activations(m, seq, l.micro_batch, l.tp, Recompute::kNone, b,
                                              l.sp, unfused)  // one layer at a time
                          : 0;
  u.activations += unfused_activations(cx, l, seq) * f(s.layers) * in_flight;
  double logits = s.last() ? logits_bytes(cx, l, seq, micro_batches) : 0;
  if (eager && s.last() && recomputed > 0 && l.tp == 1) {
    // The loss's backward has freed the fp32 logits, their log-softmax and its gradient
    // (12 B per logit) before the last layer is recomputed: that layer and the loss are not
    // live at once (measured on one GPU: H200/loss_memory.csv). With tensor parallelism the
    // one measured row (tp=4) is nearer the sum (4% over, against 6% under); how long the
    // gathered logits live there is not traced.
    double freed = 12 * f(seq * l.micro_batch) * f(m.vocab);
    u.activations += std::max(logits, logits - freed + recomputed);
  } else {
    u.activations += recomputed + logits;
  }
  double recv = pipeline_recv_buffers(cx, l, s, seq, micro_batches);
  u.activations += recv;
  e.end.activations += recv;
  u = with_step_end(cx, l, s, dense + experts, {u, e.end}, micro_batches);
  u.capacity = cx.cluster.device(group(cx)).memory_capacity.value.value * (1 - cx.memory_headroom);
  return u;
}

DeviceContext device_context(const TrainContext& cx, const Layout& l) {
  const devices::DeviceSpec& d = cx.cluster.device(group(cx));
  DeviceContext dcx{d, {}, cx.task.precision, std::nullopt};
  if (const costmodel::GpuEfficiency* e = cx.calibrations.find_gpu(d.name))
    dcx.efficiency = costmodel::sustained(*e);  // a step's GEMMs run back to back
  dcx.eager = cx.task.framework == devices::Framework::kPytorch;
  dcx.megatron_local = !dcx.eager && !l.te;
  dcx.fused_norms = dcx.eager && eager_fsdp(l);
  // A training step runs its framework's kernels: Transformer Engine's (or PyTorch's) norm,
  // GEMM and activation apart, in 16 bits as in NeMo's and Megatron-LM's BF16 runs; yirage's
  // fused kernels are not priced into it (the plan's fusions line says what they would save).
  dcx.fuse = false;
  if (l.tp > 1)
    dcx.tp_group = comm_group(cx, l.tp, std::min(l.tp, group(cx).devices_per_node));
  return dcx;
}

double pipeline_sync(const TrainContext& cx, const Layout& l, const DeviceContext& dcx) {
  if (l.pp <= 1 || l.vpp > 1 || cx.task.framework != devices::Framework::kMegatron)
    return 0;
  return dcx.efficiency.megatron_pp_sync.value;
}

double pp_send_time(const TrainContext& cx, const Layout& l, bool same_node) {
  costmodel::CommGroup g = comm_group(cx, 2, same_node ? 2 : 1);
  double bytes = f(cx.task.sequence_length / l.cp * l.micro_batch * cx.task.model.hidden) *
                 devices::dtype_bytes(cx.task.precision) / f(l.tp);
  return costmodel::estimate_collective(g, costmodel::Collective::kSendRecv, bytes).latency().value;
}

double megatron_gradient_accumulation(const DeviceContext& dcx,
                                      devices::DType precision,
                                      double parameters,
                                      std::int64_t micro_batches) {
  if (precision == devices::DType::kFp16) {
    // fp16 (2021's Megatron-LM, Megatron-DeepSpeed's engine): from the second micro-batch on,
    // autograd adds each 16-bit weight gradient into the sum so far: 2 + 2 + 2 B.
    double later = f(std::max<std::int64_t>(0, micro_batches - 1)) /
                   f(std::max<std::int64_t>(1, micro_batches));
    return eager_stream_time(dcx, 6 * parameters * later);
  }
  // Otherwise Megatron-LM accumulates in fp32 (its default for bf16): in every micro-batch its
  // DDP hook adds the 16-bit gradient into the fp32 main gradient (eager_accumulate_time).
  return eager_accumulate_time(dcx, parameters);
}

StageTimes stage_times(const TrainContext& cx,
                       const Layout& l,
                       const StageSpan& s,
                       const DeviceContext& dcx,
                       double send_in,
                       double send_out) {
  const ModelSpec& m = cx.task.model;
  StageTimes st;
  std::int64_t dense =
      m.moe ? std::clamp<std::int64_t>(m.moe->dense_layers - s.first_layer, 0, s.layers) : s.layers;
  LayerCost scratch;
  for (int kind = 0; kind < 2; ++kind) {
    std::int64_t count = kind == 0 ? dense : s.layers - dense;
    if (count == 0)
      continue;
    LayerShape shape{l.micro_batch, cx.task.sequence_length / l.cp, l.tp, kind == 1,
                     cx.task.attention == devices::AttentionKernel::kUnfused};
    shape.cp = l.cp;
    shape.sp = l.sp;
    shape.tp_overlap = l.tp_overlap;
    const LayerCost& c = layer(cx, shape, dcx, &scratch);
    // Full recomputation runs the forward again up to its tail (LayerCost::forward_tail),
    // with its tensor-parallel collectives (half of the layer's forward-and-backward total).
    double redo = l.recompute == Recompute::kFull        ? c.forward - c.forward_tail.total()
                  : l.recompute == Recompute::kSelective ? c.attention_forward
                                                         : 0;
    st.compute += f(count) * (c.forward + c.backward + redo);
    st.forward += f(count) * c.forward;
    st.backward += f(count) * c.backward;
    st.host_forward += f(count) * c.issue;
    st.kernels.add(c.forward_kernels, f(count));
    st.kernels.add(c.backward_kernels, f(count));
    if (l.recompute == Recompute::kFull) {
      st.kernels.add(c.forward_kernels, f(count));
      st.kernels.add(c.forward_tail, -f(count));
    } else if (l.recompute == Recompute::kSelective) {
      st.kernels.attention += f(count) * c.attention_forward;
    }
    st.tp += f(count) * (l.recompute == Recompute::kFull ? 1.5 * c.tp_comm - c.tp_tail : c.tp_comm);
    if (kind == 1 && l.ep > 1) {
      // Expert parallelism: each MoE layer dispatches its tokens' top-k copies to the
      // experts' ranks and combines them back, all-to-all, in forward and again in backward
      // (and once more when fully recomputed); with sequence parallelism a rank holds
      // mb x seq / tp tokens.
      double bytes = f(l.micro_batch * cx.task.sequence_length / l.cp / l.tp) * f(m.moe->top_k) *
                     f(m.hidden) * devices::dtype_bytes(cx.task.precision);
      double a2a =
          costmodel::estimate_collective(ep_group(cx, l), costmodel::Collective::kAllToAll, bytes)
              .latency()
              .value;
      st.tp += f(count) * a2a * (l.recompute == Recompute::kFull ? 6 : 4);
    }
    if (l.cp > 1) {
      // Context parallelism: every rank needs the keys and values of the whole sequence,
      // passed around the cp ring while attention runs on the blocks already there
      // (forward), and passed again with their gradients in backward (twice the volume);
      // what the attention does not cover is exposed.
      double kv = 2 * f(l.micro_batch * cx.task.sequence_length) *
                  f(std::max<std::int64_t>(1, m.kv_heads / l.tp) * m.head_dim) *
                  devices::dtype_bytes(cx.task.precision);
      double ring =
          costmodel::estimate_collective(cp_group(cx, l), costmodel::Collective::kAllGather, kv)
              .latency()
              .value;
      double attn_backward = c.backward * c.attention_forward / c.forward;
      double exposed =
          std::max(0.0, ring - c.attention_forward) + std::max(0.0, 2 * ring - attn_backward) +
          (l.recompute == Recompute::kFull ? std::max(0.0, ring - c.attention_forward) : 0);
      st.tp += f(count) * exposed;
    }
    st.flops += f(count) * 3 * c.flops_forward;
    st.hw_flops +=
        f(count) * (3 * c.flops_forward + (redo > 0 ? redo / c.forward : 0) * c.flops_forward);
  }
  if (s.last()) {
    LayerShape shape{l.micro_batch, cx.task.sequence_length / l.cp, l.tp, false};
    shape.cp = l.cp;
    shape.sp = l.sp;
    shape.tp_overlap = l.tp_overlap;
    LayerCost h =
        cx.layer_cache ? cx.layer_cache->head(m, shape, dcx) : head_cost_at_duty(m, shape, dcx);
    st.compute += h.forward + h.backward;
    st.tp += h.tp_comm;
    st.forward += h.forward;
    st.backward += h.backward;
    st.host_forward += h.issue;
    st.kernels.add(h.forward_kernels);
    st.kernels.add(h.backward_kernels);
    st.flops += 3 * h.flops_forward;
    st.hw_flops += 3 * h.flops_forward;
  }
  // Per micro-batch, the traffic of the weights this device holds (its tensor-parallel shard,
  // 1 / ep of the routed experts): eager PyTorch casts each to bf16 in every forward (again
  // when fully recomputed) and each gradient to fp32 in every backward, then accumulates it;
  // Megatron without gradient-accumulation fusion (Layout::grad_fusion) adds each
  // micro-batch's gradients apart in its backward (megatron_gradient_accumulation).
  double share =
      (stage_parameters(m, s) - stage_routed_parameters(m, s) * (1 - 1.0 / f(l.ep))) / f(l.tp);
  std::int64_t mbs = cx.task.global_batch / (l.dp * l.micro_batch);
  double forward = 0;
  double backward = 0;
  double foreach_copies = 0;  // of those, run by multi_tensor_apply (profiled as optimizer)
  if (dcx.eager && eager_fsdp(l)) {
    // FSDP2 (bf16 parameters, fp32 reduction), as profiled: each gather casts the rank's fp32
    // shard to bf16 and copies it into the gather's buffer (two foreach copies, 4 + 2 and 2 + 2
    // a shard's parameter, which run at about the widening cast's rate: 1.8-2.3 TB/s on H200),
    // then copies the gathered weights out into the parameters (2 + 2); each backward casts the
    // bf16 gradients to fp32 into the reduce-scatter's input (2 + 4, PyTorch's chunk_cat: the
    // widening rate) and, from the second micro-batch on, adds the reduced shard into the
    // sharded gradient (4 + 4 + 4). ZeRO 3 gathers again before the backward.
    double shard = share / f(l.dp * l.cp);
    double copy_in = 10 * shard;
    double accumulate = 12 * shard * f(mbs - 1) / f(std::max<std::int64_t>(1, mbs));
    double again = l.zero >= 3 ? 1 : 0;  // gathers in backward
    forward = eager_stream_time(dcx, 4 * share + copy_in, copy_in);
    backward = eager_stream_time(dcx, again * (4 * share + copy_in) + 6 * share + accumulate,
                                 again * copy_in + 6 * share);
    foreach_copies = (1 + again) * eager_stream_time(dcx, copy_in, copy_in);
  } else if (dcx.eager) {
    // A full recomputation casts the layers' weights again, but for the dense layers' down
    // projections (its early stop: LayerCost::forward_tail); the embedding and the head run
    // outside the checkpoint.
    Params p = params(m);
    double outside =
        (s.first() ? p.embedding : 0) + (s.last() ? p.head : 0) + f(dense) * f(m.hidden) * f(m.ffn);
    double recast = l.recompute == Recompute::kFull && share > 0
                        ? std::max(0.0, share - outside / f(l.tp)) / share
                        : 0;
    EagerBytes per = eager_parameter_bytes(mbs, recast);
    forward = eager_stream_time(dcx, per.forward * share, per.widen_forward * share);
    backward = eager_stream_time(dcx, per.backward * share, per.widen_backward * share);
  } else if (!l.grad_fusion) {
    backward = megatron_gradient_accumulation(dcx, cx.task.precision, share, mbs);
  }
  st.compute += forward + backward;
  st.forward += forward;
  st.backward += backward;
  st.kernels.memory += forward + backward - foreach_copies;
  st.kernels.optimizer += foreach_copies;
  // Each micro-batch sends its activations forward and receives their gradients back.
  st.pp = (s.last() ? 0 : send_out) + (s.first() ? 0 : send_in);
  return st;
}

namespace {

// The gradient reduction of a synchronisation: a reduce-scatter where the optimizer state is
// sharded (ZeRO 3; Megatron-LM's distributed optimizer, ZeRO 1, which then gathers the updated
// weights after its step: megatron_dp_exposed), else an all-reduce (eager ZeRO 1 broadcasts
// the updated weights after its step: eager_dp_exposed).
costmodel::Collective reduction(const TrainContext& cx, const Layout& l) {
  bool sharded = l.zero >= 3 || (l.zero >= 1 && cx.task.framework == devices::Framework::kMegatron);
  return sharded ? costmodel::Collective::kReduceScatter : costmodel::Collective::kAllReduce;
}

// The reduction of `params` parameters' gradients, sharded over tp, in one collective.
double sync(const TrainContext& cx, const Layout& l, const costmodel::CommGroup& g, double params) {
  // Both frameworks reduce fp32 gradients (Megatron-LM its fp32 main gradients; DDP and
  // FSDP2 with fp32 reduction; training_parameter_bytes).
  double grad_bytes = training_parameter_bytes(cx.task).gradients;
  double bytes = params / f(l.tp) * grad_bytes;
  return costmodel::estimate_collective(g, reduction(cx, l), bytes).latency().value;
}

}  // namespace

double grad_sync_time(const TrainContext& cx,
                      const Layout& l,
                      double params,
                      double expert_params) {
  double t = l.dp * l.cp > 1 ? sync(cx, l, dp_group(cx, l), params) : 0;
  // The routed experts' gradients go over the dp / ep ranks that hold the same experts
  // (spaced tp x pp x ep apart).
  std::int64_t ranks = l.dp * l.cp / l.ep;
  if (ranks > 1 && expert_params > 0)
    t += sync(cx, l, spaced_group(cx, ranks, l.tp * l.pp * l.ep), expert_params);
  return t;
}

MegatronSync megatron_sync(const TrainContext& cx, const Layout& l, const StageSpan& s) {
  const ModelSpec& m = cx.task.model;
  double routed = stage_routed_parameters(m, s);
  double dense = stage_parameters(m, s) - routed;
  MegatronSync g;
  g.reduction = reduction(cx, l);
  g.local = (dense + routed / f(l.ep)) / f(l.tp);
  // Buckets of max(40M, 1M x dp) parameters; one parameter larger than that is a bucket of its
  // own, and the embedding, used first, is the last ready.
  double bucket = std::max(40e6, 1e6 * f(l.dp * l.cp));
  double embedding = s.first() ? params(m).embedding / f(l.tp) : 0;
  g.last = l.dp_overlap ? std::min(dense / f(l.tp), std::max(bucket, embedding)) : 0;
  // (ZeRO 3 gathers its weights before each use instead: sharded_dp_exposed.)
  g.gather_bytes =
      l.zero == 1 || l.zero == 2 ? g.local * devices::dtype_bytes(cx.task.precision) : 0;
  return g;
}

namespace {

// Megatron-LM's gradient reduction on a device of stage `s` (its sync `g`): all of it, and the
// last bucket's, reduced after the backward (all of it without overlap).
struct SyncTimes {
  double all = 0;
  double tail = 0;
};

SyncTimes megatron_sync_times(const TrainContext& cx,
                              const Layout& l,
                              const StageSpan& s,
                              const MegatronSync& g) {
  const ModelSpec& m = cx.task.model;
  double routed = stage_routed_parameters(m, s);
  SyncTimes t;
  t.all = grad_sync_time(cx, l, stage_parameters(m, s) - routed, routed / f(l.ep));
  t.tail = g.last > 0 ? sync(cx, l, dp_group(cx, l), g.last * f(l.tp)) : t.all;
  return t;
}

// What the buckets reduced beside a `backward` seconds long cost it (megatron_dp_overlapped).
double overlap_cost(const Layout& l,
                    const SyncTimes& t,
                    double backward,
                    const DeviceContext& dcx) {
  if (!l.dp_overlap)
    return 0;
  return dcx.efficiency.megatron_dp_overlap_cost *
         std::clamp(t.all - t.tail, 0.0, std::max(0.0, backward));
}

}  // namespace

double megatron_dp_overlapped(const TrainContext& cx,
                              const Layout& l,
                              const StageSpan& s,
                              double backward,
                              const DeviceContext& dcx) {
  if (l.dp * l.cp <= 1 || !l.dp_overlap)
    return 0;
  return overlap_cost(l, megatron_sync_times(cx, l, s, megatron_sync(cx, l, s)), backward, dcx);
}

double megatron_dp_exposed(const TrainContext& cx,
                           const Layout& l,
                           const StageSpan& s,
                           double backward,
                           const DeviceContext& dcx) {
  if (l.dp * l.cp <= 1)
    return 0;
  MegatronSync g = megatron_sync(cx, l, s);
  SyncTimes sync_times = megatron_sync_times(cx, l, s, g);
  double all = sync_times.all;
  double tail = sync_times.tail;
  // Every gradient is scaled by 1 / dp on the compute stream before it is reduced.
  double t = eager_stream_time(dcx, 8 * g.local);
  // Overlapped, the buckets before the last are reduced beside the backward, which pays a
  // share of their time; without, all of them after it.
  t += tail + std::max(0.0, all - tail - (l.dp_overlap ? backward : 0)) +
       overlap_cost(l, sync_times, backward, dcx);
  if (g.gather_bytes > 0) {
    t += costmodel::estimate_collective(dp_group(cx, l), costmodel::Collective::kAllGather,
                                        g.gather_bytes)
             .latency()
             .value;
  }
  return t;
}

double eager_dp_exposed(const TrainContext& cx,
                        const Layout& l,
                        const StageSpan& s,
                        std::int64_t micro_batches,
                        double backward,
                        const DeviceContext& dcx) {
  if (l.dp * l.cp <= 1)
    return 0;
  costmodel::CommGroup g = dp_group(cx, l);
  // Parameters of this device's tensor-parallel shard (1 / ep of the routed experts).
  double held = stage_parameters(cx.task.model, s) -
                stage_routed_parameters(cx.task.model, s) * (1 - 1.0 / f(l.ep));
  double local = held / f(l.tp);
  auto collective = [&](costmodel::Collective op, double bytes) {
    return costmodel::estimate_collective(g, op, bytes).latency().value;
  };
  auto [root, layer] = stage_groups(cx, l, s, local);
  if (l.zero >= 2) {
    // FSDP2: each micro-batch gathers the root group and then the first layer before its
    // forward (nothing runs before them), and after its backward reduce-scatters the first
    // layer's fp32 gradients and the root's (the embedding's are the last ready): those run
    // beside no compute. The other layers' gathers and reduce-scatters run beside their
    // neighbours' compute, exposed only where they outlast the backward.
    double edges = collective(costmodel::Collective::kAllGather, root * 2) +
                   collective(costmodel::Collective::kAllGather, layer * 2) +
                   collective(costmodel::Collective::kReduceScatter, layer * 4) +
                   collective(costmodel::Collective::kReduceScatter, root * 4);
    double inner = local - root - layer;
    double layers =
        collective(costmodel::Collective::kReduceScatter, inner * 4) +
        collective(costmodel::Collective::kAllGather, inner * 2) +
        (l.zero >= 3 ? collective(costmodel::Collective::kAllGather, (local - root) * 2) : 0);
    return f(micro_batches) * (edges + std::max(0.0, layers - backward));
  }
  // DDP: the last micro-batch's backward all-reduces 25 MB buckets as their gradients are
  // ready (no_sync before it); the embedding's gradient, ready last and larger than a bucket,
  // is all-reduced alone after the backward ends; then every gradient is averaged in place
  // (8 B per parameter).
  double last = std::max(s.first() ? params(cx.task.model).embedding / f(l.tp) : 0.0, 25e6 / 4);
  double all = collective(costmodel::Collective::kAllReduce, local * 4);
  double tail = collective(costmodel::Collective::kAllReduce, last * 4);
  double t = tail + std::max(0.0, all - tail - backward) + eager_stream_time(dcx, 8 * local);
  if (l.zero == 1) {
    // Every rank broadcasts its 1 / dp of the updated fp32 weights to the others.
    t += f(l.dp * l.cp) * collective(costmodel::Collective::kBroadcast, local * 4 / f(l.dp * l.cp));
  }
  return t;
}

// ZeRO 2 and 3 shard the gradients over the dp x cp ranks, so every micro-batch's backward
// reduce-scatters its own (accumulating them unsharded would need the memory the sharding saves;
// DeepSpeed's ZeRO, FSDP and Megatron-FSDP all reduce each micro-batch); ZeRO 3 also gathers the
// weights before each micro-batch's forward and again before its backward (Rajbhandari et al.
// 2020, §5.3). Prefetching hides each behind the compute of its own pass, and what outlasts that
// pass is exposed. The last micro-batch's reduction is the step's gradient sync
// (megatron_dp_exposed).
double sharded_dp_exposed(const TrainContext& cx,
                          const Layout& l,
                          double stage_params,
                          const StageTimes& st,
                          std::int64_t micro_batches) {
  if (l.zero < 2 || l.dp * l.cp <= 1 || micro_batches < 1)
    return 0;
  costmodel::CommGroup g = dp_group(cx, l);
  double local = stage_params / f(l.tp);
  auto time = [&](costmodel::Collective op, double bytes) {
    return costmodel::estimate_collective(g, op, bytes).latency().value;
  };
  double gather = l.zero >= 3 ? time(costmodel::Collective::kAllGather,
                                     local * devices::dtype_bytes(cx.task.precision))
                              : 0;
  double reduce = time(costmodel::Collective::kReduceScatter,
                       local * training_parameter_bytes(cx.task).gradients);
  double backward = st.compute - st.forward;  // with recomputation
  auto exposed = [](double comm, double compute) {
    return std::max(0.0, comm - compute);
  };
  return f(micro_batches) * exposed(gather, st.forward) +
         f(micro_batches - 1) * exposed(gather + reduce, backward) + exposed(gather, backward);
}

OffloadTimes offload_times(const TrainContext& cx, const Layout& l, double stage_params) {
  const devices::NodeGroup& g = group(cx);
  const devices::DeviceSpec& d = cx.cluster.device(g);
  CHECK(g.host_cpu && d.host_link) << "offload without a host CPU or host link";
  double per_device = stage_params / f(l.tp) / (l.zero >= 1 ? f(l.dp * l.cp) : 1);
  double link = d.host_link->bandwidth.value.value;
  OffloadTimes t;
  t.gradients_down = per_device * 2 / link;
  t.weights_up = per_device * 2 / link;
  // The node's CPUs update every device's share: Adam reads the fp32 gradient, master
  // weight and two moments and writes the last three and a 2-byte weight (32 B per
  // parameter; SGD 20), at the sockets' peak memory bandwidth: a lower bound.
  double bytes = cx.task.optimizer == devices::Optimizer::kAdam ? 32 : 20;
  t.cpu_step = f(g.devices_per_node) * per_device * bytes /
               (f(g.host_cpu->sockets) * g.host_cpu->memory_bandwidth.value);
  return t;
}

// The optimizer reads and writes its state once: Adam 28 B per parameter (gradient 2,
// master weight 4 + 4, moments 8 + 8, new weight 2), SGD 16; at the calibrated HBM rate.
double optimizer_time(const TrainContext& cx,
                      const Layout& l,
                      double stage_params,
                      const costmodel::GpuEfficiency& eff) {
  double per_device = stage_params / f(l.tp) / (l.zero >= 1 ? f(l.dp * l.cp) : 1);
  double bytes = per_device * (cx.task.optimizer == devices::Optimizer::kAdam ? 28 : 16);
  if (cx.task.framework == devices::Framework::kPytorch &&
      cx.task.optimizer == devices::Optimizer::kAdam)
    bytes = per_device * eager_optimizer_bytes_per_parameter();
  if (cx.task.framework == devices::Framework::kMegatron && !l.te &&
      cx.task.optimizer == devices::Optimizer::kAdam) {
    // Without Transformer Engine or Apex, Megatron-LM's optimizer runs torch's foreach AdamW:
    // separate streaming kernels over fp32 tensors, priced at the elementwise rate.
    DeviceContext dcx = device_context(cx, l);
    dcx.efficiency = eff;
    return eager_stream_time(dcx, per_device * local_optimizer_bytes_per_parameter()) +
           eff.launch.value;
  }
  const devices::DeviceSpec& d = cx.cluster.device(group(cx));
  double achieved = eff.optimizer > 0 ? eff.optimizer : eff.memory;
  return bytes / (d.memory_bandwidth.value.value * achieved) + eff.launch.value;
}

}  // namespace yirage::planner
