#include "planner/train_estimate.h"

#include "costmodel/schedule.h"
#include "costmodel/validation.h"
#include "planner/train_stage.h"
#include "planner/workload/model_size.h"

#include <algorithm>

namespace yirage::planner {
namespace {

using devices::ModelSpec;

// The task's limits plan `e` on `used` devices misses (PlanEstimate::objective_miss).
std::string objective_miss(const devices::Objective& o, const PlanEstimate& e, std::int64_t used) {
  std::string out;
  auto miss = [&](const std::string& what) {
    out += (out.empty() ? "" : "; ") + what;
  };
  if (o.max_step_time && e.step.total > o.max_step_time->value) {
    miss("step " + devices::format(devices::Seconds{e.step.total}) + " over max_step_time " +
         devices::format(*o.max_step_time));
  }
  if (o.max_devices && used > *o.max_devices) {
    miss(std::to_string(used) + " devices over max_devices " + std::to_string(*o.max_devices));
  }
  if (o.max_cost_per_hour && e.usd_per_step && e.step.total > 0) {
    double per_hour = *e.usd_per_step * 3600 / e.step.total;
    if (per_hour > o.max_cost_per_hour->value) {
      miss(devices::format_number(per_hour, 4) + " USD/h over max_cost_per_hour " +
           devices::format(*o.max_cost_per_hour));
    }
  }
  if (o.min_throughput && e.tokens_per_s < o.min_throughput->value) {
    miss(devices::format_number(e.tokens_per_s, 4) + " tokens/s under min_throughput " +
         devices::format_number(o.min_throughput->value, 4));
  }
  return out;
}

const devices::NodeGroup& group(const TrainContext& cx) {
  return cx.cluster.groups.front();
}

double f(std::int64_t v) {
  return static_cast<double>(v);
}

std::int64_t micro_batches(const TrainContext& cx, const Layout& l) {
  return cx.task.global_batch / (l.dp * l.micro_batch);
}

std::string check_shape(const TrainContext& cx, const Layout& l) {
  const ModelSpec& m = cx.task.model;
  const devices::NodeGroup& g = group(cx);
  if (l.devices() != cx.cluster.total_devices()) {
    return "uses " + std::to_string(l.devices()) + " devices, the cluster has " +
           std::to_string(cx.cluster.total_devices());
  }
  if (l.tp > g.devices_per_node ? l.tp % g.devices_per_node != 0 : g.devices_per_node % l.tp != 0) {
    return "tensor parallelism " + std::to_string(l.tp) + " neither divides a node of " +
           std::to_string(g.devices_per_node) + " nor spans whole nodes";
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
  if (l.offload) {
    if (!g.host_cpu || !g.host_memory) {
      return "optimizer offload needs 'host_cpu' and 'host_memory' in node group '" + g.name + "'";
    }
    if (!cx.cluster.device(g).host_link)
      return "optimizer offload needs the host link of " + g.device + " in its device file";
  }
  if (l.cp > 1) {
    if (cx.task.sequence_length % (2 * l.cp) != 0) {
      return "context parallelism " + std::to_string(l.cp) + " needs the sequence of " +
             std::to_string(cx.task.sequence_length) + " tokens to split into 2 x cp chunks";
    }
    if (cx.task.attention == devices::AttentionKernel::kUnfused)
      return "context parallelism needs fused attention";
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
  if (!l.dp_overlap && cx.task.framework == devices::Framework::kPytorch)
    return "dp_overlap=off is Megatron-LM's; eager PyTorch's DDP and FSDP2 overlap as they run";
  if (!l.grad_fusion && cx.task.framework == devices::Framework::kPytorch)
    return "grad_fusion=off is Megatron-LM's; eager PyTorch's accumulation is priced as it runs";
  if (!l.te && cx.task.framework == devices::Framework::kPytorch)
    return "te=off is Megatron-LM's; eager PyTorch runs without Transformer Engine already";
  if (!l.te && l.tp > 1 && l.sp) {
    // megatron/core/transformer/torch_norm.py asserts it: PyTorch's norms take no sequence
    // parallelism.
    return "te=off runs Megatron-Core's PyTorch norms, which refuse sequence parallelism: "
           "add sp=off";
  }
  if (l.tp_overlap &&
      (cx.task.framework == devices::Framework::kPytorch || !l.te || l.tp < 2 || !l.sp)) {
    return "tp_overlap=on is Transformer Engine's userbuffers under Megatron-LM: it needs tp > 1, "
           "sequence parallelism and te on";
  }
  if (l.tp_overlap && !cx.cluster.device(group(cx)).onchip.compute_units) {
    return "tp_overlap=on prices the SMs userbuffers take: device " +
           cx.cluster.device(group(cx)).name + " gives no onchip.compute_units";
  }
  return {};
}

}  // namespace

MemoryUse training_memory(const TrainContext& cx, const Layout& l) {
  MemoryUse worst;
  for (std::int64_t stage : {std::int64_t{0}, l.pp - 1}) {
    MemoryUse u = stage_memory(cx, l, even_span(cx.task.model, l, stage), micro_batches(cx, l));
    if (u.total() > worst.total() || worst.capacity == 0)
      worst = u;
  }
  return worst;
}

std::variant<PlanEstimate, Rejected> estimate_training(const TrainContext& cx, const Layout& l) {
  if (std::string why = check_shape(cx, l); !why.empty())
    return Rejected{l, why, 0};
  MemoryUse mem = training_memory(cx, l);
  if (l.offload) {
    const devices::NodeGroup& g = group(cx);
    double per_node = mem.host * f(g.devices_per_node);
    if (per_node > g.host_memory->value) {
      return Rejected{l,
                      "offloads " + devices::format_quantity(per_node, devices::Dim::kBytes) +
                          " of optimizer state per node, more than its " +
                          devices::format_quantity(g.host_memory->value, devices::Dim::kBytes) +
                          " of host memory",
                      0};
    }
  }
  if (mem.total() > mem.capacity) {
    return Rejected{l,
                    "needs " + devices::format_quantity(mem.total(), devices::Dim::kBytes) +
                        " per device, more than the " +
                        devices::format_quantity(mem.capacity, devices::Dim::kBytes) + " usable",
                    mem.total() - mem.capacity};
  }
  const devices::DeviceSpec& d = cx.cluster.device(group(cx));
  DeviceContext dcx = device_context(cx, l);
  // Stage neighbours share a node while tp x pp fits in one; otherwise they cross nodes.
  double pp_send = l.pp > 1 ? pp_send_time(cx, l, l.tp * l.pp <= group(cx).devices_per_node) : 0;
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
    StageTimes st = stage_times(cx, l, even_span(cx.task.model, l, s), dcx, pp_send, pp_send);
    if (l.vpp > 1)
      st.pp = 2 * pp_send * v;  // per micro-batch: vpp chunks, each received and sent on
    st.pp += 2 * pipeline_sync(cx, l, dcx);  // after each forward and backward
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
  StageSpan first = even_span(cx.task.model, l, 0);
  // The first stage's parameters (all of them, the head included, without pipelining).
  double stage_params = stage_parameters(cx.task.model, first);
  // With expert parallelism a device holds 1 / ep of the stage's routed experts, whose
  // gradients are synchronised over the dp / ep ranks holding the same experts.
  double routed = stage_routed_parameters(cx.task.model, first);
  double held = stage_params - routed + routed / f(l.ep);
  // Offloaded, the gradients also go down the host link while the last backward runs.
  double opt_params = l.zero >= 1 ? stage_params : held;
  OffloadTimes off = l.offload ? offload_times(cx, l, opt_params) : OffloadTimes{};
  double last_backward = times.front().backward;
  PlanEstimate e;
  e.layout = l;
  e.micro_batches = m;
  e.memory = mem;
  StepBreakdown& b = e.step;
  b.compute = f(m) * slowest->compute;
  b.tp_comm = f(m) * slowest->tp;
  b.pp_comm = f(m) * slowest->pp;
  b.bubble = pipe.total.value - f(m) * (slowest->compute + slowest->tp + slowest->pp);
  b.dp_comm = std::max(cx.task.framework == devices::Framework::kPytorch
                           ? eager_dp_exposed(cx, l, first, m, last_backward, dcx)
                           : megatron_dp_exposed(cx, l, first, last_backward, dcx) +
                                 sharded_dp_exposed(cx, l, held, *slowest, m),
                       off.gradients_down - last_backward);
  b.optimizer =
      l.offload ? off.cpu_step + off.weights_up : optimizer_time(cx, l, opt_params, dcx.efficiency);
  b.total = pipe.total.value + b.dp_comm + b.optimizer;
  b.kernels.add(slowest->kernels, f(m));
  b.host_forward = f(m) * times.front().host_forward;
  // The optimizer's kernels, beside the stages' (FSDP2's foreach copies, profiled as such).
  double step_optimizer = l.offload ? 0 : b.optimizer;
  b.kernels.optimizer += step_optimizer;
  b.first_kernels.add(times.front().kernels, f(m));
  b.first_kernels.optimizer += step_optimizer;
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
  // The layout's devices at the cluster's mean price per device-hour.
  if (std::optional<double> usd = cx.cluster.usd_per_hour())
    e.usd_per_step = *usd / f(cx.cluster.total_devices()) * f(l.devices()) * b.total / 3600;
  e.objective_miss = objective_miss(cx.task.objective, e, l.devices());
  LayerCost typical = typical_layer_cost(cx, l, dcx);
  e.fusions = typical.fusions;
  e.compounds = typical.compounds;
  return e;
}

}  // namespace yirage::planner
