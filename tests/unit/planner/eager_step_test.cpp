// Eager PyTorch's step (Framework::kPytorch): the byte counts of eager_traffic.h and what they
// add to a step, and the trust line a plan prints from the measured steps.
#include "tests/unit/test_data.h"

#include "costmodel/calibration.h"
#include "planner/step_calibration.h"
#include "planner/step_trust.h"
#include "planner/train_estimate.h"
#include "planner/workload/eager_traffic.h"
#include "planner/workload/model_size.h"
#include "planner/workload/pricer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace yirage::planner {
namespace {

const costmodel::CalibrationSet kNoCalibration;

devices::ModelSpec llama8b() {
  return testing::example_task("llama3-8b-train").model;
}

// One layer of Llama 3 8B widths (h 4096, q 4096, k and v 1024, FFN 14336) on 1,000 tokens,
// kernel by kernel as eager_traffic.cpp lists them.
TEST(EagerTraffic, LayerBytesFollowTheKernels) {
  LayerShape s{1, 1000, 1, false};
  EagerBytes b = eager_layer_bytes(llama8b(), s);
  double h = 1000.0 * 4096;
  double q = 1000.0 * 4096;
  double kv = 1000.0 * 1024;
  double ffn = 1000.0 * 14336;
  EXPECT_DOUBLE_EQ(b.forward, 2 * 40 * h + 2 * 6 * h + 4 * q + 20 * (q + kv) + 10 * ffn);
  EXPECT_DOUBLE_EQ(b.backward,
                   2 * 100 * h + 2 * 6 * h + 4 * (2 * q + 2 * kv) + 20 * (q + kv) + 18 * ffn);
  // The parts PyTorch cannot vectorise: the norms' broadcast products, RoPE's products by
  // cos and sin and its negated strided half, and RoPE's concatenation.
  EXPECT_DOUBLE_EQ(b.strided_forward, 2 * 16 * h + 10 * (q + kv));
  EXPECT_DOUBLE_EQ(b.strided_backward, 2 * 20 * h + 10 * (q + kv));
  EXPECT_DOUBLE_EQ(b.cat_forward, 4 * (q + kv));
  EXPECT_LT(b.widen_forward + b.strided_forward + b.cat_forward, b.forward);
  // Tensor parallelism splits every term: heads and FFN columns, and the norms' tokens
  // (sequence parallelism).
  LayerShape split{1, 1000, 4, false};
  EXPECT_DOUBLE_EQ(eager_layer_bytes(llama8b(), split).forward, b.forward / 4);
}

// Megatron-Core's own modules (te=off) as profiled kernel by kernel: PyTorch's norm kernels
// (priced as operations, not here), RoPE with its copy and final concatenation, the gated MLP
// over strided halves of the fused up projection, norms and residuals on every token without
// sequence parallelism, and the biases of models that have them.
TEST(EagerTraffic, MegatronLocalLayerBytesFollowItsKernels) {
  LayerShape s{1, 1000, 1, false};
  EagerBytes b = local_layer_bytes(llama8b(), s);
  double h = 1000.0 * 4096;
  double q = 1000.0 * 4096;
  double kv = 1000.0 * 1024;
  double ffn = 1000.0 * 14336;
  EXPECT_DOUBLE_EQ(b.forward, 2 * 6 * h + 4 * q + 24 * (q + kv) + 14 * ffn);
  EXPECT_DOUBLE_EQ(b.backward, 2 * 6 * h + 4 * (q + 2 * kv) + 28 * (q + kv) + 26 * ffn);
  EXPECT_DOUBLE_EQ(b.widen_forward, 0);
  // Unvectorised: the query's copy, RoPE's products and negation, SiLU and the offset on the
  // strided halves; SiLU's backward reads a strided half beside the gradient.
  EXPECT_DOUBLE_EQ(b.strided_forward, 4 * q + 10 * (q + kv) + 8 * ffn);
  EXPECT_DOUBLE_EQ(b.strided_backward, 10 * (q + kv));
  EXPECT_DOUBLE_EQ(b.strided_binary_backward, 6 * ffn);
  EXPECT_DOUBLE_EQ(b.cat_forward, 4 * (q + kv));
  // tp = 2 without sequence parallelism: the residual adds on all the tokens.
  LayerShape whole{1, 1000, 2, false};
  whole.sp = false;
  EXPECT_DOUBLE_EQ(local_layer_bytes(llama8b(), whole).forward,
                   2 * 6 * h + (4 * q + 24 * (q + kv) + 14 * ffn) / 2);
  // Biases: three adds over a broadcast operand in forward (their gradients are priced as
  // column sums, not here).
  devices::ModelSpec biased = llama8b();
  biased.bias = devices::BiasKind::kAll;
  double qkv = q + 2 * kv;
  EagerBytes with = local_layer_bytes(biased, s);
  EXPECT_DOUBLE_EQ(with.forward, b.forward + 4 * (qkv + 2 * h));
  EXPECT_DOUBLE_EQ(with.strided_forward, b.strided_forward + 4 * (qkv + 2 * h));
  EXPECT_DOUBLE_EQ(with.backward, b.backward);
  EXPECT_EQ(local_layer_operations(llama8b()), 2 + 13 + 3);
  EXPECT_EQ(local_layer_operations(biased), 2 + 13 + 3 + 3);
  EXPECT_DOUBLE_EQ(local_optimizer_bytes_per_parameter(), 106);
}

// Megatron-LM's loss over fp32 logits: 38 B per logit forward, 14 backward; the broadcast
// operations at the device's rate for PyTorch's unvectorised loop where it was measured.
TEST(EagerTraffic, MegatronLossStreamsItsFp32Logits) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  DeviceContext plain{c.device(c.groups.front()), {}, devices::DType::kBf16, std::nullopt};
  double logits = 4096.0 * 128256;
  PassTime loss = megatron_loss_time(plain, logits);
  EXPECT_DOUBLE_EQ(loss.forward, eager_stream_time(plain, 38 * logits));
  EXPECT_DOUBLE_EQ(loss.backward, eager_stream_time(plain, 14 * logits));
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  DeviceContext measured{c.device(c.groups.front()), *cal.find_gpu("H100-SXM"),
                         devices::DType::kBf16, std::nullopt};
  ASSERT_GT(measured.efficiency.stream.count("strided_binary"), 0u);
  EXPECT_GT(megatron_loss_time(measured, logits).forward,
            eager_stream_time(measured, 38 * logits, 6 * logits));
  // A Megatron-LM training step's head prices it, with three all-reduces of a value per token
  // under tensor parallelism.
  LayerShape s{1, 4096, 1};
  LayerCost head = head_cost(llama8b(), s, measured);
  EXPECT_DOUBLE_EQ(head.forward_kernels.loss, megatron_loss_time(measured, logits).forward);
  EXPECT_DOUBLE_EQ(head.backward_kernels.loss, megatron_loss_time(measured, logits).backward);
  EXPECT_EQ(head.tp_comm, 0);
}

// Megatron-LM's compiled softmax takes causal scores only where FusedScaleMaskSoftmax's rule
// allows: batch x heads a multiple of 4 (and of 8 rows a block up to 128 keys), 16 < seq <= 4096.
TEST(MegatronSoftmax, TheCompiledKernelTakesOnlyTheShapesItsRuleAllows) {
  EXPECT_TRUE(megatron_softmax_kernel(1, 4, 1024));
  EXPECT_TRUE(megatron_softmax_kernel(2, 2, 1024));
  EXPECT_FALSE(megatron_softmax_kernel(1, 2, 1024));   // 16 heads over tp = 8, one sequence
  EXPECT_FALSE(megatron_softmax_kernel(1, 12, 8192));  // longer than 4,096 keys
  EXPECT_FALSE(megatron_softmax_kernel(1, 4, 16));
  EXPECT_FALSE(megatron_softmax_kernel(1, 4, 1026));  // not a multiple of 4
  EXPECT_FALSE(megatron_softmax_kernel(1, 4, 64));    // 8 rows a block at 64 keys
  EXPECT_TRUE(megatron_softmax_kernel(2, 4, 64));
}

// Its PyTorch path streams each score through fp32: the casts, the scaling (fp16's query-key
// layer scaling), the mask filled with a broadcast operand, and an fp32 softmax.
TEST(MegatronSoftmax, ThePyTorchPathStreamsTheScoresInFp32) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  DeviceContext cx{c.device(c.groups.front()), {}, devices::DType::kFp16, std::nullopt};
  std::int64_t rows = 2 * 1024;
  std::int64_t keys = 1024;
  double n = static_cast<double>(rows * keys);
  DeviceContext fp32 = cx;
  fp32.dtype = devices::DType::kFp32;
  double soft = price(fp32, "softmax", {rows, keys}, false).time.value;
  PassTime scaled = megatron_torch_softmax(cx, rows, keys);
  EXPECT_DOUBLE_EQ(scaled.forward, soft + eager_stream_time(cx, 28 * n));
  EXPECT_DOUBLE_EQ(scaled.backward, 1.5 * soft + eager_stream_time(cx, 28 * n));
  EXPECT_EQ(megatron_torch_softmax_kernels(cx), 5);
  // bf16 runs without query-key layer scaling: no multiply.
  DeviceContext bf16 = cx;
  bf16.dtype = devices::DType::kBf16;
  EXPECT_DOUBLE_EQ(megatron_torch_softmax(bf16, rows, keys).forward,
                   soft + eager_stream_time(bf16, 20 * n));
  EXPECT_EQ(megatron_torch_softmax_kernels(bf16), 4);
}

// A Megatron-LM layer with unfused attention runs that path where the rule refuses the shape
// or the kernel is not built (te=off): more memory-bound time and more kernels for the host.
TEST(MegatronSoftmax, LayersTakeThePyTorchPathWhereTheKernelCannotRun) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  devices::ModelSpec m = llama8b();  // 32 heads
  DeviceContext cx{c.device(c.groups.front()), {}, devices::DType::kBf16, std::nullopt};
  LayerShape fits{1, 1024, 1};
  fits.unfused_attention = true;
  LayerShape refused = fits;
  refused.seq = 8192;
  EXPECT_FALSE(megatron_torch_path(cx, fits, 32));
  EXPECT_TRUE(megatron_torch_path(cx, refused, 32));
  DeviceContext local = cx;
  local.megatron_local = true;
  local.fuse = false;
  EXPECT_TRUE(megatron_torch_path(local, fits, 32));
  LayerShape inference = refused;
  inference.inference = true;
  EXPECT_FALSE(megatron_torch_path(cx, inference, 32));
  DeviceContext eager = cx;
  eager.eager = true;
  EXPECT_FALSE(megatron_torch_path(eager, refused, 32));
  // More time on the scores: 8 x 8 times as many of them, each streamed in fp32 several times.
  EXPECT_GT(layer_cost(m, refused, cx).forward_kernels.memory,
            64 * layer_cost(m, fits, cx).forward_kernels.memory);
  // And the host issues the path's 4 kernels in place of 1: where it binds (a second a
  // kernel), 3 s more a forward.
  cx.efficiency.megatron_host = devices::Seconds{1};
  EXPECT_NEAR(layer_cost(m, refused, cx).forward - layer_cost(m, fits, cx).forward, 3, 1e-9);
}

// Over bf16 parameters without autocast (FSDP2), nn.RMSNorm runs PyTorch's fused norm kernels
// (as profiled: vectorized_layer_norm_kernel and its backward): the layer's bytes lose the
// norms' fp32 parts, its host operations their 14, and the layer prices two rmsnorm
// operations in their place.
TEST(EagerTraffic, FusedNormsReplaceTheirParts) {
  LayerShape s{1, 1000, 1, false};
  devices::ModelSpec m = llama8b();
  EagerBytes parts = eager_layer_bytes(m, s);
  EagerBytes fused = eager_layer_bytes(m, s, false);
  double h = 1000.0 * 4096;
  EXPECT_DOUBLE_EQ(parts.forward - fused.forward, 2 * 40 * h);
  EXPECT_DOUBLE_EQ(parts.backward - fused.backward, 2 * 100 * h);
  EXPECT_EQ(fused.widen_forward, 0);
  EXPECT_DOUBLE_EQ(parts.strided_forward - fused.strided_forward, 2 * 16 * h);
  EXPECT_EQ(eager_layer_operations(m) - eager_layer_operations(m, false), 14);
  EXPECT_DOUBLE_EQ(eager_head_bytes(m, s).forward - eager_head_bytes(m, s, false).forward, 40 * h);

  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  DeviceContext cx{c.device(c.groups.front()), {}, devices::DType::kBf16, std::nullopt};
  cx.eager = true;
  cx.fuse = false;
  DeviceContext fsdp = cx;
  fsdp.fused_norms = true;
  double norm = price(cx, "rmsnorm", {1000, m.hidden}, false).time.value;
  LayerCost a = layer_cost(m, s, cx);
  LayerCost b = layer_cost(m, s, fsdp);
  EXPECT_NEAR(b.forward_kernels.memory,
              eager_forward_time(cx, eager_layer_bytes(m, s, false)) + 2 * norm, 1e-15);
  EXPECT_NEAR(b.backward_kernels.memory,
              eager_backward_time(cx, eager_layer_bytes(m, s, false)) + 2 * kBackwardGemm * norm,
              1e-15);
  EXPECT_LT(b.forward_kernels.memory, a.forward_kernels.memory);
  EXPECT_EQ(b.forward_kernels.gemm, a.forward_kernels.gemm);
}

TEST(EagerTraffic, ParameterBytesGrowWithMicroBatches) {
  EXPECT_DOUBLE_EQ(eager_parameter_bytes(1, 0).forward, 6);
  EXPECT_DOUBLE_EQ(eager_parameter_bytes(1, 0).backward, 6);  // one micro-batch: no accumulation
  EXPECT_DOUBLE_EQ(eager_parameter_bytes(4, 0).backward, 6 + 12 * 3.0 / 4);
  // Full recomputation casts again the weights it runs through (here three quarters).
  EXPECT_DOUBLE_EQ(eager_parameter_bytes(4, 0.75).forward, 6 * 1.75);
  EXPECT_DOUBLE_EQ(eager_optimizer_bytes_per_parameter(), 40);
}

// Llama 3 8B's widths under eager PyTorch, cut to `layers`.
devices::TaskSpec eager_llama8b(std::int64_t layers, std::int64_t seq, std::int64_t batch) {
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  t.framework = devices::Framework::kPytorch;
  t.model.layers = layers;
  t.sequence_length = seq;
  t.global_batch = batch;
  return t;
}

PlanEstimate estimate(const devices::TaskSpec& t, const std::string& layout) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  Layout l;
  EXPECT_EQ(parse_layout(layout, &l), "");
  auto e = estimate_training(TrainContext{c, t, kNoCalibration}, l);
  if (const Rejected* r = std::get_if<Rejected>(&e))
    ADD_FAILURE() << layout << ": " << r->reason;
  return std::holds_alternative<PlanEstimate>(e) ? std::get<PlanEstimate>(e) : PlanEstimate{};
}

// PyTorch's non-reentrant checkpoint stops recomputing a layer after the last tensor its
// backward keeps: the down projection, its collective and the residual add after it are not
// run again (the early stop). An MoE layer's experts' outputs are kept by the combine, and
// Megatron-LM's checkpoint reruns the whole forward.
TEST(EagerStep, FullRecomputationStopsBeforeTheDownProjection) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  const devices::DeviceSpec& d = c.device(c.groups.front());
  DeviceContext eager{d, {}, devices::DType::kBf16, std::nullopt};
  eager.eager = true;
  eager.fuse = false;
  devices::ModelSpec m = llama8b();
  LayerShape s{1, 4096, 1};
  LayerCost layer = layer_cost(m, s, eager);
  double down = price(eager, "gemm", {4096, m.hidden, m.ffn}, false).time.value;
  EXPECT_DOUBLE_EQ(layer.forward_tail.gemm, down);
  EXPECT_DOUBLE_EQ(layer.forward_tail.memory,
                   eager_stream_time(eager, 6.0 * 4096 * static_cast<double>(m.hidden)));
  EXPECT_EQ(layer.tp_tail, 0);
  DeviceContext megatron{d, {}, devices::DType::kBf16, std::nullopt};
  EXPECT_EQ(layer_cost(m, s, megatron).forward_tail.total(), 0);
  devices::ModelSpec moe = testing::example_task("mixtral-8x7b-train").model;
  LayerShape experts = s;
  experts.moe_layer = true;
  EXPECT_EQ(layer_cost(moe, experts, eager).forward_tail.total(), 0);

  // On a step: full recomputation costs the layers' forwards less their tails, and casts
  // again the weights it runs through (not the embedding, the head or the down projections).
  devices::TaskSpec t = eager_llama8b(4, 4096, 16);
  PlanEstimate none = estimate(t, "tp=1,pp=1,dp=8,mb=1,recompute=none,zero=1");
  PlanEstimate full = estimate(t, "tp=1,pp=1,dp=8,mb=1,recompute=full,zero=1");
  LayerShape step_layer{1, t.sequence_length, 1};
  LayerCost l = layer_cost(t.model, step_layer, eager);
  double layers = static_cast<double>(t.model.layers);
  double mbs = static_cast<double>(t.global_batch / 8);
  ParameterCount p = count_parameters(t.model);
  double layer_weights = (p.total - p.embedding - p.head) / layers;
  double down_weights = static_cast<double>(t.model.hidden * t.model.ffn);
  double recast =
      eager_stream_time(eager, 6 * (p.total + layers * (layer_weights - down_weights))) -
      eager_stream_time(eager, 6 * p.total);
  EXPECT_NEAR(full.step.compute - none.step.compute,
              mbs * (layers * (l.forward - l.forward_tail.total()) + recast),
              1e-9 * full.step.compute);
}

// FSDP2's parameter traffic a micro-batch, as profiled: per gather the shard cast and copied
// into the gather's buffer (10 B a shard's parameter, at the widening rate) and the gathered
// weights copied out (4 B a parameter); per backward the gradients cast to fp32 for the
// reduce-scatter (6 B, widening) and, after the first micro-batch, the shard accumulated (12
// B a shard's parameter). ZeRO 3 gathers twice a micro-batch, ZeRO 2 once; autocast's casts
// of every weight are gone.
TEST(EagerStep, Fsdp2ParameterTrafficFollowsItsCopies) {
  devices::TaskSpec t = eager_llama8b(4, 1024, 16);
  PlanEstimate z2 = estimate(t, "tp=1,pp=1,dp=8,mb=1,recompute=none,zero=2");
  PlanEstimate z3 = estimate(t, "tp=1,pp=1,dp=8,mb=1,recompute=none,zero=3");
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  DeviceContext cx{c.device(c.groups.front()), {}, devices::DType::kBf16, std::nullopt};
  double share = count_parameters(t.model).total;
  double shard = share / 8;
  double gather = eager_stream_time(cx, 4 * share + 10 * shard, 10 * shard);
  // Two micro-batches a rank: ZeRO 3's second gather in each is all that differs (but the
  // stream kernels' fixed latencies, which the backward's other traffic already pays).
  EXPECT_NEAR(z3.step.compute - z2.step.compute, 2 * gather, 1e-3 * 2 * gather);
  EXPECT_GT(z3.step.compute - z2.step.compute, 0.99 * 2 * gather);
}

// The same layout costs more under eager PyTorch: more compute, the data-parallel traffic
// charged in full, a larger optimizer step, and more memory (fp32 weights and logits).
TEST(EagerStep, CostsMoreThanMegatron) {
  devices::TaskSpec megatron = testing::example_task("llama3-8b-train");
  devices::TaskSpec eager = megatron;
  eager.framework = devices::Framework::kPytorch;
  std::string layout = "tp=2,pp=1,dp=4,mb=1,recompute=full,zero=3";
  PlanEstimate m = estimate(megatron, layout);
  PlanEstimate e = estimate(eager, layout);
  EXPECT_GT(e.step.compute, m.step.compute);
  EXPECT_GT(e.step.dp_comm, m.step.dp_comm);
  EXPECT_GT(e.step.optimizer, m.step.optimizer);
  EXPECT_GT(e.memory.total(), m.memory.total());
  EXPECT_EQ(e.fusions.front(), "rmsnorm_linear: unfused (eager PyTorch)");
}

TEST(StepTrust, SaysWhatWasMeasuredAndWhatWasNot) {
  devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  StepTrust none =
      step_trust(devices::data_dir() / "benchmarks", "MI300X", devices::Framework::kMegatron,
                 testing::bundled_registry(), models, cal);
  EXPECT_EQ(none.rows, 0u);
  EXPECT_EQ(step_trust_text(none, false, true),
            "not validated: no measured Megatron-LM steps on MI300X "
            "(data/benchmarks/MI300X/train_steps*.csv)");
  // On H100 the Megatron-LM line is NVIDIA's published NeMo runs of 16 to 2,304 GPUs
  // (train_steps_published.csv; the 8-GPU and 576-GPU ones are priced out of memory).
  StepTrust nemo =
      step_trust(devices::data_dir() / "benchmarks", "H100-SXM", devices::Framework::kMegatron,
                 testing::bundled_registry(), models, cal);
  EXPECT_EQ(nemo.rows, 15u);
  EXPECT_NE(step_trust_text(nemo, false, true).find("on 16 to 2304 GPUs"), std::string::npos);
  StepTrust h100 =
      step_trust(devices::data_dir() / "benchmarks", "H100-SXM", devices::Framework::kPytorch,
                 testing::bundled_registry(), models, cal);
  EXPECT_GT(h100.rows, 40u);
  EXPECT_LT(h100.mape, 5);
  ASSERT_FALSE(h100.by_gpus.empty());
  EXPECT_EQ(h100.by_gpus.front().group, "1 GPU");
  std::string text = step_trust_text(h100, false, true);
  EXPECT_EQ(text.rfind("±", 0), 0u) << text;
  EXPECT_NE(text.find("eager-PyTorch steps on H100-SXM: "), std::string::npos) << text;
  // The H200's Megatron-LM steps ran on Megatron-Core's own modules: the line says so.
  StepTrust local =
      step_trust(devices::data_dir() / "benchmarks", "H200", devices::Framework::kMegatron,
                 testing::bundled_registry(), models, cal);
  EXPECT_GT(local.rows, 0u);
  EXPECT_EQ(local.without_te, local.rows);
  EXPECT_NE(step_trust_text(local, false, true)
                .find("Megatron-LM steps on H200 (all without Transformer Engine): "),
            std::string::npos);
  StepTrust unknown =
      step_trust(devices::data_dir() / "benchmarks", "MI300X", devices::Framework::kPytorch,
                 testing::bundled_registry(), models, cal);
  EXPECT_EQ(unknown.rows, 0u);
}

// The H200 steps hold layouts with and without tensor parallelism, and layouts the model has
// the GPU busy for and others it leaves waiting on the host: each pair splits the whole, and a
// plan's line names the error of the layouts like its own, by what holds its step where both
// kinds were measured, by tensor parallelism where not.
TEST(StepTrust, SaysHowCloseLayoutsLikeThePlansAre) {
  static const devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  StepTrust h200 =
      step_trust(devices::data_dir() / "benchmarks", "H200", devices::Framework::kPytorch,
                 testing::bundled_registry(), models, cal);
  auto whole = [&](const StepStats& a, const StepStats& b) {
    EXPECT_EQ(a.rows + b.rows, h200.rows);
    return (a.mape * static_cast<double>(a.rows) + b.mape * static_cast<double>(b.rows)) /
           static_cast<double>(h200.rows);
  };
  ASSERT_GT(h200.with_tp.rows, 0u);
  ASSERT_GT(h200.without_tp.rows, 0u);
  EXPECT_NEAR(whole(h200.with_tp, h200.without_tp), h200.mape, 1e-9);
  ASSERT_GT(h200.busy.rows, 0u);
  ASSERT_GT(h200.idle.rows, 0u);
  EXPECT_NEAR(whole(h200.busy, h200.idle), h200.mape, 1e-9);
  // Where the host binds, the model is further off than where the GPU does.
  EXPECT_GT(h200.idle.mape, 2 * h200.busy.mape);
  EXPECT_NE(step_trust_text(h200, true, true)
                .find("; where the GPU is busy for 85% of the step or more, as in this plan: ±"),
            std::string::npos);
  EXPECT_NE(step_trust_text(h200, false, false)
                .find("; where the host or collectives leave the GPU idle for over 15% of the "
                      "step, as in this plan: ±"),
            std::string::npos);
  StepTrust one_kind = h200;
  one_kind.idle = {};
  EXPECT_NE(
      step_trust_text(one_kind, true, true).find("; with tensor parallelism, as this layout: ±"),
      std::string::npos);
  EXPECT_NE(step_trust_text(one_kind, false, true)
                .find("; without tensor parallelism, as this layout: ±"),
            std::string::npos);
}

// A plan keeps the GPU busy where its kernels fill kBusyShare of its step.
TEST(StepTrust, APlanIsBusyWhereItsKernelsFillItsStep) {
  StepBreakdown b;
  b.total = 1;
  b.kernels.gemm = 0.6;
  b.kernels.memory = 0.3;
  EXPECT_TRUE(keeps_gpu_busy(b));
  b.kernels.memory = 0.2;
  EXPECT_FALSE(keeps_gpu_busy(b));
  b.total = 0;
  EXPECT_FALSE(keeps_gpu_busy(b));
}

}  // namespace
}  // namespace yirage::planner

namespace yirage::planner {
namespace {

// The host's time per operation of eager tensor parallelism, fitted on one host's measured
// tensor-parallel steps: it is what the op rows cannot show (the GPU waits for DTensor's
// dispatch), so the held-out rows come much closer with it than without.
TEST(EagerTpHost, FittedOnMeasuredStepsItPricesTheHeldOutRows) {
  static const devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  std::filesystem::path file =
      devices::data_dir() / "benchmarks" / "H200" / "train_steps_2gpu_host.csv";
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  auto fit = fit_eager_tp_host({file}, "H200", testing::bundled_registry(), models, cal);
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->fit_rows + fit->held_out_rows, 9u);
  EXPECT_GT(fit->host.value, 50e-6);
  EXPECT_LT(fit->host.value, 300e-6);
  EXPECT_LT(fit->held_out_mape, fit->unpriced_mape / 2);
  EXPECT_NE(fit->fitted_on.find("train_steps_2gpu_host.csv (tensor-parallel rows"),
            std::string::npos);
  // One GPU: no tensor-parallel rows, nothing to fit.
  EXPECT_FALSE(
      fit_eager_tp_host({devices::data_dir() / "benchmarks" / "H200" / "train_steps_1gpu_more.csv"},
                        "H200", testing::bundled_registry(), models, cal)
          .has_value());
}

// The Megatron-Core step files of H200 (bench/run_megatron.py), as `calibrate` reads them
// (the full-depth rows are held out from every fit: docs/step-model.md).
std::vector<std::filesystem::path> megatron_step_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e :
       std::filesystem::directory_iterator(devices::data_dir() / "benchmarks" / "H200")) {
    std::string name = e.path().filename().string();
    if (name.rfind("train_steps_megatron", 0) == 0 && e.path().extension() == ".csv" &&
        name.find("full_depth") == std::string::npos)
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Megatron-LM's host time per kernel, fitted on the steps measured under Megatron-Core without
// pipelining: the held-out rows come closer with it; the shipped H200 value is what the fit
// finds again.
TEST(MegatronHost, FittedOnMegatronCoreStepsItPricesTheHeldOutRows) {
  static const devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  std::filesystem::path dir = devices::data_dir() / "benchmarks" / "H200";
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  auto fit =
      fit_megatron_host(megatron_step_files(), "H200", testing::bundled_registry(), models, cal);
  ASSERT_TRUE(fit.has_value());
  EXPECT_GE(fit->fit_rows + fit->held_out_rows, 40u);
  EXPECT_LT(fit->held_out_mape, fit->unpriced_mape);
  // The shipped calibration is this fit: a module's call and a plain operation apart (to 1%:
  // the shipped file rounds the stream fits it was fitted beside; 223 us against 224).
  double host = cal.find_gpu("H200")->megatron_host.value;
  double op_host = cal.find_gpu("H200")->megatron_op_host.value;
  EXPECT_NEAR(fit->host.value, host, 0.01 * host);
  EXPECT_NEAR(fit->op_host.value, op_host, 0.01 * op_host);
  EXPECT_GT(fit->host.value, fit->op_host.value);
  EXPECT_NE(fit->fitted_on.find("(Megatron-Core rows without pipelining alternating"),
            std::string::npos);
  // No Megatron-Core rows among the eager ones: nothing to fit.
  EXPECT_FALSE(fit_megatron_host({dir / "train_steps_1gpu_more.csv"}, "H200",
                                 testing::bundled_registry(), models, cal)
                   .has_value());
}

// The idle time after each synchronised exchange of a Megatron-LM pipeline, fitted on the
// pipelined rows with the shipped host times: the shipped H200 value is what the fit finds
// again, and the held-out rows come closer with it.
TEST(MegatronPipelineSync, FittedOnPipelinedStepsItIsTheShippedValue) {
  static const devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  auto fit =
      fit_megatron_pp_sync(megatron_step_files(), "H200", testing::bundled_registry(), models, cal);
  ASSERT_TRUE(fit.has_value());
  EXPECT_GE(fit->fit_rows + fit->held_out_rows, 10u);
  // (Within 2%: the absolute error is flat near its least, and the shipped file rounds the
  // constants it was fitted beside, the stream kinds' among them: 235 us against 238.)
  double shipped = cal.find_gpu("H200")->megatron_pp_sync.value;
  EXPECT_NEAR(fit->host.value, shipped, 0.02 * shipped);
  EXPECT_LT(fit->held_out_mape, fit->unpriced_mape);
  EXPECT_NE(fit->fitted_on.find("(pipelined Megatron-Core rows alternating"), std::string::npos);
}

// What overlapping Megatron-LM's gradient sync saves, fitted on layouts measured with and
// without it on one machine: the shipped H200 value is what the fit finds again, and the
// held-out pairs' saving comes closer with it than with overlap priced as free.
TEST(MegatronDpOverlap, FittedOnPairsItIsTheShippedValue) {
  static const devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  auto fit = fit_megatron_dp_overlap(megatron_step_files(), "H200", testing::bundled_registry(),
                                     models, cal);
  ASSERT_TRUE(fit.has_value());
  EXPECT_GE(fit->fit_rows + fit->held_out_rows, 4u);
  EXPECT_EQ(fit->value, cal.find_gpu("H200")->megatron_dp_overlap_cost);
  EXPECT_GT(fit->value, 0);
  EXPECT_LT(fit->held_out_mape, fit->unfitted_mape);
  EXPECT_NE(fit->fitted_on.find("pairs alternating"), std::string::npos);
  // The eager rows hold no Megatron-Core pairs: nothing to fit.
  EXPECT_FALSE(fit_megatron_dp_overlap(
                   {devices::data_dir() / "benchmarks" / "H200" / "train_steps_1gpu_more.csv"},
                   "H200", testing::bundled_registry(), models, cal)
                   .has_value());
}

}  // namespace
}  // namespace yirage::planner

namespace yirage::planner {
namespace {

const devices::ModelRegistry& bundled_models() {
  static const devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  return models;
}

// The caching allocator's reserve beyond the allocated peak, fitted on measured steps whose
// every allocation is in the compute stream (FSDP2's rows left out): the held-out rows' reserve
// comes closer with it than taken as the allocated peak.
TEST(AllocatorCache, FittedOnRowsWithoutFsdp2ItPricesTheHeldOutReserve) {
  std::vector<std::filesystem::path> files;
  for (const auto& e :
       std::filesystem::directory_iterator(devices::data_dir() / "benchmarks" / "H200"))
    if (e.path().filename().string().rfind("train_steps", 0) == 0)
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  auto fit = fit_allocator_cache(files, "H200", testing::bundled_registry(), bundled_models());
  ASSERT_TRUE(fit.has_value());
  EXPECT_GT(fit->value, 0.01);
  EXPECT_LT(fit->value, 0.3);
  EXPECT_LT(fit->held_out_mape, fit->unfitted_mape);
  EXPECT_LE(fit->held_out_rows, fit->fit_rows);
  EXPECT_NE(fit->fitted_on.find("rows without FSDP2"), std::string::npos);
  EXPECT_FALSE(
      fit_allocator_cache(files, "A100-80GB", testing::bundled_registry(), bundled_models())
          .has_value());  // no such rows
}

// Under Megatron-LM the same cache, fitted on the Megatron-Core rows (the full-depth ones held
// out): the shipped H200 value is that fit, the held-out rows' reserve comes closer with it, and
// a Megatron-LM plan on H200 reserves that fraction of its live peak beside it.
TEST(AllocatorCache, MegatronsIsFittedOnMegatronCoreSteps) {
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  auto fit = fit_allocator_cache(megatron_step_files(), "H200", testing::bundled_registry(),
                                 bundled_models(), true);
  ASSERT_TRUE(fit.has_value());
  double shipped = cal.find_gpu("H200")->megatron_allocator_cache;
  EXPECT_NEAR(fit->value, shipped, 5e-5);
  EXPECT_LT(fit->held_out_mape, fit->unfitted_mape);
  EXPECT_NE(fit->fitted_on.find("Megatron-Core rows"), std::string::npos);
  EXPECT_EQ(fit->fitted_on.find("full_depth"), std::string::npos);

  devices::ClusterSpec c = testing::example_cluster("two-h200");
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  t.model.layers = 4;
  Layout l;
  ASSERT_EQ(parse_layout("tp=1,pp=1,dp=2,mb=1,recompute=none,zero=1", &l), "");
  auto e = estimate_training(TrainContext{c, t, cal}, l);
  ASSERT_TRUE(std::holds_alternative<PlanEstimate>(e));
  const MemoryUse& m = std::get<PlanEstimate>(e).memory;
  EXPECT_GT(shipped, 0);
  EXPECT_DOUBLE_EQ(m.reserve, shipped * m.total());
}

}  // namespace
}  // namespace yirage::planner
