// The step program of a plan (planner/step_program.h) replayed in SimGrid: the interleaved
// schedule runs every chunk of every micro-batch and shrinks the bubble as the estimate does.
#include "planner/step_program.h"

#include "tests/unit/test_data.h"

#include "costmodel/sim/simulate.h"
#include "planner/train_estimate.h"

#include <gtest/gtest.h>

#include <variant>

namespace yirage::planner {
namespace {

const costmodel::CalibrationSet kNoCalibration;

struct Replayed {
  double estimate = 0;
  double simulated = 0;
  std::size_t computes_on_rank0 = 0;
};

Replayed replay(const TrainContext& cx, const Layout& l) {
  auto e = estimate_training(cx, l);
  EXPECT_TRUE(std::holds_alternative<PlanEstimate>(e)) << l.str();
  StepProgramResult p = training_step_program(cx, l);
  EXPECT_TRUE(p.step.has_value()) << p.why;
  costmodel::SimResult r = costmodel::simulate(cx.cluster, p.step->program);
  Replayed out;
  out.estimate = std::get<PlanEstimate>(e).step.total;
  out.simulated = r.makespan.value + std::get<PlanEstimate>(e).step.optimizer;
  for (const costmodel::SimTask& t : p.step->program.tasks) {
    if (t.kind == costmodel::SimTaskKind::kCompute && t.ranks.front() == 0 &&
        t.name != "step end" && t.name != "backward end") {
      ++out.computes_on_rank0;
    }
  }
  return out;
}

// Llama 3 8B on one DGX, tp = 2, pp = 4 and only 8 micro-batches: a bubble of 3 / 8 at vpp = 1,
// 3 / 16 at vpp = 2, 3 / 32 at vpp = 4 (Narayanan et al. 2021, §2.2).
TEST(StepProgram, InterleavingShrinksTheBubbleAsEstimated) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  t.global_batch = 8;
  TrainContext cx{c, t, kNoCalibration};
  double previous = 0;
  for (std::int64_t vpp : {1, 2, 4}) {
    Layout l{1, 2, 4, 1, Recompute::kNone, 1, vpp};
    Replayed r = replay(cx, l);
    // Every chunk's forward and backward of every micro-batch runs on the first device.
    EXPECT_EQ(r.computes_on_rank0, static_cast<std::size_t>(2 * 8 * vpp)) << l.str();
    EXPECT_NEAR(r.simulated / r.estimate, 1.0, 0.05)
        << l.str() << ": simulated " << r.simulated << " s, estimate " << r.estimate << " s";
    if (vpp > 1) {
      EXPECT_LT(r.simulated, previous) << l.str();
    }
    previous = r.simulated;
  }
}

// Without overlap the replay starts the gradient sync after the last backward, as the estimate
// prices it: both steps grow by about the same time.
TEST(StepProgram, AGradientSyncWithoutOverlapFollowsTheBackward) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  devices::TaskSpec t = testing::example_task("llama3-8b-train");
  t.global_batch = 64;
  TrainContext cx{c, t, kNoCalibration};
  Layout on{32, 1, 1, 1, Recompute::kFull, 1};
  Layout off = on;
  off.dp_overlap = false;
  Replayed a = replay(cx, on);
  Replayed b = replay(cx, off);
  double estimated = b.estimate - a.estimate;
  EXPECT_GT(estimated, 0.01 * a.estimate);
  EXPECT_NEAR((b.simulated - a.simulated) / estimated, 1.0, 0.25)
      << "simulated " << a.simulated << " and " << b.simulated << " s, estimated " << a.estimate
      << " and " << b.estimate << " s";
}

}  // namespace
}  // namespace yirage::planner
