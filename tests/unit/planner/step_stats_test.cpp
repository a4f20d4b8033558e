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

TEST(StepStats, ClustersAreSeparateChoices) {
  // The same task on two clusters (an H100 and an H200 of the same size) is two choices.
  std::vector<StepPoint> points = {point("h100x2", "a", "tp=2", 1.0, 1.0),
                                   point("h200x2", "a", "dp=2", 2.0, 0.5),
                                   point("h200x2", "a", "tp=2", 1.5, 0.6)};
  StepStats all = group(step_stats(points), "all");
  EXPECT_EQ(all.choices, 1u);
  EXPECT_NEAR(all.regret, 100.0 * (2.0 / 1.5 - 1), 1e-9);
}

}  // namespace
}  // namespace yirage::planner
