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
    EXPECT_DOUBLE_EQ(e.tokens_per_s, 20.0 * 256);  // the offered load, served
    EXPECT_LT(e.prefill_share, 1);
    EXPECT_GT(e.ttft, 0);
    EXPECT_GT(e.tpot, 0);
  }
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
