#include "tests/unit/test_data.h"

#include "devices/cluster_loader.h"
#include "devices/task_loader.h"
#include "planner/search.h"
#include "planner/train_estimate.h"
#include "planner/train_stage.h"
#include "planner/workload/eager_traffic.h"
#include "planner/workload/pricer.h"
#include "planner/workload/tp_overlap.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace yirage::planner {
namespace {

const costmodel::CalibrationSet kNoCalibration;

TEST(Layout, ParsesAndPrints) {
  Layout l;
  ASSERT_EQ(parse_layout("tp=8,pp=4,dp=32,mb=1,recompute=selective,zero=1", &l), "");
  EXPECT_EQ(l.str(), "tp=8,pp=4,dp=32,mb=1,recompute=selective,zero=1");
  ASSERT_EQ(parse_layout("tp=8,pp=4,vpp=2", &l), "");
  EXPECT_EQ(l.str(), "tp=8,pp=4,dp=1,mb=1,recompute=none,zero=0,vpp=2");
  ASSERT_EQ(parse_layout("tp=8,cp=2,sp=off", &l), "");
  EXPECT_EQ(l.str(), "tp=8,pp=1,dp=1,mb=1,recompute=none,zero=0,cp=2,sp=off");
  EXPECT_EQ(l.devices(), 16);
  EXPECT_EQ(
      parse_layout("tp=8,xp=2", &l),
      "unknown layout key 'xp' (keys: tp, pp, dp, mb, recompute, zero, vpp, ep, cp, sp, offload, "
      "dp_overlap, grad_fusion, te, tp_overlap)");
  ASSERT_EQ(parse_layout("tp=4,tp_overlap=on", &l), "");
  EXPECT_TRUE(l.tp_overlap);
  EXPECT_EQ(l.str(), "tp=4,pp=1,dp=1,mb=1,recompute=none,zero=0,tp_overlap=on");
  ASSERT_EQ(parse_layout("tp=8,dp=4,dp_overlap=off", &l), "");
  EXPECT_FALSE(l.dp_overlap);
  EXPECT_EQ(l.str(), "tp=8,pp=1,dp=4,mb=1,recompute=none,zero=0,dp_overlap=off");
  ASSERT_EQ(parse_layout("tp=2,grad_fusion=off", &l), "");
  EXPECT_FALSE(l.grad_fusion);
  EXPECT_EQ(l.str(), "tp=2,pp=1,dp=1,mb=1,recompute=none,zero=0,grad_fusion=off");
  EXPECT_EQ(parse_layout("grad_fusion=no", &l), "grad_fusion must be on or off, got 'no'");
  ASSERT_EQ(parse_layout("te=off,grad_fusion=off", &l), "");
  EXPECT_FALSE(l.te);
  EXPECT_EQ(l.str(), "tp=1,pp=1,dp=1,mb=1,recompute=none,zero=0,grad_fusion=off,te=off");
  EXPECT_EQ(parse_layout("sp=yes", &l), "sp must be on or off, got 'yes'");
  EXPECT_EQ(parse_layout("tp=0", &l), "tp must be at least 1");
  EXPECT_EQ(parse_layout("tp=8,pp=2,tp=4", &l), "'tp' is given twice");
  EXPECT_EQ(parse_layout("tp=2097152", &l), "tp must be at most 1048576");
  EXPECT_EQ(parse_layout("mb=99999999999999999999", &l),
            "'99999999999999999999' for mb is not a whole number");
}

// An odd sequence length (no context parallelism can split it) still searches every other
// layout: it used to search none and say that nothing fits.
TEST(TrainSearch, AnOddSequenceLengthStillHasLayouts) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  for (std::int64_t seq : {7, 2049, 8191}) {
    t.sequence_length = seq;
    TrainContext cx{c, t, kNoCalibration};
    std::vector<Layout> space = training_space(cx);
    ASSERT_FALSE(space.empty()) << seq;
    for (const Layout& l : space)
      EXPECT_EQ(l.cp, 1) << seq;
  }
}

TEST(TrainMemory, MatchesKorthikantiForGpt3WithFullRecompute) {
  // GPT-3 175B, t = 8, full recomputation: the stored activations are the layer inputs,
  // 2sbh / t bytes per layer (Korthikanti et al. 2022, Table 2), for every in-flight
  // micro-batch, plus one layer's full set during recomputation.
  devices::ClusterSpec c = testing::example_cluster("h100-128x8");
  devices::TaskSpec t = testing::example_task("gpt3-175b-train");
  TrainContext cx{c, t, kNoCalibration};
  Layout l{16, 8, 8, 1, Recompute::kFull, 1};
  MemoryUse m = training_memory(cx, l);
  double sbh = 2048.0 * 1 * 12288;
  double per_layer_full = 2 * sbh / 8;
  EXPECT_GT(m.activations, per_layer_full * 12 * 8);
  // Weights: 96/8 layers of 12h^2 + 13h parameters, bf16, over t = 8, plus the embedding.
  EXPECT_NEAR(m.weights,
              (12 * (12.0 * 12288 * 12288 + 13 * 12288) + 50257.0 * 12288 + 2048.0 * 12288) * 2 / 8,
              1e8);
}

TEST(TrainPlan, InfeasibleLayoutsSayWhy) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  TrainContext cx{c, t, kNoCalibration};
  auto r = estimate_training(cx, Layout{1, 8, 2, 1, Recompute::kNone, 0});
  ASSERT_TRUE(std::holds_alternative<Rejected>(r));
  EXPECT_EQ(std::get<Rejected>(r).reason, "uses 16 devices, the cluster has 8");
  auto mem = estimate_training(cx, Layout{8, 1, 1, 16, Recompute::kNone, 0});
  ASSERT_TRUE(std::holds_alternative<Rejected>(mem));
  EXPECT_GT(std::get<Rejected>(mem).shortfall, 0);
}

TEST(TrainPlan, StepAddsUpAndMfuIsBelowOne) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  TrainContext cx{c, t, kNoCalibration};
  SearchResult r = search_training(cx);
  ASSERT_FALSE(r.plans.empty());
  for (const PlanEstimate& p : r.plans) {
    const StepBreakdown& b = p.step;
    EXPECT_NEAR(b.total, b.compute + b.tp_comm + b.pp_comm + b.bubble + b.dp_comm + b.optimizer,
                1e-9 * b.total);
    EXPECT_GT(p.mfu, 0);
    EXPECT_LT(p.mfu, 1);
    EXPECT_GE(p.hfu, p.mfu * (1 - 1e-12));
    EXPECT_LE(p.memory.total(), p.memory.capacity);
  }
  for (std::size_t i = 1; i < r.plans.size(); ++i) {
    EXPECT_LE(r.plans[i - 1].step.total, r.plans[i].step.total);
  }
}

// A Megatron-LM switch of a layout (Layout::dp_overlap, grad_fusion, te), priced on and off
// for Llama 3 8B on 32 H100s.
struct Switched {
  devices::ClusterSpec cluster = testing::example_cluster("h100-4x8-rail");
  devices::TaskSpec task = testing::example_task("llama3-8b-train");
  Layout on;
  Layout off;
  StepBreakdown step_on;
  StepBreakdown step_off;

  Switched(const char* layout, bool Layout::*flag) {
    EXPECT_EQ(parse_layout(layout, &on), "");
    off = on;
    off.*flag = false;
    TrainContext cx{cluster, task, kNoCalibration};
    auto a = estimate_training(cx, on);
    auto b = estimate_training(cx, off);
    EXPECT_TRUE(std::holds_alternative<PlanEstimate>(a));
    EXPECT_TRUE(std::holds_alternative<PlanEstimate>(b));
    if (const auto* p = std::get_if<PlanEstimate>(&a))
      step_on = p->step;
    if (const auto* p = std::get_if<PlanEstimate>(&b))
      step_off = p->step;
  }

  // Why eager PyTorch refuses the switch off (it has no such option).
  std::string eager_refusal() const {
    devices::TaskSpec eager = task;
    eager.framework = devices::Framework::kPytorch;
    TrainContext cx{cluster, eager, kNoCalibration};
    auto r = estimate_training(cx, off);
    const auto* rejected = std::get_if<Rejected>(&r);
    return rejected ? rejected->reason : "(not refused)";
  }
};

// Without overlap (Megatron-LM's train_step before --overlap-grad-reduce) the whole gradient
// reduction follows the backward; with it, only the last bucket and what the last backward
// does not cover. Either way the gradients are first scaled by 1 / dp, and the distributed
// optimizer (ZeRO 1) reduce-scatters them and gathers the updated 16-bit weights after its step.
TEST(TrainPlan, GradientSyncWithoutOverlapFollowsTheBackward) {
  Switched s("tp=1,pp=1,dp=32,mb=1,recompute=full,zero=1", &Layout::dp_overlap);
  TrainContext cx{s.cluster, s.task, kNoCalibration};
  const StepBreakdown& hidden = s.step_on;
  const StepBreakdown& exposed = s.step_off;
  StageSpan span = even_span(s.task.model, s.on, 0);
  double sync = grad_sync_time(cx, s.on, stage_parameters(s.task.model, span), 0);
  MegatronSync g = megatron_sync(cx, s.off, span);
  EXPECT_EQ(g.reduction, costmodel::Collective::kReduceScatter);
  EXPECT_EQ(g.last, 0);
  EXPECT_GT(megatron_sync(cx, s.on, span).last, 0);
  EXPECT_NEAR(g.gather_bytes, g.local * 2, 1e-9 * g.gather_bytes);
  costmodel::CommGroup dp = dp_group(cx, s.off);
  double gather =
      costmodel::estimate_collective(dp, costmodel::Collective::kAllGather, g.gather_bytes)
          .latency()
          .value;
  double scale = eager_stream_time(device_context(cx, s.off), 8 * g.local);
  EXPECT_GT(sync, 0);
  EXPECT_NEAR(exposed.dp_comm, scale + sync + gather, 1e-9 * sync);
  EXPECT_LT(hidden.dp_comm, exposed.dp_comm);
  EXPECT_NEAR(exposed.total - hidden.total, exposed.dp_comm - hidden.dp_comm, 1e-9 * exposed.total);
  // Eager PyTorch has no such option: refused, not ignored.
  EXPECT_EQ(s.eager_refusal(),
            "dp_overlap=off is Megatron-LM's; eager PyTorch's DDP and FSDP2 overlap as they run");
}

// Megatron-LM's DDP reduces its buckets as the backward makes them ready; the first stage's
// last bucket is the embedding (ready last, larger than a bucket), a later stage's one bucket
// of max(40M, 1M x dp) parameters. Plain data parallelism all-reduces; the distributed
// optimizer reduce-scatters, then gathers the 16-bit weights; eager PyTorch is priced apart.
TEST(TrainPlan, MegatronSyncBucketsAndGather) {
  devices::ClusterSpec c = testing::example_cluster("h100-128x8");
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  TrainContext cx{c, t, kNoCalibration};
  Layout l;
  ASSERT_EQ(parse_layout("tp=2,pp=2,dp=64,mb=1,recompute=none,zero=0", &l), "");
  double embedding = 128256.0 * 4096 / 2;  // the vocabulary's rows, halved by tp
  MegatronSync first = megatron_sync(cx, l, even_span(t.model, l, 0));
  EXPECT_EQ(first.reduction, costmodel::Collective::kAllReduce);
  EXPECT_NEAR(first.last, embedding, 1e-9 * embedding);
  EXPECT_EQ(first.gather_bytes, 0);
  MegatronSync later = megatron_sync(cx, l, even_span(t.model, l, 1));
  EXPECT_EQ(later.last, 64e6);  // 1M x dp > 40M
  l.zero = 1;
  MegatronSync sharded = megatron_sync(cx, l, even_span(t.model, l, 1));
  EXPECT_EQ(sharded.reduction, costmodel::Collective::kReduceScatter);
  EXPECT_NEAR(sharded.gather_bytes, 2 * sharded.local, 1e-9 * sharded.gather_bytes);
  // Priced: the scaling, the last bucket and the gather are exposed, more than under ZeRO 0.
  DeviceContext dcx = device_context(cx, l);
  StageSpan span = even_span(t.model, l, 1);
  Layout plain = l;
  plain.zero = 0;
  EXPECT_GT(megatron_dp_exposed(cx, l, span, 1.0, dcx),
            megatron_dp_exposed(cx, plain, span, 1.0, dcx));
  // A pipeline's synchronised exchanges: Megatron-LM's plain pipelines only.
  costmodel::GpuEfficiency e;
  e.megatron_pp_sync = devices::Seconds{100e-6};
  dcx.efficiency = e;
  EXPECT_EQ(pipeline_sync(cx, l, dcx), 100e-6);
  Layout interleaved = l;
  interleaved.vpp = 2;
  EXPECT_EQ(pipeline_sync(cx, interleaved, dcx), 0);
  devices::TaskSpec eager = t;
  eager.framework = devices::Framework::kPytorch;
  EXPECT_EQ(pipeline_sync(TrainContext{c, eager, kNoCalibration}, l, dcx), 0);
}

// Overlapped, the buckets reduced beside the backward cost the step a calibrated share of
// their time alone (GpuEfficiency::megatron_dp_overlap_cost), never more than the backward
// they run beside; without overlap, or without data parallelism, nothing.
TEST(TrainPlan, OverlappedBucketsCostTheirShareOfTheBackward) {
  devices::ClusterSpec c = testing::example_cluster("h100-128x8");
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  TrainContext cx{c, t, kNoCalibration};
  Layout l;
  ASSERT_EQ(parse_layout("tp=2,pp=2,dp=64,mb=1,recompute=none,zero=1", &l), "");
  StageSpan span = even_span(t.model, l, 1);
  DeviceContext dcx = device_context(cx, l);
  double free = megatron_dp_exposed(cx, l, span, 10.0, dcx);
  EXPECT_EQ(megatron_dp_overlapped(cx, l, span, 10.0, dcx), 0);
  // At a cost of 1 the buckets beside a long backward cost their whole time: less than the
  // whole reduction (the last bucket follows the backward).
  dcx.efficiency.megatron_dp_overlap_cost = 1;
  double hidden = megatron_dp_overlapped(cx, l, span, 10.0, dcx);
  double all = grad_sync_time(cx, l, stage_parameters(t.model, span), 0);
  EXPECT_GT(hidden, 0);
  EXPECT_LT(hidden, all);
  // A shorter backward bounds it.
  EXPECT_NEAR(megatron_dp_overlapped(cx, l, span, hidden / 4, dcx), hidden / 4, 1e-12);
  dcx.efficiency.megatron_dp_overlap_cost = 0.5;
  EXPECT_NEAR(megatron_dp_overlapped(cx, l, span, 10.0, dcx), 0.5 * hidden, 1e-12);
  EXPECT_NEAR(megatron_dp_exposed(cx, l, span, 10.0, dcx) - free, 0.5 * hidden, 1e-12);
  Layout off = l;
  off.dp_overlap = false;
  EXPECT_EQ(megatron_dp_overlapped(cx, off, span, 10.0, dcx), 0);
  Layout single = l;
  single.dp = 1;
  EXPECT_EQ(megatron_dp_overlapped(cx, single, span, 10.0, dcx), 0);
}

// Without gradient-accumulation fusion each micro-batch's backward accumulates the weight
// gradients of the stage's tensor-parallel shard: bf16 runs add the 16-bit gradient into the
// fp32 main gradient every micro-batch (10 B per parameter, PyTorch's mixed-dtype loop); fp16
// runs (Megatron-LM of 2021, Megatron-DeepSpeed) add 16-bit gradients from the second on (6 B).
TEST(TrainPlan, WithoutGradientFusionLaterMicroBatchesAddTheirGradients) {
  Switched s("tp=8,pp=4,dp=1,mb=2,recompute=full,zero=1", &Layout::grad_fusion);
  TrainContext cx{s.cluster, s.task, kNoCalibration};
  DeviceContext dcx = device_context(cx, s.on);
  StageSpan span = even_span(s.task.model, s.on, 1);
  StageTimes fused = stage_times(cx, s.on, span, dcx, 0, 0);
  StageTimes added = stage_times(cx, s.off, span, dcx, 0, 0);
  std::int64_t mbs = s.task.global_batch / s.on.micro_batch;
  double shard = stage_parameters(s.task.model, span) / 8;
  double bf16 = eager_stream_time(dcx, 10 * shard, 10 * shard);
  EXPECT_GT(bf16, 0);
  EXPECT_NEAR(added.backward - fused.backward, bf16, 1e-9 * added.backward);
  EXPECT_NEAR(added.compute - fused.compute, bf16, 1e-9 * added.compute);
  EXPECT_GT(s.step_off.total, s.step_on.total);
  EXPECT_DOUBLE_EQ(
      megatron_gradient_accumulation(dcx, devices::DType::kFp16, shard, mbs),
      eager_stream_time(dcx, 6 * shard * static_cast<double>(mbs - 1) / static_cast<double>(mbs)));
  // fp16 with one micro-batch per step: nothing to add.
  EXPECT_EQ(megatron_gradient_accumulation(dcx, devices::DType::kFp16, shard, 1), 0);
  // Eager PyTorch accumulates as it runs: refused, not ignored.
  EXPECT_EQ(s.eager_refusal(),
            "grad_fusion=off is Megatron-LM's; eager PyTorch's accumulation is priced as it runs");
}

// On Megatron-Core's own modules (no Transformer Engine) the layer's pointwise pieces run as
// PyTorch's kernels and the optimizer as torch's foreach AdamW: both priced from their bytes at
// the device's stream rates, so the step is slower, and nothing else moves.
TEST(TrainPlan, WithoutTransformerEngineThePointwiseKernelsAndOptimizerRunUnfused) {
  Switched s("tp=8,pp=4,dp=1,mb=2,recompute=none,zero=1,sp=off", &Layout::te);
  TrainContext cx{s.cluster, s.task, kNoCalibration};
  DeviceContext te = device_context(cx, s.on);
  DeviceContext local = device_context(cx, s.off);
  EXPECT_FALSE(te.megatron_local);
  EXPECT_TRUE(local.megatron_local);
  EXPECT_FALSE(local.fuse);
  LayerShape shape{2, s.task.sequence_length, 8};
  LayerCost fused = layer_cost(s.task.model, shape, te);
  LayerCost unfused = layer_cost(s.task.model, shape, local);
  for (const std::string& f : unfused.fusions)
    EXPECT_EQ(f.find(": fused"), std::string::npos) << f;
  EXPECT_GT(unfused.forward_kernels.memory, fused.forward_kernels.memory);
  EXPECT_GT(unfused.backward_kernels.memory, fused.backward_kernels.memory);
  // The same matrix products (gate and up in one GEMM either way; the compound also counts
  // SiLU's few FLOPs), the same attention.
  EXPECT_NEAR(unfused.flops_forward, fused.flops_forward, 1e-3 * fused.flops_forward);
  EXPECT_DOUBLE_EQ(unfused.attention_forward, fused.attention_forward);
  EXPECT_GT(s.step_off.total, s.step_on.total);
  // The optimizer: 106 B per parameter of the device's share at the elementwise rate.
  double params = stage_parameters(s.task.model, even_span(s.task.model, s.on, 0));
  double share = params / 8 / 1;  // ZeRO-1 over dp = 1
  EXPECT_DOUBLE_EQ(optimizer_time(cx, s.off, params, local.efficiency),
                   eager_stream_time(local, 106 * share) + local.efficiency.launch.value);
  EXPECT_LT(optimizer_time(cx, s.on, params, te.efficiency),
            optimizer_time(cx, s.off, params, local.efficiency));
  EXPECT_EQ(s.eager_refusal(),
            "te=off is Megatron-LM's; eager PyTorch runs without Transformer Engine already");
  // Megatron-Core's PyTorch norms refuse sequence parallelism.
  Layout sp = s.off;
  sp.sp = true;
  auto refused = estimate_training(cx, sp);
  ASSERT_TRUE(std::holds_alternative<Rejected>(refused));
  EXPECT_EQ(std::get<Rejected>(refused).reason,
            "te=off runs Megatron-Core's PyTorch norms, which refuse sequence parallelism: add "
            "sp=off");
  // And on an 8-GPU node without a pipeline, its SwiGLU keeps SiLU's output too: 2 B per
  // element of the FFN width, every layer, one micro-batch in flight.
  devices::ClusterSpec node = testing::example_cluster("dgx-h100");
  TrainContext one{node, s.task, kNoCalibration};
  Layout on;
  ASSERT_EQ(parse_layout("tp=8,pp=1,dp=1,mb=2,recompute=none,zero=0,sp=off", &on), "");
  Layout off = on;
  off.te = false;
  const devices::ModelSpec& m = s.task.model;
  double silu = 2.0 * static_cast<double>(s.task.sequence_length) * static_cast<double>(m.ffn) / 8 *
                2 * static_cast<double>(m.layers);
  EXPECT_NEAR(training_memory(one, off).activations - training_memory(one, on).activations, silu,
              1e-6 * silu);
  // With Megatron-LM's unfused attention at 4,096 tokens (the compiled kernel's longest),
  // te=off's softmax (PyTorch's path) keeps fp32 probabilities where the compiled kernel keeps
  // 16-bit ones: 2 B more per score. At 8,192 tokens both run that path.
  devices::TaskSpec task = s.task;
  task.attention = devices::AttentionKernel::kUnfused;
  ASSERT_GT(task.sequence_length, 4096);
  TrainContext longer{node, task, kNoCalibration};
  EXPECT_NEAR(training_memory(longer, off).activations - training_memory(longer, on).activations,
              silu, 1e-6 * silu);
  task.sequence_length = 4096;
  TrainContext with_scores{node, task, kNoCalibration};
  double scores =
      2.0 * static_cast<double>(m.heads / 8) * 4096.0 * 4096 * 2 * static_cast<double>(m.layers);
  EXPECT_NEAR(training_memory(with_scores, off).activations -
                  training_memory(with_scores, on).activations - silu / 2,
              scores, 1e-6 * scores);
}

// Megatron-LM's host issue time per kernel (GpuEfficiency::megatron_host) binds a training
// pass whose kernels are short, a device's own `host` (fitted on whole iterations) before it;
// inference passes are not Megatron-LM's and do not pay it.
TEST(TrainPlan, MegatronHostIssueBindsShortTrainingPasses) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  const devices::ModelSpec& m = testing::example_task("llama3-8b-train").model;
  DeviceContext dcx{c.device(c.groups.front()), {}, devices::DType::kBf16, std::nullopt};
  LayerShape s{1, 128, 1};
  LayerCost gpu = layer_cost(m, s, dcx);
  dcx.efficiency.megatron_host = devices::Seconds{1e-3};
  LayerCost issued = layer_cost(m, s, dcx);
  EXPECT_GT(issued.forward, gpu.forward);
  EXPECT_GE(issued.forward, 5e-3);  // several kernels of 1 ms each
  // Its backward is issued in about the forward's time (autograd replays it in C++).
  EXPECT_NEAR(issued.backward, kMegatronBackwardIssue * issued.forward, 1e-12);
  dcx.efficiency.host = devices::Seconds{2e-3};
  EXPECT_NEAR(layer_cost(m, s, dcx).forward, 2 * issued.forward, 1e-12);
  dcx.efficiency.host = {};
  s.inference = true;
  DeviceContext plain{c.device(c.groups.front()), {}, devices::DType::kBf16, std::nullopt};
  EXPECT_EQ(layer_cost(m, s, dcx).forward, layer_cost(m, s, plain).forward);
  s.inference = false;
  // Megatron-Core's own pointwise pieces (te=off) are plain PyTorch operations: the host issues
  // them at megatron_op_host, the modules' calls at megatron_host (both where it binds).
  DeviceContext local = dcx;
  local.megatron_local = true;
  local.fuse = false;
  local.efficiency.megatron_host = devices::Seconds{1};
  double every = layer_cost(m, s, local).forward;
  local.efficiency.megatron_op_host = devices::Seconds{1e-3};
  EXPECT_NEAR(every - layer_cost(m, s, local).forward,
              static_cast<double>(local_layer_operations(m)) * (1 - 1e-3), 1e-9);
}

TEST(TrainPlan, PipelineBubbleFollowsMegatron) {
  // With p stages and m micro-batches the bubble is (p - 1) / m of the ideal time when the
  // stages are balanced (Narayanan et al. 2021).
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  TrainContext cx{c, t, kNoCalibration};
  auto r = estimate_training(cx, Layout{1, 8, 4, 1, Recompute::kFull, 0});
  ASSERT_TRUE(std::holds_alternative<PlanEstimate>(r));
  const StepBreakdown& b = std::get<PlanEstimate>(r).step;
  double ideal = b.compute + b.tp_comm + b.pp_comm;
  EXPECT_NEAR(b.bubble / ideal, 3.0 / 512, 0.01);  // 80 layers in 4 even stages, m = 512
}

TEST(TrainPlan, InterleavingDividesTheBubbleAndGrowsSendsAndMemory) {
  // Narayanan et al. 2021, §2.2: with v chunks per device the bubble is (p - 1) / (v m) and
  // every chunk boundary sends; the first stage keeps p + (p - 1) / v micro-batches of
  // activations (Megatron-LM's warm-up), against p without interleaving.
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  TrainContext cx{c, t, kNoCalibration};
  auto plain = estimate_training(cx, Layout{1, 8, 4, 1, Recompute::kSelective, 0, 1});
  auto two = estimate_training(cx, Layout{1, 8, 4, 1, Recompute::kSelective, 0, 2});
  ASSERT_TRUE(std::holds_alternative<PlanEstimate>(plain));
  ASSERT_TRUE(std::holds_alternative<PlanEstimate>(two));
  const PlanEstimate& a = std::get<PlanEstimate>(plain);
  const PlanEstimate& b = std::get<PlanEstimate>(two);
  EXPECT_NEAR(b.step.bubble / a.step.bubble, 0.5, 0.02);
  EXPECT_GT(b.step.pp_comm, 2 * a.step.pp_comm);
  EXPECT_NEAR(b.memory.activations / a.memory.activations, (4 + 3.0 / 2) / 4, 0.01);
  auto bad = estimate_training(cx, Layout{1, 8, 4, 1, Recompute::kSelective, 0, 3});
  ASSERT_TRUE(std::holds_alternative<Rejected>(bad));
  EXPECT_EQ(std::get<Rejected>(bad).reason,
            "interleaving needs the 80 layers to divide into pp x vpp = 12 chunks");
}

TEST(TrainPlan, ExpertParallelismSplitsTheExpertsAndAddsAllToAll) {
  // Mixtral 8x7B: the routed experts are most of the parameters. Split over ep = 8 ranks a
  // device keeps 1/8 of them, and each MoE layer adds all-to-all dispatch and combine.
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  devices::TaskSpec t = testing::example_task("mixtral-8x7b-train");
  TrainContext cx{c, t, kNoCalibration};
  Layout one{16, 2, 1, 1, Recompute::kSelective, 1, 1, 1};
  Layout eight{16, 2, 1, 1, Recompute::kSelective, 1, 1, 8};
  MemoryUse m1 = training_memory(cx, one);
  MemoryUse m8 = training_memory(cx, eight);
  EXPECT_LT(m8.weights, 0.3 * m1.weights);
  auto e = estimate_training(cx, eight);
  ASSERT_TRUE(std::holds_alternative<PlanEstimate>(e));
  EXPECT_GT(std::get<PlanEstimate>(e).step.tp_comm, 0);  // tp = 2 collectives and all-to-all
  auto dense = estimate_training(
      cx, Layout{16, 2, 1, 1, Recompute::kSelective, 1, 1, 3});  // 3 divides neither
  ASSERT_TRUE(std::holds_alternative<Rejected>(dense));
  EXPECT_EQ(std::get<Rejected>(dense).reason,
            "expert parallelism 3 must divide dp (16) and the 8 experts");
}

TEST(TrainPlan, SearchIsDeterministic) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  TrainContext cx{c, t, kNoCalibration};
  SearchResult a = search_training(cx);
  SearchResult b = search_training(cx);
  ASSERT_EQ(a.plans.size(), b.plans.size());
  for (std::size_t i = 0; i < a.plans.size(); ++i) {
    EXPECT_EQ(a.plans[i].layout, b.plans[i].layout);
    EXPECT_EQ(a.plans[i].step.total, b.plans[i].step.total);
  }
}

TEST(TrainPlan, MixedClustersAreNotPlannedYet) {
  EXPECT_NE(unsupported_reason(testing::example_cluster("mixed-h100-mi300x-910b"),
                               testing::example_task("mixtral-8x7b-train")),
            "");
  EXPECT_EQ(unsupported_reason(testing::example_cluster("dgx-h100"),
                               testing::example_task("llama3-8b-train")),
            "");
}

}  // namespace
}  // namespace yirage::planner

namespace yirage::planner {
namespace {

TEST(ContextParallel, SplitsActivationsAndShardsStateOverDpTimesCp) {
  devices::ClusterSpec c = testing::example_cluster("h100-128x8");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  TrainContext cx{c, t, kNoCalibration};
  Layout one{32, 8, 4, 1, Recompute::kSelective, 1};
  Layout two = one;
  two.dp = 16;
  two.cp = 2;
  MemoryUse m1 = training_memory(cx, one);
  MemoryUse m2 = training_memory(cx, two);
  // Half the tokens per rank; the output logits are the only part that is not per layer.
  EXPECT_NEAR(m2.activations / m1.activations, 0.5, 0.02);
  // ZeRO-1 shards the optimizer over dp x cp = 32 ranks in both.
  EXPECT_DOUBLE_EQ(m2.optimizer, m1.optimizer);
  auto e = estimate_training(cx, two);
  ASSERT_TRUE(std::holds_alternative<PlanEstimate>(e));
}

TEST(ContextParallel, TheSearchPrefersItOnLongSequences) {
  devices::ClusterSpec c = testing::example_cluster("h100-128x8");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  t.sequence_length = 131072;
  t.global_batch = 32;
  TrainContext cx{c, t, kNoCalibration};
  SearchResult r = search_training(cx);
  ASSERT_FALSE(r.plans.empty());
  // Without it, 128K-token sequences need deep tensor and pipeline parallelism and
  // recomputation; with it, each rank holds a slice of every sequence.
  EXPECT_GT(r.plans.front().layout.cp, 1) << r.plans.front().layout.str();
  auto without = std::find_if(r.plans.begin(), r.plans.end(),
                              [](const PlanEstimate& p) { return p.layout.cp == 1; });
  ASSERT_NE(without, r.plans.end());
  EXPECT_GT(without->step.total, 1.2 * r.plans.front().step.total);
  // A sequence that does not split into 2 x cp chunks is refused by name.
  t.sequence_length = 131070;
  auto bad = estimate_training(cx, Layout{16, 8, 1, 1, Recompute::kNone, 1, 1, 1, 8});
  ASSERT_TRUE(std::holds_alternative<Rejected>(bad));
  EXPECT_NE(std::get<Rejected>(bad).reason.find("2 x cp chunks"), std::string::npos);
}

// Transformer Engine's ring (context_parallel.py): a rank's own two chunks attended causally,
// then cp - 1 non-causal tiles of half its keys; the tiles' work is the rank's share of the
// causal whole, and the merges between the steps move 12 + 7.5 (cp - 1) bytes an output
// element forward, (4 + 4.5 (cp - 1)) a q, k and v element backward.
TEST(ContextParallel, AttentionRunsAsTheRingsTilesAndMerges) {
  LayerShape s{1, 4096, 1};
  s.cp = 4;
  std::vector<CpAttentionTile> tiles = cp_attention_tiles(s, 32, 8, 128);
  ASSERT_EQ(tiles.size(), 2u);
  EXPECT_TRUE(tiles[0].causal);
  EXPECT_EQ(tiles[0].dims, (std::vector<std::int64_t>{1, 32, 8, 4096, 4096, 128}));
  EXPECT_FALSE(tiles[1].causal);
  EXPECT_EQ(tiles[1].count, 3);
  EXPECT_EQ(tiles[1].dims, (std::vector<std::int64_t>{1, 32, 8, 4096, 2048, 128}));
  double work = 4096.0 * 4096 / 2 + 3 * 4096.0 * 2048;  // query-key pairs
  double whole = 16384.0 * 16384 / 2;
  EXPECT_DOUBLE_EQ(work, whole / 4);
  PassTime bytes = cp_merge_bytes(s, 32, 8, 128);
  double q = 4096.0 * 32 * 128;
  double k = 4096.0 * 8 * 128;
  EXPECT_DOUBLE_EQ(bytes.forward, q * (12 + 7.5 * 3));
  EXPECT_DOUBLE_EQ(bytes.backward, (q + 2 * k) * (4 + 4.5 * 3));
  // Priced so, a context-parallel layer's attention costs more than one kernel of the same
  // work (the causal diagonal and the merges).
  devices::ClusterSpec c = testing::example_cluster("h100-128x8");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  TrainContext cx{c, t, kNoCalibration};
  Layout l{16, 8, 1, 1, Recompute::kNone, 1};
  l.cp = 2;
  DeviceContext dcx = device_context(cx, l);
  Pricer p(dcx);
  LayerShape two{1, t.sequence_length / 2, 8};
  two.cp = 2;
  double ring = attention_time(p, two, 8, 1, 128).time;
  double one =
      price(dcx, "attention", {1, 8, 1, t.sequence_length / 2, t.sequence_length / 2, 128}, false)
          .time.value;
  EXPECT_GT(ring, one);
  EXPECT_GT(p.forward_kernels().memory, 0);  // the merges
}

// Transformer Engine's userbuffers (tp_overlap.h): behind GEMMs longer than the collectives,
// only the reduce-scatters' last splits stay exposed, the projections pay the SMs the
// reduce-scatters take, and every GEMM what running in chunks costs; behind short GEMMs the
// collectives show.
TEST(TpOverlap, HidesCollectivesBehindTheGemmsAndTakesTheirSms) {
  auto same = [](double t) {
    return TpGemm{t, t, t};
  };
  TpGemms long_gemms{same(1e-3), same(1e-3), same(4e-3), same(2e-3)};
  TpOverlapCost o = tp_overlap_cost(1e-4, 1e-4, long_gemms, 4, 132);
  EXPECT_DOUBLE_EQ(o.exposed_forward, 2 * 1e-4 / 4);
  EXPECT_DOUBLE_EQ(o.exposed_backward, 0);
  EXPECT_NEAR(o.slower_forward, 1e-3 * 24 / 108 + 2e-3 * 16 / 116, 1e-15);
  EXPECT_NEAR(o.slower_backward, 1e-4 * (4 + 24 + 2 + 4) / 132, 1e-15);
  TpGemms chunked = long_gemms;
  chunked.qkv.chunks = 1.1e-3;  // 4 GEMMs of a quarter of the rows, 10% slower
  chunked.fc2.chunks = 2.2e-3;
  TpOverlapCost split = tp_overlap_cost(1e-4, 1e-4, chunked, 4, 132);
  EXPECT_NEAR(split.slower_forward - o.slower_forward, 1e-4, 1e-15);    // the QKV's chunks
  EXPECT_NEAR(split.slower_backward - o.slower_backward, 2e-4, 1e-15);  // the down's gradient
  TpOverlapCost shown = tp_overlap_cost(1e-2, 1e-2, long_gemms, 4, 132);
  EXPECT_GT(shown.exposed_forward + shown.exposed_backward, 2 * 1e-2);
  // In a step: less tensor-parallel time, more GEMM time, and a faster step where the
  // collectives were exposed; refused where userbuffers cannot run.
  devices::ClusterSpec c = testing::example_cluster("h100-128x8");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  TrainContext cx{c, t, kNoCalibration};
  Layout off{32, 8, 4, 1, Recompute::kSelective, 1};
  Layout on = off;
  on.tp_overlap = true;
  auto a = std::get<PlanEstimate>(estimate_training(cx, off));
  auto b = std::get<PlanEstimate>(estimate_training(cx, on));
  EXPECT_LT(b.step.tp_comm, 0.5 * a.step.tp_comm);
  EXPECT_GT(b.step.compute, a.step.compute);
  EXPECT_LT(b.step.total, a.step.total);
  Layout one = on;
  one.tp = 1;
  one.dp = 256;
  auto refused = estimate_training(cx, one);
  ASSERT_TRUE(std::holds_alternative<Rejected>(refused));
  EXPECT_EQ(std::get<Rejected>(refused).reason,
            "tp_overlap=on is Transformer Engine's userbuffers under Megatron-LM: it needs tp > 1, "
            "sequence parallelism and te on");
  // The SMs userbuffers take are priced from the device file's count of compute units.
  devices::ClusterSpec metax = devices::parse_cluster(
      "metax.yaml",
      "name: m\nnode_groups:\n  - {device: MetaX-C500, nodes: 1, devices_per_node: 8,\n"
      "     fabric: {kind: pcie, bandwidth: 32 GB/s, latency: 2 us}}\n",
      testing::bundled_registry());
  TrainContext mx{metax, t, kNoCalibration};
  Layout eight{1, 8, 1, 1, Recompute::kFull, 1};
  eight.tp_overlap = true;
  auto unknown = estimate_training(mx, eight);
  ASSERT_TRUE(std::holds_alternative<Rejected>(unknown));
  EXPECT_EQ(std::get<Rejected>(unknown).reason,
            "tp_overlap=on prices the SMs userbuffers take: device MetaX-C500 gives no "
            "onchip.compute_units");
}

TEST(SequenceParallel, OffKeepsNormsAndDropoutsWholeOnEveryRank) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  TrainContext cx{c, t, kNoCalibration};
  Layout on{1, 8, 1, 1, Recompute::kNone, 0};
  Layout off = on;
  off.sp = false;
  double h = 4096;
  double s = static_cast<double>(t.sequence_length);
  // Korthikanti et al. 2022, Table 2: without SP, 10sbh per layer stays whole (bf16 bytes:
  // 2 per element, counted as sbh x bytes / 2 in the formula), the rest is split over t.
  double extra = (training_memory(cx, off).activations - training_memory(cx, on).activations) / 32;
  EXPECT_NEAR(extra, 10 * s * h * (1 - 1.0 / 8), 1e3);
}

}  // namespace
}  // namespace yirage::planner

namespace yirage::planner {
namespace {

TEST(OptimizerOffload, MovesTheStateToHostMemoryAndPricesTheHostStep) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  TrainContext cx{c, t, kNoCalibration};
  Layout on{32, 1, 1, 2, Recompute::kFull, 3};
  on.offload = true;
  Layout off = on;
  off.offload = false;
  MemoryUse m_on = training_memory(cx, on);
  MemoryUse m_off = training_memory(cx, off);
  EXPECT_EQ(m_on.optimizer, 0);
  // 12 B of Adam state per parameter become host memory, with a 4 B fp32 gradient copy.
  EXPECT_NEAR(m_on.host, m_off.optimizer * 16 / 12, 1);
  auto a = estimate_training(cx, on);
  auto b = estimate_training(cx, off);
  ASSERT_TRUE(std::holds_alternative<PlanEstimate>(a) && std::holds_alternative<PlanEstimate>(b));
  // The host step (the node's share at two sockets' memory bandwidth) is slower than the
  // GPU's own optimizer step.
  EXPECT_GT(std::get<PlanEstimate>(a).step.optimizer,
            10 * std::get<PlanEstimate>(b).step.optimizer);
}

TEST(OptimizerOffload, NeedsAHostCpuAndEnoughHostMemory) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  Layout l{32, 1, 1, 2, Recompute::kFull, 3};
  l.offload = true;
  c.groups.front().host_memory = devices::Bytes{100e9};
  TrainContext cx{c, t, kNoCalibration};
  auto small = estimate_training(cx, l);
  ASSERT_TRUE(std::holds_alternative<Rejected>(small));
  EXPECT_NE(std::get<Rejected>(small).reason.find("of host memory"), std::string::npos);
  c.groups.front().host_cpu.reset();
  auto none = estimate_training(cx, l);
  ASSERT_TRUE(std::holds_alternative<Rejected>(none));
  EXPECT_NE(std::get<Rejected>(none).reason.find("needs 'host_cpu' and 'host_memory'"),
            std::string::npos);
  // Without a host CPU the search does not offer offload.
  for (const Layout& s : training_space(cx))
    EXPECT_FALSE(s.offload);
}

}  // namespace
}  // namespace yirage::planner
