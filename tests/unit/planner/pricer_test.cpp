#include "planner/workload/pricer.h"

#include "tests/unit/test_data.h"

#include "costmodel/calibration.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

namespace yirage::planner {
namespace {

using devices::DType;

// W8A8 with a 16-bit cache: GEMMs and fused compounds at the weights' width, attention at the
// cache's, and every memory-bound kernel (norms, residuals, copies, quantisation, PyTorch's
// strided loops and cat) over 16-bit activations.
TEST(Pricer, EachOperationAtItsTensorsWidth) {
  const devices::DeviceSpec* d = testing::bundled_registry().find("H100-SXM");
  ASSERT_NE(d, nullptr);
  DeviceContext cx{*d, {}, DType::kBf16, std::nullopt};
  cx.gemm_dtype = DType::kFp8;
  cx.kv_dtype = DType::kFp16;
  EXPECT_EQ(op_dtype(cx, "gemm"), DType::kFp8);
  EXPECT_EQ(op_dtype(cx, "gated_mlp"), DType::kFp8);
  EXPECT_EQ(op_dtype(cx, "attention"), DType::kFp16);
  for (const char* op : {"elementwise", "copy", "quantize", "rmsnorm", "softmax", "strided",
                         "strided_binary", "cat"})
    EXPECT_EQ(op_dtype(cx, op), DType::kBf16) << op;
}

// The strided kinds move the bytes of their contiguous counterparts, at their own fitted
// rate: on the shipped H200 calibration, PyTorch's unvectorised SiLU of a gate half is slower
// than a contiguous copy of as many elements.
TEST(Pricer, StridedLoopsRunBelowContiguousOnes) {
  const devices::DeviceSpec* d = testing::bundled_registry().find("H200");
  ASSERT_NE(d, nullptr);
  costmodel::CalibrationSet shipped =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  const costmodel::GpuEfficiency* e = shipped.find_gpu("H200");
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(e->stream.contains("strided"));
  DeviceContext cx{*d, *e, DType::kBf16, std::nullopt};
  Pricer p(cx);
  std::int64_t n = std::int64_t{1} << 28;
  double strided = p.op("strided", {n}).time.value;
  double copy = p.op("copy", {n}).time.value;
  EXPECT_GT(strided, 1.5 * copy);
  EXPECT_GT(p.op("strided_binary", {n}).time.value, p.op("elementwise", {n}).time.value);
}

}  // namespace
}  // namespace yirage::planner
