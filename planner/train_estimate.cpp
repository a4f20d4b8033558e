#include "planner/train_estimate.h"

#include "costmodel/collective.h"
#include "costmodel/schedule.h"
#include "costmodel/validation.h"
#include "devices/support/check.h"
#include "planner/workload/layer_cost.h"
#include "planner/workload/model_size.h"

#include <algorithm>
#include <cmath>

namespace yirage::planner {
namespace {

using devices::ModelSpec;

const devices::NodeGroup& group(const TrainContext& cx) {
  return cx.cluster.groups.front();
}

const devices::DeviceSpec& device(const TrainContext& cx) {
  return cx.cluster.device(group(cx));
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
// et al. 2022 (§4.1), with fused (flash) attention, which keeps no s x s scores, GQA's
// smaller K and V, and the FFN width of the model: attention 7sbh + 4sbh kv/heads, FFN
// 2sbh + (gated ? 6 : 4) sbF + sbh, norms 4sbh; divided by t with sequence parallelism;
// for 2-byte activations, scaled to the task's precision.
double layer_activations(const ModelSpec& m,
                         std::int64_t seq,
                         std::int64_t mb,
                         std::int64_t t,
                         Recompute r,
                         double bytes) {
  double sbh = f(seq) * f(mb) * f(m.hidden);
  double scale = bytes / 2.0 / f(t);
  if (r == Recompute::kFull)
    return 2 * sbh * scale;  // the layer's input only
  double ffn = f(m.moe ? m.moe->expert_ffn * (m.moe->top_k + m.moe->shared_experts) : m.ffn);
  double attn = 7 * sbh + 4 * sbh * f(m.kv_heads) / f(m.heads);
  double mlp = 2 * sbh + (m.ffn_kind == devices::FfnKind::kGated ? 6 : 4) * f(seq * mb) * ffn + sbh;
  return (attn + mlp + 4 * sbh) * scale;
}

std::int64_t micro_batches(const TrainContext& cx, const Layout& l) {
  return cx.task.global_batch / (l.dp * l.micro_batch);
}

std::int64_t stage_layers(const ModelSpec& m, const Layout& l, std::int64_t stage) {
  std::int64_t base = m.layers / l.pp;
  return base + (stage < m.layers % l.pp ? 1 : 0);
}

}  // namespace

MemoryUse training_memory(const TrainContext& cx, const Layout& l) {
  const ModelSpec& m = cx.task.model;
  Params p = params(m);
  double b = devices::dtype_bytes(cx.task.precision);
  bool adam = cx.task.optimizer == devices::Optimizer::kAdam;
  double master = cx.task.precision == devices::DType::kFp32 ? 0 : 4;
  double opt_bytes = master + (adam ? 8 : 4);
  std::int64_t m_count = micro_batches(cx, l);
  MemoryUse worst;
  for (std::int64_t stage : {std::int64_t{0}, l.pp - 1}) {
    double stage_params = f(stage_layers(m, l, stage)) * p.layer + (stage == 0 ? p.embedding : 0) +
                          (stage == l.pp - 1 ? p.head : 0);
    // Routed experts are split over ep ranks, and ZeRO shards their state over the dp / ep
    // ranks that hold the same experts.
    double routed = f(stage_layers(m, l, stage)) * p.routed;
    double dense = (stage_params - routed) / f(l.tp);
    double experts = routed / f(l.tp * l.ep);
    double edp = f(l.dp / l.ep);
    MemoryUse u;
    u.weights = dense * b / (l.zero >= 3 ? f(l.dp) : 1) + experts * b / (l.zero >= 3 ? edp : 1);
    u.gradients = dense * std::max(b, 2.0) / (l.zero >= 2 ? f(l.dp) : 1) +
                  experts * std::max(b, 2.0) / (l.zero >= 2 ? edp : 1);
    u.optimizer = dense * opt_bytes / (l.zero >= 1 ? f(l.dp) : 1) +
                  experts * opt_bytes / (l.zero >= 1 ? edp : 1);
    // 1F1B keeps up to pp - stage micro-batches in flight on a stage (Narayanan et al. 2021).
    // Interleaved, a device warms up with 2 (pp - stage - 1) + (vpp - 1) pp + 1 chunks of
    // layers / (pp vpp) layers each (Megatron-LM's schedule): for the first stage, pp + (pp -
    // 1) / vpp micro-batches of its layers (Korthikanti et al. 2022, §4.2.3).
    double in_flight =
        l.vpp > 1
            ? std::min(f(2 * (l.pp - stage - 1) + (l.vpp - 1) * l.pp + 1) / f(l.vpp), f(m_count))
            : f(std::min(l.pp - stage, m_count));
    double per_layer =
        layer_activations(m, cx.task.sequence_length, l.micro_batch, l.tp, l.recompute, b);
    u.activations = per_layer * f(stage_layers(m, l, stage)) * in_flight;
    if (l.recompute == Recompute::kFull) {
      u.activations += layer_activations(m, cx.task.sequence_length, l.micro_batch, l.tp,
                                         Recompute::kNone, b);  // one layer recomputed at a time
    }
    if (stage == l.pp - 1) {
      u.activations += f(cx.task.sequence_length * l.micro_batch) * f(m.vocab) / f(l.tp) * 4;
    }
    if (u.total() > worst.total())
      worst = u;
  }
  worst.capacity = device(cx).memory_capacity.value.value * (1 - cx.memory_headroom);
  return worst;
}

namespace {

std::string check_shape(const TrainContext& cx, const Layout& l) {
  const ModelSpec& m = cx.task.model;
  const devices::NodeGroup& g = group(cx);
  if (l.devices() != cx.cluster.total_devices()) {
    return "uses " + std::to_string(l.devices()) + " devices, the cluster has " +
           std::to_string(cx.cluster.total_devices());
  }
  if (l.tp > g.devices_per_node || g.devices_per_node % l.tp != 0) {
    return "tensor parallelism " + std::to_string(l.tp) + " does not divide a node of " +
           std::to_string(g.devices_per_node);
  }
  if (m.heads % l.tp != 0 || (m.kv_heads % l.tp != 0 && l.tp % m.kv_heads != 0)) {
    return "tensor parallelism " + std::to_string(l.tp) + " does not divide the " +
           std::to_string(m.heads) + " heads (" + std::to_string(m.kv_heads) + " KV)";
  }
  if (l.pp > m.layers)
    return "more pipeline stages than layers";
  if (l.ep > 1) {
    if (!m.moe)
      return "expert parallelism needs a mixture-of-experts model";
    if (l.dp % l.ep != 0 || m.moe->experts % l.ep != 0) {
      return "expert parallelism " + std::to_string(l.ep) + " must divide dp (" +
             std::to_string(l.dp) + ") and the " + std::to_string(m.moe->experts) + " experts";
    }
  }
  if (l.vpp > 1) {
    if (l.pp < 2)
      return "interleaving (vpp) needs pipeline parallelism";
    if (m.layers % (l.pp * l.vpp) != 0) {
      return "interleaving needs the " + std::to_string(m.layers) +
             " layers to divide into pp x vpp = " + std::to_string(l.pp * l.vpp) + " chunks";
    }
    std::int64_t mbs = cx.task.global_batch / (l.dp * l.micro_batch);
    if (mbs % l.pp != 0) {
      return "interleaving needs the " + std::to_string(mbs) +
             " micro-batches to be a multiple of pp (Megatron-LM)";
    }
  }
  if (cx.task.global_batch % (l.dp * l.micro_batch) != 0) {
    return "global batch " + std::to_string(cx.task.global_batch) + " is not a multiple of dp x mb";
  }
  return {};
}

costmodel::CommGroup comm_group(const TrainContext& cx, std::int64_t ranks, std::int64_t per_node) {
  costmodel::CommGroupResult r = costmodel::make_comm_group(cx.cluster, ranks, per_node);
  CHECK(r.group.has_value()) << r.reason;
  costmodel::apply_calibration(*r.group, cx.calibrations);
  return *r.group;
}

struct StageTimes {
  double compute = 0;  // forward + backward + recomputation of one micro-batch
  double backward = 0;
  double tp = 0;
  double pp = 0;
  double flops = 0;     // model FLOPs of one micro-batch on one device
  double hw_flops = 0;  // with recomputation
};

}  // namespace

namespace {

// The ep ranks that hold one set of experts' shards: spaced tp x pp apart like the
// data-parallel group, a node holding devices_per_node / (tp x pp) of them when that divides.
costmodel::CommGroup ep_group(const TrainContext& cx, const Layout& l) {
  std::int64_t per_node = std::max<std::int64_t>(1, group(cx).devices_per_node / (l.tp * l.pp));
  return comm_group(cx, l.ep, std::min(per_node, l.ep));
}

StageTimes stage_times(const TrainContext& cx,
                       const Layout& l,
                       std::int64_t stage,
                       const DeviceContext& dcx,
                       double pp_send) {
  const ModelSpec& m = cx.task.model;
  StageTimes st;
  std::int64_t layers = stage_layers(m, l, stage);
  std::int64_t first = 0;
  for (std::int64_t s = 0; s < stage; ++s)
    first += stage_layers(m, l, s);
  std::int64_t dense =
      m.moe ? std::clamp<std::int64_t>(m.moe->dense_layers - first, 0, layers) : layers;
  for (int kind = 0; kind < 2; ++kind) {
    std::int64_t count = kind == 0 ? dense : layers - dense;
    if (count == 0)
      continue;
    LayerShape shape{l.micro_batch, cx.task.sequence_length, l.tp, kind == 1,
                     cx.task.attention == devices::AttentionKernel::kUnfused};
    LayerCost c = layer_cost(m, shape, dcx);
    double redo = l.recompute == Recompute::kFull        ? c.forward
                  : l.recompute == Recompute::kSelective ? c.attention_forward
                                                         : 0;
    st.compute += f(count) * (c.forward + c.backward + redo);
    st.backward += f(count) * c.backward;
    // Full recomputation runs the forward again, with its tensor-parallel collectives (half
    // of the layer's forward-and-backward total).
    st.tp += f(count) * c.tp_comm * (l.recompute == Recompute::kFull ? 1.5 : 1.0);
    if (kind == 1 && l.ep > 1) {
      // Expert parallelism: each MoE layer dispatches its tokens' top-k copies to the
      // experts' ranks and combines them back, all-to-all, in forward and again in backward
      // (and once more when fully recomputed); with sequence parallelism a rank holds
      // mb x seq / tp tokens.
      double bytes = f(l.micro_batch * cx.task.sequence_length / l.tp) * f(m.moe->top_k) *
                     f(m.hidden) * devices::dtype_bytes(cx.task.precision);
      double a2a =
          costmodel::estimate_collective(ep_group(cx, l), costmodel::Collective::kAllToAll, bytes)
              .latency()
              .value;
      st.tp += f(count) * a2a * (l.recompute == Recompute::kFull ? 6 : 4);
    }
    st.flops += f(count) * 3 * c.flops_forward;
    st.hw_flops +=
        f(count) * (3 * c.flops_forward + (redo > 0 ? redo / c.forward : 0) * c.flops_forward);
  }
  if (stage == l.pp - 1) {
    LayerCost h =
        head_cost(m, LayerShape{l.micro_batch, cx.task.sequence_length, l.tp, false}, dcx);
    st.compute += h.forward + h.backward;
    st.backward += h.backward;
    st.flops += 3 * h.flops_forward;
    st.hw_flops += 3 * h.flops_forward;
  }
  // Each micro-batch sends its activations forward and receives their gradients back.
  st.pp = l.pp > 1 ? (stage < l.pp - 1 ? pp_send : 0) + (stage > 0 ? pp_send : 0) : 0;
  return st;
}

// The ranks of one data-parallel group are spaced tp x pp apart: a node holds
// devices_per_node / (tp x pp) of them when that divides, and in general they spread evenly
// over the nodes.
costmodel::CommGroup dp_group(const TrainContext& cx, const Layout& l) {
  std::int64_t nodes = cx.cluster.total_nodes();
  std::int64_t per_node = std::max<std::int64_t>(1, group(cx).devices_per_node / (l.tp * l.pp));
  per_node = std::max(per_node, (l.dp + nodes - 1) / nodes);
  return comm_group(cx, l.dp, std::min(per_node, l.dp));
}

// Data-parallel gradient synchronisation of one device's share of the stage's parameters:
// an all-reduce (ZeRO 0 and 1), a reduce-scatter (ZeRO 2 and 3; ZeRO 1 and 2 then gather
// the updated weights, which we count with the all-reduce: RS + AG = AR).
double dp_time(const TrainContext& cx, const Layout& l, double stage_params) {
  if (l.dp <= 1)
    return 0;
  costmodel::CommGroup g = dp_group(cx, l);
  double bytes = stage_params / f(l.tp) * std::max(2.0, devices::dtype_bytes(cx.task.precision));
  costmodel::Collective op =
      l.zero >= 3 ? costmodel::Collective::kReduceScatter : costmodel::Collective::kAllReduce;
  return costmodel::estimate_collective(g, op, bytes).latency().value;
}

// The routed experts' gradients: synchronised like dp_time over the dp / ep ranks that hold
// the same experts (spaced tp x pp x ep apart).
double expert_sync(const TrainContext& cx, const Layout& l, double expert_params) {
  std::int64_t ranks = l.dp / l.ep;
  if (ranks <= 1 || expert_params <= 0)
    return 0;
  std::int64_t per_node =
      std::max<std::int64_t>(1, group(cx).devices_per_node / (l.tp * l.pp * l.ep));
  costmodel::CommGroup g = comm_group(cx, ranks, std::min(per_node, ranks));
  double bytes = expert_params / f(l.tp) * std::max(2.0, devices::dtype_bytes(cx.task.precision));
  costmodel::Collective op =
      l.zero >= 3 ? costmodel::Collective::kReduceScatter : costmodel::Collective::kAllReduce;
  return costmodel::estimate_collective(g, op, bytes).latency().value;
}

// ZeRO-3 gathers the stage's weights before each micro-batch's forward and again before its
// backward (Rajbhandari et al. 2020, §5.3); prefetching hides them behind that micro-batch's
// compute, and what does not fit is exposed.
double zero3_exposed(const TrainContext& cx,
                     const Layout& l,
                     double stage_params,
                     double microbatch_compute,
                     std::int64_t micro_batches) {
  if (l.zero < 3 || l.dp <= 1)
    return 0;
  costmodel::CommGroup g = dp_group(cx, l);
  double bytes = stage_params / f(l.tp) * devices::dtype_bytes(cx.task.precision);
  double gather =
      costmodel::estimate_collective(g, costmodel::Collective::kAllGather, bytes).latency().value;
  return f(micro_batches) * std::max(0.0, 2 * gather - microbatch_compute);
}

// The optimizer reads and writes its state once: Adam 28 B per parameter (gradient 2,
// master weight 4 + 4, moments 8 + 8, new weight 2), SGD 16; at the calibrated HBM rate.
double optimizer_time(const TrainContext& cx,
                      const Layout& l,
                      double stage_params,
                      const costmodel::GpuEfficiency& eff) {
  double per_device = stage_params / f(l.tp) / (l.zero >= 1 ? f(l.dp) : 1);
  double bytes = per_device * (cx.task.optimizer == devices::Optimizer::kAdam ? 28 : 16);
  return bytes / (device(cx).memory_bandwidth.value.value * eff.memory) + eff.launch.value;
}

}  // namespace

std::variant<PlanEstimate, Rejected> estimate_training(const TrainContext& cx, const Layout& l) {
  if (std::string why = check_shape(cx, l); !why.empty())
    return Rejected{l, why, 0};
  MemoryUse mem = training_memory(cx, l);
  if (mem.total() > mem.capacity) {
    return Rejected{l,
                    "needs " + devices::format_quantity(mem.total(), devices::Dim::kBytes) +
                        " per device, more than the " +
                        devices::format_quantity(mem.capacity, devices::Dim::kBytes) + " usable",
                    mem.total() - mem.capacity};
  }
  const devices::DeviceSpec& d = device(cx);
  DeviceContext dcx{d, {}, cx.task.precision, std::nullopt};
  if (const costmodel::GpuEfficiency* e = cx.calibrations.find_gpu(d.name))
    dcx.efficiency = *e;
  if (l.tp > 1)
    dcx.tp_group = comm_group(cx, l.tp, l.tp);
  double pp_send = 0;
  if (l.pp > 1) {
    // Stage neighbours share a node while tp x pp fits in one; otherwise they cross nodes.
    bool same_node = l.tp * l.pp <= group(cx).devices_per_node;
    costmodel::CommGroup g = comm_group(cx, 2, same_node ? 2 : 1);
    double bytes = f(cx.task.sequence_length * l.micro_batch * cx.task.model.hidden) *
                   devices::dtype_bytes(cx.task.precision) / f(l.tp);
    pp_send =
        costmodel::estimate_collective(g, costmodel::Collective::kSendRecv, bytes).latency().value;
  }
  std::int64_t m = micro_batches(cx, l);
  // The pipeline: every stage, every micro-batch (1F1B), priced by the stall scheduler.
  // Interleaved, a stage runs vpp chunks of 1 / vpp of its work per micro-batch, and every
  // chunk sends and receives (the last device feeds the first's next chunk): m x vpp slots
  // of a vpp-times shorter stage, so the bubble shrinks to (pp - 1) / (vpp m) (Narayanan et
  // al. 2021, §2.2) while the sends grow vpp times.
  double v = f(l.vpp);
  std::vector<costmodel::ScheduleNode> stages;
  std::vector<StageTimes> times;
  for (std::int64_t s = 0; s < l.pp; ++s) {
    StageTimes st = stage_times(cx, l, s, dcx, pp_send);
    if (l.vpp > 1)
      st.pp = 2 * pp_send * v;  // per micro-batch: vpp chunks, each received and sent on
    times.push_back(st);
    std::string id = std::to_string(s);
    stages.push_back(costmodel::ScheduleNode::group(
        "stage " + id, costmodel::Binding::kSequential,
        {costmodel::ScheduleNode::task("compute", devices::Seconds{st.compute / v},
                                       "compute:" + id),
         costmodel::ScheduleNode::task("tp", devices::Seconds{st.tp / v}, "nvlink:" + id),
         costmodel::ScheduleNode::task("pp", devices::Seconds{st.pp / v}, "link:" + id)}));
  }
  costmodel::ScheduleCost pipe = costmodel::cost_schedule(costmodel::ScheduleNode::group(
      l.vpp > 1 ? "interleaved 1f1b" : "1f1b", costmodel::Binding::kPipeline, stages, m * l.vpp));
  auto slowest = std::max_element(times.begin(), times.end(), [](const auto& a, const auto& b) {
    return a.compute + a.tp + a.pp < b.compute + b.tp + b.pp;
  });
  Params p = params(cx.task.model);
  double stage_params = f(stage_layers(cx.task.model, l, 0)) * p.layer + p.embedding;
  // With expert parallelism a device holds 1 / ep of the stage's routed experts, whose
  // gradients are synchronised over the dp / ep ranks holding the same experts.
  double routed = f(stage_layers(cx.task.model, l, 0)) * p.routed;
  double held = stage_params - routed + routed / f(l.ep);
  // Gradient synchronisation overlaps the last micro-batch's backward (bucketed all-reduce).
  double dp = dp_time(cx, l, stage_params - routed) + expert_sync(cx, l, routed / f(l.ep));
  costmodel::ScheduleCost tail = costmodel::cost_schedule(costmodel::ScheduleNode::group(
      "dp", costmodel::Binding::kParallel,
      {costmodel::ScheduleNode::task("backward", devices::Seconds{slowest->backward}, "compute"),
       costmodel::ScheduleNode::task("grad sync", devices::Seconds{dp}, "network")}));
  PlanEstimate e;
  e.layout = l;
  e.micro_batches = m;
  e.memory = mem;
  StepBreakdown& b = e.step;
  b.compute = f(m) * slowest->compute;
  b.tp_comm = f(m) * slowest->tp;
  b.pp_comm = f(m) * slowest->pp;
  b.bubble = pipe.total.value - f(m) * (slowest->compute + slowest->tp + slowest->pp);
  b.dp_comm =
      tail.total.value - slowest->backward + zero3_exposed(cx, l, held, slowest->compute, m);
  b.optimizer = optimizer_time(cx, l, l.zero >= 1 ? stage_params : held, dcx.efficiency);
  b.total = pipe.total.value + b.dp_comm + b.optimizer;
  double tokens = f(cx.task.global_batch * cx.task.sequence_length);
  e.tokens_per_s = tokens / b.total;
  double peak = costmodel::matrix_peak(d, cx.task.precision).value * f(l.devices());
  e.mfu =
      training_flops_per_token(cx.task.model, cx.task.sequence_length) * tokens / (b.total * peak);
  // HFU counts what the kernels execute, recomputation included: MFU scaled by the ratio of
  // hardware to model FLOPs of the stages' kernels.
  double hw = 0;
  double model = 0;
  for (const StageTimes& st : times) {
    hw += st.hw_flops;
    model += st.flops;
  }
  e.hfu = model > 0 ? e.mfu * hw / model : e.mfu;
  if (d.tdp)
    e.energy = devices::Joules{d.tdp->value.value * f(l.devices()) * b.total};
  if (d.price)
    e.usd_per_step = d.price->value.value * f(l.devices()) * b.total / 3600;
  // The fusion decisions of the model's typical layer (its MoE layer when every layer is one).
  bool all_moe = cx.task.model.moe && cx.task.model.moe->dense_layers == 0;
  e.fusions = layer_cost(cx.task.model,
                         LayerShape{l.micro_batch, cx.task.sequence_length, l.tp, all_moe}, dcx)
                  .fusions;
  return e;
}

}  // namespace yirage::planner
