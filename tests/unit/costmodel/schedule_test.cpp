#include "costmodel/schedule.h"

#include <gtest/gtest.h>

namespace yirage::costmodel {
namespace {

using devices::Seconds;

ScheduleNode task(const std::string& name, double s, const std::string& r) {
  return ScheduleNode::task(name, Seconds{s}, r);
}

void expect_accounted(const ScheduleCost& c) {
  EXPECT_NEAR(c.total.value, c.accounted().value, 1e-12);
}

TEST(Schedule, SequentialTransfersAreCompulsoryStalls) {
  ScheduleCost c = cost_schedule(
      ScheduleNode::group("step", Binding::kSequential,
                          {task("backward", 3, "compute"), task("all-reduce", 1, "network")}));
  EXPECT_DOUBLE_EQ(c.total.value, 4);
  EXPECT_DOUBLE_EQ(c.compute.value, 3);
  EXPECT_DOUBLE_EQ(c.compulsory_stall.value, 1);
  expect_accounted(c);
}

TEST(Schedule, OverlappedTransferOnlyCostsItsExcess) {
  ScheduleCost hidden = cost_schedule(
      ScheduleNode::group("overlap", Binding::kParallel,
                          {task("backward", 3, "compute"), task("all-reduce", 2, "network")}));
  EXPECT_DOUBLE_EQ(hidden.total.value, 3);
  EXPECT_DOUBLE_EQ(hidden.optional_stall.value + hidden.compulsory_stall.value, 0);
  ScheduleCost exposed = cost_schedule(
      ScheduleNode::group("overlap", Binding::kParallel,
                          {task("backward", 3, "compute"), task("all-reduce", 5, "network")}));
  EXPECT_DOUBLE_EQ(exposed.total.value, 5);
  EXPECT_DOUBLE_EQ(exposed.compute.value, 3);
  EXPECT_DOUBLE_EQ(exposed.compulsory_stall.value + exposed.optional_stall.value, 2);
  expect_accounted(exposed);
}

TEST(Schedule, SharedLinkIsAConflictStall) {
  // Data-parallel all-reduce and a pipeline send on the same NIC, beside 3 s of compute.
  ScheduleCost c = cost_schedule(
      ScheduleNode::group("overlap", Binding::kParallel,
                          {task("backward", 3, "compute"), task("all-reduce", 2, "network"),
                           task("p2p", 2, "network")}));
  EXPECT_DOUBLE_EQ(c.total.value, 4);
  EXPECT_DOUBLE_EQ(c.conflict_stall.value, 1);
  expect_accounted(c);
}

TEST(Schedule, PipelineBubbleIsMegatrons) {
  // p stages of t each over m micro-batches: (m + p - 1) t; the bubble (p - 1) t is the
  // pipeline's fill and drain (Narayanan et al. 2021, bubble fraction (p - 1) / m).
  const int p = 4;
  const int m = 8;
  std::vector<ScheduleNode> stages;
  for (int s = 0; s < p; ++s) {
    stages.push_back(task("stage " + std::to_string(s), 1, "compute:" + std::to_string(s)));
  }
  ScheduleCost c = cost_schedule(ScheduleNode::group("1f1b", Binding::kPipeline, stages, m));
  EXPECT_DOUBLE_EQ(c.total.value, m + p - 1);
  EXPECT_DOUBLE_EQ(c.compute.value, m);
  EXPECT_DOUBLE_EQ(c.compulsory_stall.value, p - 1);
  EXPECT_DOUBLE_EQ(c.conflict_stall.value, 0);
  expect_accounted(c);
}

TEST(Schedule, IterationsMultiply) {
  ScheduleCost c = cost_schedule(
      ScheduleNode::group("layers", Binding::kSequential, {task("layer", 2, "compute")}, 10));
  EXPECT_DOUBLE_EQ(c.total.value, 20);
}

}  // namespace
}  // namespace yirage::costmodel
