// What a training step runs beside its GEMMs, priced as measured: softmax's arithmetic
// (GpuEfficiency::StreamFit::vector), fitted only where the rows tell bytes and arithmetic
// apart; the widening cast at its own rate; fused attention's backward from its forward.
#include "tests/unit/costmodel/held_out_error.h"

#include "costmodel/gpu_calibration.h"
#include "costmodel/gpu_kernel.h"
#include "costmodel/gpu_op.h"
#include "costmodel/measured.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace yirage::costmodel {
namespace {

using devices::DType;
using devices::Seconds;

const devices::DeviceSpec& h200() {
  return *testing::bundled_registry().find("H200");
}

// The H200's softmax rows: 16-bit rows of 4,096 and 8,192 (ops.csv), and with `loss` the
// loss's fp32 rows of 32K-152K (ops_loss.csv), in one file.
MeasuredFile softmax_rows(bool loss) {
  auto dir = devices::data_dir() / "benchmarks" / "H200";
  MeasuredFile f = load_measured(dir / "ops.csv");
  std::erase_if(f.rows, [](const MeasuredRow& r) { return r.op != "softmax"; });
  if (loss) {
    MeasuredFile l = load_measured(dir / "ops_loss.csv");
    f.rows.insert(f.rows.end(), l.rows.begin(), l.rows.end());
  }
  return f;
}

TEST(StreamArithmetic, TheSlowerOfBytesAndArithmeticBoundsAFittedKernel) {
  GpuEfficiency e;
  e.memory = 0.8;
  e.stream["softmax"] = {1.5, Seconds{4e-6}, Seconds{}, 0.02};
  double hbm = h200().memory_bandwidth.value.value * e.memory;
  for (double bytes_per_element : {2.0, 4.0}) {
    double n = 4096.0 * 32768;
    double bytes = 2 * n * bytes_per_element;
    KernelEstimate k =
        stream_kernel(h200(), e, "softmax", "softmax", bytes / 2, bytes / 2, 5 * n, 32768);
    double peak = h200().peak_rate(devices::DType::kFp32)->value;
    double arithmetic = 5 * n / (peak * 0.02);
    EXPECT_NEAR(k.time().value, 4e-6 + std::max(1.5 * bytes / hbm, arithmetic), 1e-12);
  }
}

// With one dtype the bytes and the arithmetic scale together and cannot be told apart: no
// `vector`. With the loss's fp32 rows beside the 16-bit ones the fit finds softmax bound by
// its arithmetic in 16 bits and by its bytes in fp32, and prices the held-out rows of both
// far closer than one traffic for all.
TEST(StreamArithmetic, FittedOnlyWhereTwoDtypesTellBytesAndArithmeticApart) {
  std::vector<GpuCalibrationFit> one =
      fit_gpu_ops({softmax_rows(false)}, testing::bundled_registry());
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(one[0].efficiency.stream.count("softmax"), 1u);
  EXPECT_EQ(one[0].efficiency.stream.at("softmax").vector, 0);

  MeasuredFile both = softmax_rows(true);
  std::vector<GpuCalibrationFit> two = fit_gpu_ops({both}, testing::bundled_registry());
  ASSERT_EQ(two.size(), 1u);
  const GpuEfficiency::StreamFit& fit = two[0].efficiency.stream.at("softmax");
  EXPECT_GT(fit.vector, 0);
  GpuEfficiency bytes_only = one[0].efficiency;
  EXPECT_LT(held_out_error(both, two[0].efficiency, {"softmax"}),
            0.3 * held_out_error(both, bytes_only, {"softmax"}));
}

TEST(StreamArithmetic, AWideningCastReadsTwoBytesAndWritesFour) {
  const GpuOpInfo* widen = find_gpu_op("widen");
  ASSERT_NE(widen, nullptr);
  OpShape s;
  ASSERT_EQ(parse_op_shape(*widen, "268435456", &s), "");
  GpuEfficiency e;
  e.stream["widen"] = {1.7, Seconds{6e-6}, Seconds{}};
  std::string why;
  auto est = estimate_gpu_op(h200(), devices::DType::kBf16, e, *widen, s, false, &why);
  ASSERT_TRUE(est) << why;
  ASSERT_EQ(est->kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(est->kernels[0].hbm_bytes, 6.0 * 268435456);
}

TEST(AttentionBackward, FlashAttentionsRatioUntilFittedThenTheFittedRatioAndWhatIsBeside) {
  GpuEfficiency e;
  EXPECT_DOUBLE_EQ(attention_backward_time(e, 1e-3, 0, 0), kFlashBackward * 1e-3);
  e.attention_backward = 2.4;
  EXPECT_DOUBLE_EQ(attention_backward_time(e, 1e-3, 0, 50e-6), 2.4e-3 + 50e-6);
  // The main kernel's longest tile is half the forward's.
  EXPECT_DOUBLE_EQ(attention_backward_time(e, 1e-3, 2e-4, 50e-6), 2.4 * 0.9e-3 + 50e-6);
}

// Beside its main kernel the backward reads dO and O (16 bits) and converts dQ from fp32;
// under GQA it also sums each key head's gradients over its group: 4 heads to 1, 8 B in for
// every 2 B out, per element of dK and dV.
TEST(AttentionBackward, TheKernelsBesideMoveTheirTensorsOnce) {
  GpuEfficiency e;
  AttentionShape mha{2, 8, 8, 4096, 4096, 128, true};
  std::vector<KernelEstimate> k = attention_backward_kernels(h200(), DType::kBf16, e, mha);
  ASSERT_EQ(k.size(), 2u);
  double q = 2.0 * 8 * 4096 * 128;
  EXPECT_DOUBLE_EQ(k[0].hbm_bytes, 2 * q * 2 + 2.0 * 8 * 4096 * 4);
  EXPECT_DOUBLE_EQ(k[1].hbm_bytes, q * 4 + q * 2);
  AttentionShape gqa{2, 8, 2, 4096, 4096, 128, true};
  k = attention_backward_kernels(h200(), DType::kBf16, e, gqa);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_DOUBLE_EQ(k[2].hbm_bytes, 2 * q * 2 + 2 * q / 4 * 2);
  AttentionShape decode{2, 8, 2, 1, 4096, 128, false};
  EXPECT_TRUE(attention_backward_kernels(h200(), DType::kBf16, e, decode).empty());
}

// Fitted on half of the H200's backward rows (cuDNN's flash backward timed beside its causal
// forward), the ratio and the host's floor price the other half far closer than
// FlashAttention-2's 2.5 with no floor. The kernels beside the main one are priced at the
// elementwise rate, fitted on ops.csv's rows of that kind.
TEST(AttentionBackward, FittedOnHalfTheRowsPricesTheOtherHalf) {
  auto dir = devices::data_dir() / "benchmarks" / "H200";
  MeasuredFile elementwise = load_measured(dir / "ops.csv");
  std::erase_if(elementwise.rows, [](const MeasuredRow& r) { return r.op != "elementwise"; });
  std::vector<GpuCalibrationFit> fits =
      fit_gpu_ops({elementwise, load_measured(dir / "ops_attention_backward.csv")},
                  testing::bundled_registry());
  ASSERT_EQ(fits.size(), 1u);
  ASSERT_TRUE(fits[0].attention_backward.has_value());
  const GpuEfficiency& e = fits[0].efficiency;
  EXPECT_GT(e.attention_backward, 2.0);
  EXPECT_LT(e.attention_backward, 3.5);
  EXPECT_LT(fits[0].attention_backward->held_out_mape,
            0.5 * fits[0].attention_backward->unfitted_held_out_mape);
}

}  // namespace
}  // namespace yirage::costmodel
