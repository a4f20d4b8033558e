// The schedules of a GEMM and of attention as the libraries run them on Hopper: stream-K
// over a partial last wave, the operands' stream at its fitted rate, split-K's reduction
// queued behind the GEMM, and causal attention's whole diagonal blocks; and the fitted
// row-wise kernels' walk along a row beside their stream of rows.
#include "tests/unit/costmodel/held_out_error.h"

#include "costmodel/gpu_calibration.h"
#include "costmodel/gpu_kernel.h"
#include "costmodel/measured.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace yirage::costmodel {
namespace {

using devices::DType;
using devices::Seconds;

const devices::DeviceRegistry& registry() {
  static const devices::DeviceRegistry r = devices::DeviceRegistry::load_bundled();
  return r;
}

const devices::DeviceSpec& h100() {
  return *registry().find("H100-SXM");
}

TEST(GemmSchedule, StreamKEvensOutAPartialLastWave) {
  // 2048 x 4096 in 128 x 128 tiles: 512 tiles over 132 SMs, 3.9 waves.
  GpuEfficiency waves;
  GpuEfficiency even;
  even.stream_k = true;
  KernelEstimate w = gemm_kernel(h100(), DType::kBf16, waves, 2048, 4096, 4096);
  KernelEstimate s = gemm_kernel(h100(), DType::kBf16, even, 2048, 4096, 4096);
  EXPECT_EQ(w.tile.find("stream-k"), std::string::npos) << w.tile;
  EXPECT_NE(s.tile.find("stream-k"), std::string::npos) << s.tile;
  EXPECT_LT(s.time().value, w.time().value);
  double ideal = 2.0 * 2048 * 4096 * 4096 / h100().peak_rate(DType::kBf16)->value;
  EXPECT_GE(s.compute.value, ideal * 0.999);
  // Whole waves gain nothing from it: the same estimate either way.
  KernelEstimate full_w = gemm_kernel(h100(), DType::kBf16, waves, 128 * 12, 128 * 11 * 8, 4096);
  KernelEstimate full_s = gemm_kernel(h100(), DType::kBf16, even, 128 * 12, 128 * 11 * 8, 4096);
  EXPECT_DOUBLE_EQ(full_s.time().value, full_w.time().value);
}

TEST(GemmSchedule, AGemvStreamsItsOperandsAtTheFittedRateAfterARamp) {
  GpuEfficiency e;
  e.memory = 0.8;
  e.launch = Seconds{5e-6};
  e.stream_k = true;
  double hbm = h100().memory_bandwidth.value.value * e.memory;
  double t = (8192.0 * 8192 + 8192 + 8192) * 2 / hbm;  // 1 x 8192 x 8192: about 50 us
  // The ramp is the stream's first bytes up to the fitted limit: here 20 us, then all of it.
  for (double limit : {20e-6, 1e-3}) {
    e.stream["gemm"] = {0.9, Seconds{limit}, Seconds{}};
    KernelEstimate k = gemm_kernel(h100(), DType::kBf16, e, 1, 8192, 8192);
    EXPECT_NEAR(k.time().value, 5e-6 + std::min(t, limit) + 0.9 * t, 1e-12) << limit;
    EXPECT_EQ(k.bound(), "memory");
  }
  // A GEMM bound by its arithmetic keeps the tile model's time.
  GpuEfficiency tiles = e;
  tiles.stream.erase("gemm");
  EXPECT_DOUBLE_EQ(gemm_kernel(h100(), DType::kBf16, e, 8192, 8192, 8192).time().value,
                   gemm_kernel(h100(), DType::kBf16, tiles, 8192, 8192, 8192).time().value);
}

TEST(GemmSchedule, SplitKReductionCostsAQueuedKernelsGap) {
  GpuEfficiency e;
  e.launch = Seconds{5e-6};
  e.graph_launch = Seconds{1e-6};
  // 1 x 1280 in 64-column tiles is 20 tiles on 132 SMs: the K loop is split.
  KernelEstimate k = gemm_kernel(h100(), DType::kBf16, e, 1, 1280, 8192);
  ASSERT_NE(k.tile.find("split-k"), std::string::npos) << k.tile;
  EXPECT_DOUBLE_EQ(k.launch.value, 6e-6);
}

TEST(GemmSchedule, CausalAttentionComputesWholeDiagonalBlocks) {
  // The i-th block of 128 queries computes i + 1 key blocks, n (n + 1) / 2 over n blocks where
  // the useful keys are half of n; the units share them evenly, and the unit that takes the
  // last tile then runs about half the longest (n blocks): n (n + 2) / 2 blocks a unit with
  // 132 heads on 132 units, so short prompts pay more per useful flop.
  GpuEfficiency e;
  auto per_flop = [&](std::int64_t len) {
    KernelEstimate k =
        attention_kernel(h100(), DType::kBf16, e, AttentionShape{1, 132, 4, len, len, 128, true});
    return k.compute.value / k.flops;
  };
  double ratio = per_flop(1024) / per_flop(16384);
  EXPECT_NEAR(ratio, (8.0 * 10 / (1024.0 * 1025)) / (128.0 * 130 / (16384.0 * 16385)), 1e-9);
}

// Under a causal mask the longest tile's half is added to the units' average share; a
// non-causal prompt's tiles are equal and run in waves.
TEST(GemmSchedule, OnlyACausalMaskLeavesAnUnequalTail) {
  GpuEfficiency e;
  KernelEstimate causal =
      attention_kernel(h100(), DType::kBf16, e, AttentionShape{1, 8, 8, 8192, 8192, 128, true});
  EXPECT_GT(causal.unequal_tail.value, 0);
  EXPECT_LT(causal.unequal_tail.value, causal.compute.value);
  KernelEstimate full =
      attention_kernel(h100(), DType::kBf16, e, AttentionShape{1, 8, 8, 8192, 8192, 128, false});
  EXPECT_EQ(full.unequal_tail.value, 0);
}

// A prompt's fused attention computes its head dimension in cuDNN's tile (64 up to 64, 128 up to
// 128): 80 and 96 cost what 128 does; and each score's softmax costs attention_score_width
// more columns, so 64 costs more than half of 128. At 128 the fitted rates hold unchanged.
TEST(GemmSchedule, PromptAttentionComputesItsHeadDimensionInTiles) {
  GpuEfficiency e;
  auto compute = [&](std::int64_t d) {
    return attention_kernel(h100(), DType::kBf16, e, AttentionShape{1, 132, 4, 4096, 4096, d, true})
        .compute.value;
  };
  EXPECT_DOUBLE_EQ(compute(80), compute(128));
  EXPECT_DOUBLE_EQ(compute(96), compute(128));
  EXPECT_DOUBLE_EQ(compute(64), compute(128) / 2);
  EXPECT_DOUBLE_EQ(prompt_attention_width(128, e), 128);
  e.attention_score_width = 64;
  EXPECT_DOUBLE_EQ(prompt_attention_width(128, e), 128);
  EXPECT_DOUBLE_EQ(prompt_attention_width(64, e), 128.0 * 128 / 192);
  EXPECT_NEAR(compute(64) / compute(128), 128.0 / 192, 1e-12);
  EXPECT_DOUBLE_EQ(prompt_attention_width(256, e), 128.0 * 320 / 192);
}

// Fitted on the head-dimension rows' fit split (the fractions on 128 alone), the softmax's width
// prices the held-out rows closer than none, and is what H200's calibration ships.
TEST(GemmSchedule, AttentionScoreWidthIsFittedOnOtherHeadDimensions) {
  std::filesystem::path dir = devices::data_dir() / "benchmarks" / "H200";
  std::vector<GpuCalibrationFit> fits = fit_gpu_ops(
      {load_measured(dir / "ops.csv"), load_measured(dir / "ops_attention_head_dims.csv")},
      registry());
  ASSERT_EQ(fits.size(), 1u);
  ASSERT_TRUE(fits[0].attention_score.has_value());
  EXPECT_GT(fits[0].efficiency.attention_score_width, 0);
  EXPECT_LT(fits[0].attention_score->held_out_mape, fits[0].attention_score->unfitted_mape);
}

// Fitted on the H200 rows of the fit split, the operand streams price the held-out GEMMs and
// attention closer than the tile model's HBM term alone, and stream-K is chosen.
TEST(GemmSchedule, CalibrationFitsTheStreamsAndChoosesStreamK) {
  MeasuredFile ops = load_measured(devices::data_dir() / "benchmarks" / "H200" / "ops.csv");
  std::vector<GpuCalibrationFit> fits = fit_gpu_ops({ops}, registry());
  ASSERT_EQ(fits.size(), 1u);
  const GpuEfficiency& e = fits[0].efficiency;
  EXPECT_TRUE(e.stream_k);
  ASSERT_EQ(e.stream.count("gemm"), 1u);
  ASSERT_EQ(e.stream.count("attention"), 1u);
  GpuEfficiency tiles = e;
  tiles.stream.erase("gemm");
  tiles.stream.erase("attention");
  double streams = held_out_error(ops, e, {"gemm", "attention"});
  double alone = held_out_error(ops, tiles, {"gemm", "attention"});
  EXPECT_LT(streams, 0.8 * alone);
}

// A fitted row-wise kernel: one block's walk along its row and the stream of every row
// overlap (the root of the sum of their squares), after the fitted latency.
TEST(RowWiseKernel, TheWalkAlongARowAndTheStreamOfRowsOverlap) {
  GpuEfficiency e;
  e.memory = 0.8;
  e.stream["rmsnorm"] = {1.0, Seconds{4e-6}, Seconds{1.5e-9}};
  double hbm = h100().memory_bandwidth.value.value * e.memory;
  for (double rows : {1.0, 1024.0, 16384.0}) {
    double bytes = rows * 8192 * 2 * 2;
    KernelEstimate k =
        stream_kernel(h100(), e, "rmsnorm", "rmsnorm", bytes / 2, bytes / 2, 0, 8192);
    double walk = 1.5e-9 * 8192;
    EXPECT_NEAR(k.time().value, 4e-6 + std::hypot(walk, bytes / hbm), 1e-12) << rows;
  }
}

}  // namespace
}  // namespace yirage::costmodel
