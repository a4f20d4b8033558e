#include "tests/unit/test_data.h"

#include "devices/cluster_loader.h"
#include "devices/task_loader.h"
#include "planner/infer_estimate.h"

#include <gtest/gtest.h>

namespace yirage::planner {
namespace {

const costmodel::CalibrationSet kNoCalibration;

TEST(Inference, KvCacheOfGqaDecode) {
  // Llama 3 70B, fp8, 64 sequences of 8192 tokens on TP 8: each device keeps one of the 8 KV
  // heads: 2 x 128 B per token and layer, 80 layers.
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  devices::TaskSpec t = testing::example_task("llama3-70b-decode");
  InferContext cx{c, t, kNoCalibration};
  auto r = estimate_inference(cx, InferLayout{1, 8, 1, 64});
  ASSERT_TRUE(std::holds_alternative<InferEstimate>(r));
  const InferEstimate& e = std::get<InferEstimate>(r);
  EXPECT_DOUBLE_EQ(e.kv_cache, 64.0 * 8192 * 80 * 2 * 128);
  // Decode reads every weight and the cache once per token: at least that over HBM.
  EXPECT_GT(e.tpot, (e.weights + e.kv_cache) / 3.35e12);
}

TEST(Inference, ServingKeepsUpWithTheRate) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  devices::TaskSpec t = testing::example_task("llama3-8b-serve");
  InferContext cx{c, t, kNoCalibration};
  InferSearchResult r = search_inference(cx);
  ASSERT_FALSE(r.plans.empty());
  for (const InferEstimate& e : r.plans) {
    EXPECT_DOUBLE_EQ(e.offered_tokens_per_s, 20.0 * 256);  // the offered load, served
    // What it sustains within the objective: at least the offered load, at its batch or
    // a larger one, and the tokens are that rate's.
    if (e.meets_objective) {
      EXPECT_GE(e.capacity_rate, 20.0);
    }
    EXPECT_GE(e.capacity_batch, e.layout.batch);
    EXPECT_DOUBLE_EQ(e.tokens_per_s, e.capacity_rate * 256);
    EXPECT_LT(e.prefill_share, 1);
    EXPECT_GT(e.ttft, 0);
    EXPECT_GT(e.tpot, 0);
  }
}

TEST(Inference, ATighterObjectiveLowersTheCapacity) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  devices::TaskSpec loose = testing::example_task("llama3-8b-serve");
  InferLayout l{8, 1, 1, 8};
  auto a = estimate_inference(InferContext{c, loose, kNoCalibration}, l);
  ASSERT_TRUE(std::holds_alternative<InferEstimate>(a));
  const InferEstimate& at_loose = std::get<InferEstimate>(a);
  // A TPOT bound just above the TPOT at the offered rate leaves little room above it.
  devices::TaskSpec tight = loose;
  tight.objective.tpot = devices::Seconds{at_loose.tpot * 1.01};
  auto b = estimate_inference(InferContext{c, tight, kNoCalibration}, l);
  ASSERT_TRUE(std::holds_alternative<InferEstimate>(b));
  double capacity = std::get<InferEstimate>(b).capacity_rate;
  EXPECT_LT(capacity, at_loose.capacity_rate);
  EXPECT_GT(capacity, 20.0);  // the offered rate still fits
  EXPECT_LT(capacity, 20.0 * 1.2);
}

// Chunked prefill: a prompt's first token takes at least its ceil(P / C) mixed iterations, each
// longer than a decode-only one; the mean iteration (the TPOT) lies between the two and
// grows with the rate; the capacity keeps the TPOT bound.
TEST(Inference, ChunkedPrefillSharesIterationsWithTheDecodes) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  devices::TaskSpec t = testing::example_task("llama3-8b-serve");
  t.serve->prefill_chunk = 512;
  InferLayout l{8, 1, 1, 16};
  devices::TaskSpec decode = t;
  decode.mode = devices::Mode::kDecode;
  decode.sequence_length = 2048 + 128;  // the serve step's mean context
  decode.global_batch = 16 * 8;
  auto d = estimate_inference(InferContext{c, decode, kNoCalibration}, l);
  ASSERT_TRUE(std::holds_alternative<InferEstimate>(d));
  double t_d = std::get<InferEstimate>(d).tpot;

  auto tpot_at = [&](double rate) {
    devices::TaskSpec at = t;
    at.serve->request_rate = devices::PerSec{rate};
    auto r = estimate_inference(InferContext{c, at, kNoCalibration}, l);
    EXPECT_TRUE(std::holds_alternative<InferEstimate>(r)) << rate;
    return std::holds_alternative<InferEstimate>(r) ? std::get<InferEstimate>(r) : InferEstimate{};
  };
  InferEstimate slow = tpot_at(1);
  InferEstimate busy = tpot_at(20);
  EXPECT_GT(slow.tpot, t_d);
  EXPECT_LT(slow.tpot, t_d * 1.2);
  EXPECT_GT(busy.tpot, slow.tpot);
  EXPECT_GT(busy.ttft, slow.ttft);
  ASSERT_TRUE(busy.prefill_chunk.has_value());
  EXPECT_EQ(*busy.prefill_chunk, 512);
  // Four chunks of 512, each a mixed iteration longer than the mean one.
  EXPECT_GT(slow.ttft, 4 * slow.tpot);
  // At the capacity rate the TPOT sits at the objective's bound or below it.
  InferEstimate at_capacity = tpot_at(busy.capacity_rate * 0.999);
  EXPECT_LE(at_capacity.tpot, t.objective.tpot->value * 1.001);
}

TEST(Inference, TooLargeIsRefusedWithTheShortfall) {
  devices::ClusterSpec c = testing::example_cluster("one-h100");
  devices::TaskSpec t = testing::example_task("llama3-70b-decode");
  InferContext cx{c, t, kNoCalibration};
  auto r = estimate_inference(cx, InferLayout{1, 1, 1, 64});
  ASSERT_TRUE(std::holds_alternative<InferRejected>(r));
  EXPECT_GT(std::get<InferRejected>(r).shortfall, 0);
}

}  // namespace
}  // namespace yirage::planner
