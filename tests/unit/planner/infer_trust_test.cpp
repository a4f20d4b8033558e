// The trust line of inference plans: the inference model's error on the steps committed under
// data/benchmarks/<device>/infer_steps*.csv, split by weights width and framework.
#include "planner/infer_trust.h"

#include "tests/unit/test_data.h"

#include <gtest/gtest.h>

namespace yirage::planner {
namespace {

InferTrust trust(const std::string& device, devices::DType weights, devices::Framework f) {
  devices::TaskSpec task;
  task.precision = weights;
  task.framework = f;
  return infer_trust(devices::data_dir() / "benchmarks", device, task,
                     devices::DeviceRegistry::load_bundled(),
                     devices::ModelRegistry::load_bundled(),
                     costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration"));
}

TEST(InferTrust, PlainPytorchStepsOnH200AreWithinTheBar) {
  InferTrust t = trust("H200", devices::DType::kBf16, devices::Framework::kPytorch);
  EXPECT_GT(t.same.ttft_rows, 50u);
  EXPECT_GT(t.same.tpot_rows, 100u);
  EXPECT_LT(t.same.ttft_mape, 10);
  EXPECT_LT(t.same.tpot_mape, 10);
  EXPECT_EQ(t.other.tpot_rows, 0u);  // every committed step ran plain PyTorch
  EXPECT_EQ(infer_trust_text(t).find("not validated"), std::string::npos);
}

TEST(InferTrust, EightBitWeightsCountOnlyTheirOwnSteps) {
  InferTrust wide = trust("H200", devices::DType::kBf16, devices::Framework::kPytorch);
  InferTrust narrow = trust("H200", devices::DType::kFp8, devices::Framework::kPytorch);
  EXPECT_GT(narrow.same.tpot_rows, 0u);
  EXPECT_NE(narrow.same.tpot_rows, wide.same.tpot_rows);
  EXPECT_NE(infer_trust_text(narrow).find("8-bit weights on H200"), std::string::npos);
}

TEST(InferTrust, AnEnginePlanSaysItsKernelsAreNotValidated) {
  InferTrust t = trust("H200", devices::DType::kBf16, devices::Framework::kMegatron);
  EXPECT_EQ(t.same.tpot_rows, 0u);
  EXPECT_GT(t.other.tpot_rows, 0u);
  EXPECT_EQ(infer_trust_text(t).rfind("not validated for a fused engine's kernels", 0), 0u);
}

TEST(InferTrust, ADeviceWithoutStepsIsNotValidated) {
  InferTrust t = trust("A100-80GB", devices::DType::kBf16, devices::Framework::kPytorch);
  EXPECT_EQ(infer_trust_text(t),
            "not validated: no measured inference steps with 16-bit weights on A100-80GB");
}

}  // namespace
}  // namespace yirage::planner
