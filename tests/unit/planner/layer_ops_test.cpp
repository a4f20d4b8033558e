// layer_ops() lists the operations that layer_cost() prices: the same times, the same FLOPs
// and the same fuse-or-not decisions, for dense and MoE layers, RMSNorm and LayerNorm
// models, fused and unfused attention, context parallelism, training and decode.
#include "planner/layer_ops.h"

#include "tests/unit/test_data.h"

#include <gtest/gtest.h>

namespace yirage::planner {
namespace {

const costmodel::CalibrationSet uncalibrated;

void expect_same_as_layer_cost(const devices::TaskSpec& t,
                               const LayerShape& s,
                               const std::string& device) {
  const devices::DeviceSpec* d = testing::bundled_registry().find(device);
  ASSERT_NE(d, nullptr) << device;
  DeviceContext cx = op_context(*d, t, uncalibrated, s);
  LayerCost c = layer_cost(t.model, s, cx);
  std::vector<LayerOp> ops = layer_ops(t.model, s, cx);
  ASSERT_FALSE(ops.empty());
  double time = 0;
  double flops = 0;
  std::vector<std::string> fusions;
  for (const LayerOp& o : ops) {
    time += o.estimate.time.value;
    flops += o.estimate.flops;
    if (o.compound) {
      ASSERT_TRUE(o.unfused.has_value());
      fusions.push_back(o.op + (o.estimate.fused ? ": fused" : ": unfused"));
    }
  }
  EXPECT_NEAR(time, c.forward, 1e-12 * c.forward) << t.name;
  EXPECT_GE(flops, c.flops_forward * (1 - 1e-12)) << t.name;
  ASSERT_EQ(fusions.size(), c.fusions.size());
  for (std::size_t i = 0; i < fusions.size(); ++i)
    EXPECT_EQ(c.fusions[i].rfind(fusions[i], 0), 0u) << c.fusions[i] << " vs " << fusions[i];
}

TEST(LayerOps, AddUpToTheLayerCostOfTrainingLayouts) {
  devices::TaskSpec llama = testing::example_task("llama3-8b-train");
  for (std::int64_t tp : {1, 2, 8}) {
    Layout l{1, tp, 1, 2};
    expect_same_as_layer_cost(llama, training_layer_shape(llama, l), "H100-SXM");
  }
  expect_same_as_layer_cost(llama, training_layer_shape(llama, Layout{1, 8, 1, 1}), "MI300X");
  devices::TaskSpec gpt3 = testing::example_task("gpt3-175b-train");  // LayerNorm, biases
  expect_same_as_layer_cost(gpt3, training_layer_shape(gpt3, Layout{1, 8, 1, 1}), "H100-SXM");
  devices::TaskSpec mixtral = testing::example_task("mixtral-8x7b-train");
  LayerShape moe = training_layer_shape(mixtral, Layout{1, 4, 1, 1});
  EXPECT_TRUE(moe.moe_layer);
  expect_same_as_layer_cost(mixtral, moe, "H100-SXM");
  devices::TaskSpec unfused = llama;
  unfused.attention = devices::AttentionKernel::kUnfused;
  expect_same_as_layer_cost(unfused, training_layer_shape(unfused, Layout{1, 2, 1, 1}),
                            "A100-80GB");
  devices::TaskSpec long_seq = testing::example_task("llama3-70b-train-128k");
  Layout cp{1, 8, 1, 1};
  cp.cp = 4;
  LayerShape s = training_layer_shape(long_seq, cp);
  EXPECT_EQ(s.seq, long_seq.sequence_length / 4);
  expect_same_as_layer_cost(long_seq, s, "H100-SXM");
}

TEST(LayerOps, AddUpToTheLayerCostOfInferenceSteps) {
  devices::TaskSpec decode = testing::example_task("llama3-70b-decode");
  LayerShape s = inference_layer_shape(decode, InferLayout{1, 8, 1, 16});
  EXPECT_EQ(s.seq, 1);
  EXPECT_EQ(s.kv_len, decode.sequence_length);
  expect_same_as_layer_cost(decode, s, "H100-SXM");
  devices::TaskSpec prefill = testing::example_task("llama3-70b-prefill");
  expect_same_as_layer_cost(prefill, inference_layer_shape(prefill, InferLayout{1, 8, 1, 1}),
                            "H100-SXM");
  devices::TaskSpec serve = testing::example_task("deepseek-v3-serve");  // MLA, MoE
  expect_same_as_layer_cost(serve, inference_layer_shape(serve, InferLayout{1, 8, 1, 8}),
                            "H200-SXM");
}

TEST(LayerOps, CompoundOperationsCarryBothForms) {
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  LayerShape s = training_layer_shape(t, Layout{1, 1, 1, 1});
  const devices::DeviceSpec* d = testing::bundled_registry().find("H100-SXM");
  ASSERT_NE(d, nullptr);
  int compounds = 0;
  for (const LayerOp& o : layer_ops(t.model, s, op_context(*d, t, uncalibrated, s))) {
    if (!o.compound)
      continue;
    ++compounds;
    ASSERT_TRUE(o.unfused.has_value());
    EXPECT_GT(o.unfused->time.value, 0);
    EXPECT_EQ(o.fused.has_value(), o.why.empty()) << o.op << ": " << o.why;
    if (o.estimate.fused) {
      ASSERT_TRUE(o.fused.has_value());
      EXPECT_LT(o.fused->time.value, o.unfused->time.value);
    }
  }
  EXPECT_EQ(compounds, 2);  // RMSNorm + QKV projection, gated MLP
}

TEST(LayerOps, NoOperationBeatsItsRoofline) {
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  LayerShape s = training_layer_shape(t, Layout{1, 1, 1, 1});
  const devices::DeviceSpec* d = testing::bundled_registry().find("H100-SXM");
  ASSERT_NE(d, nullptr);
  double peak = d->peak_rate(t.precision)->value;
  double bw = d->memory_bandwidth.value.value;
  EXPECT_EQ(roofline_bound(*d, t.precision, 1.0), bw);  // memory-bound at 1 FLOP/byte
  EXPECT_EQ(roofline_bound(*d, t.precision, 1e6), peak);
  for (const LayerOp& o : layer_ops(t.model, s, op_context(*d, t, uncalibrated, s))) {
    double i = arithmetic_intensity(o.estimate);
    EXPECT_LE(achieved_rate(o.estimate), roofline_bound(*d, t.precision, i) * (1 + 1e-9)) << o.name;
  }
}

}  // namespace
}  // namespace yirage::planner
