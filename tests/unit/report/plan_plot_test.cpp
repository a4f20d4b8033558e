// --plot: the best plans' time and memory as stacked bars.
#include "report/plan_plot.h"

#include "tests/unit/text_count.h"

#include <gtest/gtest.h>

#include <string>

namespace yirage::report {
namespace {

using testing::count;

planner::PlanEstimate plan(std::int64_t tp, double compute, double tp_comm) {
  planner::PlanEstimate p;
  p.layout.tp = tp;
  p.step = {compute, tp_comm, 0, 0, 0, 0.5, compute + tp_comm + 0.5, {}};
  p.memory.weights = 10e9;
  p.memory.activations = 30e9;
  p.memory.capacity = 80e9;
  return p;
}

TEST(PlanPlot, ABarPerPlanAPiecePerNonZeroPartAndTheUsableLine) {
  std::vector<planner::PlanEstimate> plans = {plan(1, 10, 0), plan(2, 6, 2), plan(4, 4, 3)};
  std::string svg = training_plot_svg("70b <on> 32", plans, 2);  // the best two only
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("70b &lt;on&gt; 32"), std::string::npos);
  // Step: plan 1 compute and optimizer, plan 2 compute, TP comm and optimizer; memory: two
  // parts each; plus a legend square per part of each chart (6 + 4).
  EXPECT_EQ(count(svg, "<rect x="), 2u + 3u + 2u + 2u + 10u);
  EXPECT_EQ(count(svg, "<title>usable: 80 GB</title>"), 2u);
  EXPECT_NE(svg.find(plans[1].layout.str()), std::string::npos);
  EXPECT_EQ(svg.find(plans[2].layout.str()), std::string::npos);
}

TEST(PlanPlot, DecodePlansShowTheirTimePerToken) {
  planner::InferEstimate p;
  p.mode = devices::Mode::kDecode;
  p.tpot = 0.012;
  p.weights = 8e9;
  p.kv_cache = 2e9;
  p.capacity = 80e9;
  std::string svg = inference_plot_svg("decode", {p}, 8);
  EXPECT_NE(svg.find("Time per output token per plan"), std::string::npos);
  EXPECT_NE(svg.find("TPOT: 12 ms"), std::string::npos);
}

}  // namespace
}  // namespace yirage::report
