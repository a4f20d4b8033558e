// The statistics validate-training reports over measured steps: error, bias, memory error,
// and the shortfall of the layout the model would pick among those measured.
#include "planner/step_validation.h"

#include <gtest/gtest.h>

namespace yirage::planner {
namespace {

StepPoint point(
    const char* cluster, const char* task, const char* layout, double measured, double estimate) {
  StepPoint p;
  p.row.cluster = cluster;
  p.row.task = task;
  p.row.layout = layout;
  p.row.status = "ok";
  p.row.gpus = 2;
  p.row.step_s = measured;
  p.row.peak_reserved = 100;
  p.estimate_s = estimate;
  p.estimate_memory = 90;
  p.width = "h4096";
  return p;
}

const StepStats& group(const std::vector<StepStats>& stats, const std::string& name) {
  for (const StepStats& s : stats) {
    if (s.group == name)
      return s;
  }
  ADD_FAILURE() << "no group " << name;
  return stats.front();
}

TEST(StepStats, WorstPickIsTheShortfallOfTheFastestPricedLayout) {
  // The model prices tp=2 fastest (1.0 s) where it measured 1.2 s and dp=2 1.0 s: a pick
  // 20% slower than the best. The other task's pick is its fastest: no shortfall.
  std::vector<StepPoint> points = {
      point("h200x2", "a", "tp=2", 1.2, 1.0), point("h200x2", "a", "dp=2", 1.0, 1.1),
      point("h200x2", "b", "tp=2", 2.0, 1.9), point("h200x2", "b", "dp=2", 2.5, 2.4),
      point("h200x2", "c", "tp=2", 3.0, 3.0)};  // one layout: no choice
  StepStats all = group(step_stats(points), "all");
  EXPECT_EQ(all.choices, 2u);
  EXPECT_NEAR(all.regret, 20.0, 1e-9);
  EXPECT_NEAR(all.memory_mape, 10.0, 1e-9);
}

TEST(StepStats, ALayoutMeasuredMoreThanOnceCountsWithItsMedian) {
  std::vector<StepPoint> points = {
      point("h200x2", "a", "tp=2", 1.0, 1.0), point("h200x2", "a", "tp=2", 1.1, 1.0),
      point("h200x2", "a", "tp=2", 1.6, 1.0), point("h200x2", "a", "dp=2", 1.0, 1.2)};
  EXPECT_NEAR(group(step_stats(points), "all").regret, 10.0, 1e-9);
}

TEST(StepStats, RepeatSpreadIsHowFarRepeatedRowsLieFromTheirMedian) {
  // tp=2 ran three times (1.0, 1.1, 1.6 s: median 1.1, distances 1/11, 0, 5/11); dp=2 once,
  // so it is no repeat. The model prices tp=2 at its median and dp=2 20% high.
  std::vector<StepPoint> points = {
      point("h200x2", "a", "tp=2", 1.0, 1.1), point("h200x2", "a", "tp=2", 1.1, 1.1),
      point("h200x2", "a", "tp=2", 1.6, 1.1), point("h200x2", "a", "dp=2", 1.0, 1.2)};
  StepStats all = group(step_stats(points), "all");
  EXPECT_EQ(all.repeat_rows, 3u);
  EXPECT_NEAR(all.repeat_spread, 100.0 * (6.0 / 11) / 3, 1e-9);
  EXPECT_EQ(all.layouts, 2u);
  EXPECT_NEAR(all.layout_mape, (0 + 20.0) / 2, 1e-9);
  // Per row the same model errs on every tp=2 row but the median's.
  EXPECT_NEAR(all.mape, 100.0 * (0.1 + 0 + 0.5 / 1.6 + 0.2) / 4, 1e-9);
}

TEST(StepStats, NoLayoutMeasuredTwiceHasNoRepeatSpread) {
  std::vector<StepPoint> points = {point("h200x2", "a", "tp=2", 1.0, 1.0),
                                   point("h100x2", "a", "tp=2", 2.0, 1.0)};
  StepStats all = group(step_stats(points), "all");
  EXPECT_EQ(all.repeat_rows, 0u);  // another cluster: another layout
  EXPECT_EQ(all.repeat_spread, 0.0);
  EXPECT_EQ(all.layouts, 2u);
  EXPECT_NEAR(all.layout_mape, 25.0, 1e-9);
}

TEST(StepStats, ClustersAreSeparateChoices) {
  // The same task on two clusters (an H100 and an H200 of the same size) is two choices.
  std::vector<StepPoint> points = {point("h100x2", "a", "tp=2", 1.0, 1.0),
                                   point("h200x2", "a", "dp=2", 2.0, 0.5),
                                   point("h200x2", "a", "tp=2", 1.5, 0.6)};
  StepStats all = group(step_stats(points), "all");
  EXPECT_EQ(all.choices, 1u);
  EXPECT_NEAR(all.regret, 100.0 * (2.0 / 1.5 - 1), 1e-9);
}

const KernelStats& kind(const std::vector<KernelStats>& stats, const std::string& name) {
  for (const KernelStats& k : stats) {
    if (k.group == "all" && k.kind == name)
      return k;
  }
  ADD_FAILURE() << "no kind " << name;
  return stats.front();
}

TEST(KernelStats, EachKindAgainstTheProfiledKernelsOfTheSameStep) {
  // Two profiled steps of 1 s: GEMMs 0.5 s measured, priced 0.6 and 0.45 s (+20%, -10%); the
  // loss priced twice what it measured; a third step without a profile is left out.
  std::vector<StepPoint> points = {point("h200x2", "a", "tp=2", 1.0, 1.1),
                                   point("h200x2", "a", "dp=2", 1.0, 0.9),
                                   point("h200x2", "b", "dp=2", 1.0, 1.0)};
  points[0].row.kernels = KernelTime{0.5, 0.1, 0.2, 0.05, 0};
  points[0].estimate_profiled_kernels = KernelTime{0.6, 0.1, 0.2, 0.1, 0.05};
  points[1].row.kernels = KernelTime{0.5, 0.1, 0.2, 0.05, 0};
  points[1].estimate_profiled_kernels = KernelTime{0.45, 0.1, 0.1, 0.1, 0.05};
  std::vector<KernelStats> stats = kernel_stats(points);
  const KernelStats& gemm = kind(stats, "gemm");
  EXPECT_EQ(gemm.rows, 2u);
  EXPECT_NEAR(gemm.mape, 15.0, 1e-9);
  EXPECT_NEAR(gemm.bias, 5.0, 1e-9);
  EXPECT_NEAR(gemm.measured_share, 50.0, 1e-9);
  EXPECT_NEAR(gemm.model_share, 52.5, 1e-9);
  EXPECT_NEAR(kind(stats, "loss").bias, 100.0, 1e-9);
  EXPECT_NEAR(kind(stats, "memory").bias, -25.0, 1e-9);
  // Nothing measured of a kind: no error to average, only the model's share.
  EXPECT_EQ(kind(stats, "optimizer").rows, 0u);
  EXPECT_NEAR(kind(stats, "optimizer").model_share, 5.0, 1e-9);
  EXPECT_NEAR(kind(stats, "all").measured_share, 85.0, 1e-9);
  // A profile that names no loss kernel (Megatron-LM's loss runs as plain elementwise and
  // reduction kernels) counts the model's loss among the memory-bound kernels.
  points[0].row.kernels->loss = 0;
  points[1].row.kernels->loss = 0;
  stats = kernel_stats(points);
  EXPECT_EQ(kind(stats, "loss").rows, 0u);
  EXPECT_NEAR(kind(stats, "loss").model_share, 0.0, 1e-9);
  EXPECT_NEAR(kind(stats, "memory").bias, 25.0, 1e-9);  // 0.3 and 0.2 against 0.2 each
}

// The model's kernels compared are those of the stage the profile counted: the first for
// Megatron-Core's rows (rank 0), the critical one for eager PyTorch's (the largest over the
// ranks); they differ under pipelining, where the last stage adds the head and the loss.
TEST(KernelStats, TheStageTheProfileCounted) {
  EXPECT_DOUBLE_EQ(profiled_as(KernelTime{1, 0, 0.2, 0.3, 0}, KernelTime{1, 0, 1, 0, 0}).memory,
                   0.5);
  EXPECT_DOUBLE_EQ(profiled_as(KernelTime{1, 0, 0.2, 0.3, 0}, KernelTime{1, 0, 1, 0.1, 0}).loss,
                   0.3);
}

}  // namespace
}  // namespace yirage::planner
