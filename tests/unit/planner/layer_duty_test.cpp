// A layer's GEMMs at the clock their duty allows (GpuEfficiency::duty_slope): the less of the
// layer's GPU time its GEMMs and attention take, the faster its GEMMs run; and eager PyTorch's
// unvectorised parts priced at their own kinds' rates.
#include "tests/unit/test_data.h"

#include "costmodel/calibration.h"
#include "costmodel/gpu_kernel.h"
#include "planner/workload/eager_traffic.h"
#include "planner/workload/layer_cost.h"

#include <gtest/gtest.h>

namespace yirage::planner {
namespace {

costmodel::GpuEfficiency shipped(const char* device) {
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  return costmodel::sustained(*cal.find_gpu(device));
}

devices::ModelSpec llama8b() {
  return testing::example_task("llama3-8b-train").model;
}

TEST(LayerDuty, GemmsRunAtTheClockTheLayersDutyAllows) {
  const devices::DeviceSpec& d = *testing::bundled_registry().find("H200");
  DeviceContext back_to_back{d, shipped("H200"), devices::DType::kBf16, std::nullopt};
  ASSERT_GT(back_to_back.efficiency.duty_slope, 0);
  back_to_back.eager = true;
  back_to_back.fuse = false;
  LayerShape s{1, 4096, 1, false};
  LayerCost plain = layer_cost(llama8b(), s, back_to_back);
  LayerCost hot = layer_cost_at_duty(llama8b(), s, back_to_back);
  double duty = hot_duty(plain);
  ASSERT_GT(duty, 0.3);
  ASSERT_LT(duty, 0.95);
  double r = costmodel::duty_factor(back_to_back.efficiency, duty);
  ASSERT_LT(r, 1);
  // Large GEMMs are bound by the matrix rate: their time falls by the factor, give or take
  // the tile and memory terms that do not scale with the clock.
  EXPECT_NEAR(hot.forward_kernels.gemm / plain.forward_kernels.gemm, r, 0.02);
  EXPECT_DOUBLE_EQ(hot.forward_kernels.memory, plain.forward_kernels.memory);
  EXPECT_DOUBLE_EQ(hot.forward_kernels.attention, plain.forward_kernels.attention);
  EXPECT_LT(hot.forward, plain.forward);
  // Without a duty fit, nothing changes.
  DeviceContext unfitted = back_to_back;
  unfitted.efficiency.duty_slope = 0;
  EXPECT_DOUBLE_EQ(layer_cost_at_duty(llama8b(), s, unfitted).forward, plain.forward);
}

TEST(EagerTraffic, UnvectorisedPartsRunAtTheirKindsRates) {
  const devices::DeviceSpec& d = *testing::bundled_registry().find("H200");
  DeviceContext cx{d, shipped("H200"), devices::DType::kBf16, std::nullopt};
  EagerBytes b = eager_layer_bytes(llama8b(), LayerShape{1, 4096, 1, false});
  double all_plain = eager_stream_time(cx, b.forward, b.widen_forward);
  double parts = eager_forward_time(cx, b);
  // The broadcast products and the concatenation run well below the vectorised rate.
  EXPECT_GT(parts, 1.1 * all_plain);
  // Where the calibration has no such kinds, their bytes run at the elementwise rate.
  DeviceContext bare = cx;
  bare.efficiency.stream.erase("strided");
  bare.efficiency.stream.erase("cat");
  EXPECT_NEAR(eager_forward_time(bare, b), all_plain, 1e-4 * all_plain);
}

}  // namespace
}  // namespace yirage::planner
