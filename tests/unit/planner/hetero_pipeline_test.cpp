#include "planner/hetero_pipeline.h"

#include "tests/unit/test_data.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace yirage::planner {
namespace {

const costmodel::CalibrationSet kNoCalibration;

// Two groups of two nodes of eight, cut from the rail-optimized H100 example; the second
// group's device replaced by `second` (its own spec from the registry).
devices::ClusterSpec two_groups(const std::string& second) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  devices::NodeGroup a = c.groups.front();
  a.nodes = 2;
  a.name = "a";
  devices::NodeGroup b = a;
  b.name = "b";
  b.device = second;
  c.groups = {a, b};
  if (second != a.device) {
    c.device_types.push_back(*testing::bundled_registry().find(second));
    std::sort(c.device_types.begin(), c.device_types.end(),
              [](const auto& x, const auto& y) { return x.name < y.name; });
  }
  return c;
}

std::int64_t layers_of(const HeteroPipelinePlan& p, const std::string& group) {
  for (const PipelinePart& part : p.parts) {
    if (part.group == group)
      return part.layers;
  }
  return -1;
}

TEST(HeteroPipeline, HoldsAModelThatNoGroupHoldsAlone) {
  devices::ClusterSpec c = testing::example_cluster("mixed-h100-mi300x-910b");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  HeteroPipelineResult r = search_hetero_pipeline(c, t, kNoCalibration);
  ASSERT_TRUE(r.plan) << r.why;
  const HeteroPipelinePlan& p = *r.plan;
  ASSERT_EQ(p.parts.size(), 3u);
  std::int64_t layers = 0;
  std::int64_t devices = 0;
  for (const PipelinePart& part : p.parts) {
    layers += part.layers;
    devices += part.tp * part.stages * p.dp;
    EXPECT_LE(part.memory.total(), part.memory.capacity) << part.group;
    EXPECT_GE(part.layers, part.stages) << part.group;
  }
  EXPECT_EQ(layers, t.model.layers);
  EXPECT_EQ(devices, c.total_devices());
  const StepBreakdown& b = p.step;
  EXPECT_NEAR(b.total, b.compute + b.tp_comm + b.pp_comm + b.bubble + b.dp_comm + b.optimizer,
              1e-9 * b.total);
  EXPECT_GT(b.bubble, 0);
  EXPECT_GT(p.mfu, 0);
  EXPECT_LT(p.mfu, 1);
}

// Llama 3 8B, which no memory limit binds: with 70B the first stage, which also holds the
// embedding, fits fewer layers than the last.
TEST(HeteroPipeline, IdenticalGroupsGetEqualLayers) {
  devices::ClusterSpec c = two_groups("H100-SXM");
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  HeteroPipelineResult r = search_hetero_pipeline(c, t, kNoCalibration);
  ASSERT_TRUE(r.plan) << r.why;
  // The last stage ("b") also runs the output head, a GEMM 2.4 times a layer's weights for the
  // 128K vocabulary, and the loss over its fp32 logits: it takes fewer layers, by about that.
  int a = layers_of(*r.plan, "a");
  int b = layers_of(*r.plan, "b");
  EXPECT_GE(a, b) << r.plan->str();
  EXPECT_LE(a - b, 4) << r.plan->str();
}

TEST(HeteroPipeline, TheFasterGroupTakesMoreLayers) {
  devices::ClusterSpec c = two_groups("A100-80GB");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  HeteroPipelineResult r = search_hetero_pipeline(c, t, kNoCalibration);
  ASSERT_TRUE(r.plan) << r.why;
  // Same shape, same memory: the H100 group ("a") holds more of the model's layers.
  EXPECT_GT(layers_of(*r.plan, "a"), layers_of(*r.plan, "b")) << r.plan->str();
}

TEST(HeteroPipeline, DoesNotDependOnTheOrderOfTheGroups) {
  devices::ClusterSpec c = testing::example_cluster("mixed-h100-mi300x-910b");
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  HeteroPipelineResult r1 = search_hetero_pipeline(c, t, kNoCalibration);
  std::reverse(c.groups.begin(), c.groups.end());
  HeteroPipelineResult r2 = search_hetero_pipeline(c, t, kNoCalibration);
  ASSERT_TRUE(r1.plan && r2.plan);
  EXPECT_EQ(r1.plan->str(), r2.plan->str());
  EXPECT_EQ(r1.plan->step.total, r2.plan->step.total);
}

TEST(HeteroPipeline, SaysHowManyLayersFitWhenTheModelDoesNot) {
  devices::ClusterSpec c = testing::example_cluster("mixed-h100-mi300x-910b");
  devices::TaskSpec t = testing::example_task("llama3-405b-train");
  HeteroPipelineResult r = search_hetero_pipeline(c, t, kNoCalibration);
  ASSERT_FALSE(r.plan);
  EXPECT_NE(r.why.find("of its 126 layers fit in the stages' memory"), std::string::npos) << r.why;
}

}  // namespace
}  // namespace yirage::planner

namespace yirage::planner {
namespace {

TEST(HeteroPipeline, ItsWrittenFormEvaluatesToTheSamePlan) {
  devices::ClusterSpec c = testing::example_cluster("mixed-h100-mi300x-910b");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  HeteroPipelineResult best = search_hetero_pipeline(c, t, kNoCalibration);
  ASSERT_TRUE(best.plan) << best.why;
  HeteroPipelineResult again = evaluate_hetero_pipeline(c, t, kNoCalibration, best.plan->str());
  ASSERT_TRUE(again.plan) << again.why;
  EXPECT_EQ(again.plan->str(), best.plan->str());
  EXPECT_DOUBLE_EQ(again.plan->step.total, best.plan->step.total);
  HeteroPipelineResult wrong =
      evaluate_hetero_pipeline(c, t, kNoCalibration, "dp=16 | h100: tp=1,pp=1,layers=80");
  EXPECT_FALSE(wrong.plan);
  EXPECT_TRUE(wrong.malformed);
  EXPECT_NE(wrong.why.find("each of the 3 named once"), std::string::npos) << wrong.why;
}

}  // namespace
}  // namespace yirage::planner
