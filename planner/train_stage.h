// The parts of a training step on one pipeline stage (model, not search): the stage's
// layers, memory and times per micro-batch, and the collectives around it. Shared by the
// homogeneous estimate (train_estimate) and pipelines that span device types
// (hetero_pipeline), where each stage runs on its own node group with its own layer count.
#pragma once

#include "costmodel/comm_group.h"
#include "planner/plan.h"
#include "planner/train_estimate.h"
#include "planner/workload/layer_cost.h"

#include <cstdint>
#include <map>
#include <tuple>

namespace yirage::planner {

/// One stage's place in its pipeline and the layers it holds.
struct StageSpan {
  std::int64_t index = 0;   // position in the pipeline, 0 first
  std::int64_t stages = 1;  // the pipeline's length
  std::int64_t first_layer = 0;
  std::int64_t layers = 0;

  bool first() const { return index == 0; }

  bool last() const { return index == stages - 1; }
};

/// Stage `stage` of `l.pp` with the layers split evenly (the first stages take the rest).
StageSpan even_span(const devices::ModelSpec& m, const Layout& l, std::int64_t stage);

/// Seconds and FLOPs of one micro-batch on one device of a stage.
struct StageTimes {
  double compute = 0;  // forward + backward + recomputation
  double forward = 0;
  double backward = 0;      // without recomputation (compute - forward - backward is that)
  double host_forward = 0;  // the host's time to issue the forward, where it is priced
  double tp = 0;            // tensor-parallel (and expert all-to-all) collectives
  double pp = 0;            // pipeline sends and receives
  double flops = 0;         // model FLOPs
  double hw_flops = 0;      // with recomputation
  KernelTime kernels;       // GPU seconds of the kernels by kind, recomputation included
};

/// Parameters held by a stage (all its layers, the embedding on the first stage, the head
/// on the last), and the routed-expert part of them.
double stage_parameters(const devices::ModelSpec& m, const StageSpan& s);
double stage_routed_parameters(const devices::ModelSpec& m, const StageSpan& s);

/// Memory per device of a stage under the layout's tp, ZeRO, recomputation and micro-batch,
/// with `micro_batches` per step (the in-flight count of 1F1B depends on the position).
MemoryUse stage_memory(const TrainContext& cx,
                       const Layout& l,
                       const StageSpan& s,
                       std::int64_t micro_batches);

/// What eager PyTorch's caching allocator keeps beyond `allocator_cache` of the live peak on the
/// stage that computes the loss under tensor parallelism, where DTensor gathers the logits
/// whole: two 16-bit copies of one micro-batch's logits (the all-gather's output and its
/// reassembly), freed before the peak and cached at that size. 0 without tensor parallelism
/// and for other frameworks.
double gathered_logits_cache(const devices::TaskSpec& t, const Layout& l);

/// The segment eager PyTorch's caching allocator takes on a pipeline's last stage at the end of
/// a step, where torch.distributed.pipelining merges every micro-batch's output (16-bit logits,
/// whole under tensor parallelism) into one tensor: its bytes, from three micro-batches on,
/// when no block the loss left cached (one micro-batch's fp32 logits) can hold it; else 0.
/// 0 without pipelining and for other frameworks.
double merged_outputs_segment(const devices::TaskSpec& t, const Layout& l);

/// The device of the context's (first) node group with its calibration and the layout's
/// tensor-parallel group.
DeviceContext device_context(const TrainContext& cx, const Layout& l);

/// The GPU's idle time after each point-to-point exchange of a Megatron-LM pipeline (every
/// forward and backward of a stage ends with one, batched and followed by a device
/// synchronisation), until the host issues the next kernel (GpuEfficiency::megatron_pp_sync).
/// Zero without pipelining, for interleaved schedules (Megatron-LM overlaps their exchanges
/// with the chunks' compute, unsynchronised) and for eager PyTorch.
double pipeline_sync(const TrainContext& cx, const Layout& l, const DeviceContext& dcx);

/// One micro-batch's activations sent to the next stage (`same_node`: over the fabric).
double pp_send_time(const TrainContext& cx, const Layout& l, bool same_node);

/// Times of one micro-batch on a stage; `send_in` and `send_out` are the pipeline transfers
/// received from the previous stage and sent to the next (0 at the ends).
/// Seconds one micro-batch's backward spends accumulating `parameters` weight gradients (one
/// device's share) without Megatron-LM's gradient-accumulation fusion (Layout::grad_fusion),
/// for a step of `micro_batches`.
double megatron_gradient_accumulation(const DeviceContext& dcx,
                                      devices::DType precision,
                                      double parameters,
                                      std::int64_t micro_batches);

StageTimes stage_times(const TrainContext& cx,
                       const Layout& l,
                       const StageSpan& s,
                       const DeviceContext& dcx,
                       double send_in,
                       double send_out);

/// Gradient synchronisation of a device's share of `params` dense parameters over the
/// data-parallel group, and of `expert_params` routed parameters over the dp / ep ranks
/// holding the same experts.
double grad_sync_time(const TrainContext& cx, const Layout& l, double params, double expert_params);

/// Megatron-LM's gradient synchronisation on a device of stage `s` (its DDP with fp32
/// gradient buffers; docs/step-model.md).
struct MegatronSync {
  /// All-reduce, or reduce-scatter under the distributed optimizer (ZeRO 1).
  costmodel::Collective reduction = costmodel::Collective::kAllReduce;
  double local = 0;  // parameters per device (1 / tp, 1 / ep of the routed experts)
  double last = 0;   // of them in the last bucket, reduced after the backward (overlap)
  double gather_bytes =
      0;  // the updated 16-bit weights the distributed optimizer gathers (ZeRO 1-2)
};

MegatronSync megatron_sync(const TrainContext& cx, const Layout& l, const StageSpan& s);

/// The ranks of one data-parallel group (dp x cp ranks holding the same weights).
costmodel::CommGroup dp_group(const TrainContext& cx, const Layout& l);

/// Megatron-LM's data-parallel communication not hidden behind the backward, for a device of
/// stage `s` whose last micro-batch's backward takes `backward` seconds. Its DDP scales every
/// fp32 gradient by 1 / dp on the compute stream, then reduces them (all-reduce; reduce-scatter
/// under the distributed optimizer, ZeRO 1): with overlap (Layout::dp_overlap) in buckets of
/// max(40M, 1M x dp) parameters as the backward makes them ready, the last (the first stage's
/// embedding) after it; without, all of them after it. The distributed optimizer then gathers
/// the updated 16-bit weights, exposed. Of the buckets reduced beside the backward, the step
/// still pays GpuEfficiency::megatron_dp_overlap_cost of their time (megatron_dp_overlapped)
/// (docs/step-model.md).
double megatron_dp_exposed(const TrainContext& cx,
                           const Layout& l,
                           const StageSpan& s,
                           double backward,
                           const DeviceContext& dcx);

/// What overlapping the gradient sync with the backward costs the step on a device of stage
/// `s`: GpuEfficiency::megatron_dp_overlap_cost of the buckets' reduction that runs beside a
/// `backward` seconds long (their time alone, up to `backward`); 0 without overlap.
double megatron_dp_overlapped(const TrainContext& cx,
                              const Layout& l,
                              const StageSpan& s,
                              double backward,
                              const DeviceContext& dcx);

/// Eager PyTorch's data-parallel communication not hidden behind the backward, for a device
/// of stage `s`, `backward` seconds per micro-batch. DDP (ZeRO 0)
/// all-reduces 25 MB buckets beside the last micro-batch's backward, the embedding's gradient
/// (ready last) alone after it, then averages the gradients in place; ZeRO 1 (torch's
/// ZeroRedundancyOptimizer) adds each rank's broadcast of its updated fp32 shard. FSDP2 (ZeRO
/// 2 and 3) gathers the root group (embedding, head, final norm) before each micro-batch's
/// forward and reduce-scatters its gradients after the backward; the layers' collectives are
/// exposed only where they outlast the backward (docs/step-model.md).
double eager_dp_exposed(const TrainContext& cx,
                        const Layout& l,
                        const StageSpan& s,
                        std::int64_t micro_batches,
                        double backward,
                        const DeviceContext& dcx);

/// What ZeRO 2 and 3 exchange around every micro-batch (each backward's gradient
/// reduce-scatter but the last, which is the step's sync; ZeRO 3's weight gathers before each
/// forward and backward) not hidden behind the pass it overlaps.
double sharded_dp_exposed(const TrainContext& cx,
                          const Layout& l,
                          double stage_params,
                          const StageTimes& st,
                          std::int64_t micro_batches);

/// Optimizer offload: a device's share of the gradients down its host link (overlapping the
/// last backward), the host CPUs' optimizer step for the whole node, the updated weights
/// back up (both exposed).
struct OffloadTimes {
  double gradients_down = 0;
  double cpu_step = 0;
  double weights_up = 0;
};

OffloadTimes offload_times(const TrainContext& cx, const Layout& l, double stage_params);

/// The optimizer step over a device's share of `stage_params`.
double optimizer_time(const TrainContext& cx,
                      const Layout& l,
                      double stage_params,
                      const costmodel::GpuEfficiency& eff);

/// One layer's cost for a micro-batch, from the context's cache when it has one.
LayerCost stage_layer_cost(const TrainContext& cx, const LayerShape& s, const DeviceContext& dcx);

/// The cost of the model's typical layer (its MoE layer when every layer is one) for one
/// micro-batch of layout `l`: where a plan's fusion decisions and emitted kernels come from.
LayerCost typical_layer_cost(const TrainContext& cx, const Layout& l, const DeviceContext& dcx);

/// Layer costs of a search, keyed by (tp, cp, micro-batch, MoE layer): every layout of a search
/// with the same three prices the same layer, so the search prices it once. One cache per
/// device type and task (sequence length, precision, calibration); the batch may change.
/// Not shared between threads.
class LayerCostCache {
 public:
  const LayerCost& get(const devices::ModelSpec& m, const LayerShape& s, const DeviceContext& dcx);
  /// The output head's cost (head_cost) for the shape.
  const LayerCost& head(const devices::ModelSpec& m, const LayerShape& s, const DeviceContext& dcx);

 private:
  // (tp, cp, micro-batch, 0 dense layer / 1 MoE layer / 2 head)
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, int>, LayerCost> costs_;
};

}  // namespace yirage::planner
