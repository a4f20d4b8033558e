// The closed-form pieces of the COMET model checked against the hand derivations of
// comet-model.md §7: compute (E9, E10), mesh collectives (E7, E8), transfers (E1, E2), and the
// shared-port window (E3) in both its reference and corrected forms.
#include "costmodel/comet/collective.h"
#include "costmodel/comet/compute.h"
#include "costmodel/comet/staging.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

namespace yirage::costmodel::comet {
namespace {

const std::filesystem::path kDir = devices::data_dir() / "comet";

TEST(CometCompute, SystolicAndSimdPrimitives) {
  ArchSpec a = load_arch(kDir / "arch.yaml");
  ProblemSpec p;
  p.dims = {"M", "N", "K"};
  OperationInfo gemm{.type = "GEMM",
                     .name = "GEMM",
                     .primitive = {{"M", 256}, {"N", 16}, {"K", 128}},
                     .reduction_dims = {"M"},
                     .reduction_factors = {256}};
  // (2*32 + 32 + 256 - 2) * ceil(16/256) * ceil(128/256) = 350 (E9)
  EXPECT_EQ(primitive_cycles(a.computes[0], gemm, p), 350);
  OperationInfo rowmax{.type = "rowmax",
                       .name = "ROWMAX",
                       .primitive = {{"M", 1}, {"N", 16}, {"K", 128}},
                       .reduction_dims = {"K"},
                       .reduction_factors = {128}};
  // ceil(log2 16) * ceil(2048 / (16 * 128)) = 4 (E10)
  EXPECT_EQ(primitive_cycles(a.computes[1], rowmax, p), 4);
  rowmax.type = "exp";
  EXPECT_EQ(primitive_cycles(a.computes[1], rowmax, p), 3);
}

TEST(CometCollective, MeshHopsClosedForm) {
  NetworkSpec n;
  n.has_mesh = true;
  n.mesh_x = n.mesh_y = 4;
  EXPECT_EQ(mesh_hops(mesh_shape(n, 4)), 2);   // 2x2: the reference table
  EXPECT_EQ(mesh_hops(mesh_shape(n, 16)), 6);  // 4x4
  EXPECT_EQ(mesh_hops(mesh_shape(n, 8)), 4);   // 3x3 (not in the reference table)
  n.mesh_y = 2;
  MeshShape s = mesh_shape(n, 8);  // clipped to a 4x2 mesh
  EXPECT_EQ(s.x, 4);
  EXPECT_EQ(s.y, 2);
  EXPECT_EQ(mesh_hops(s), 4);
}

TEST(CometCollective, AllReducesOfTheWorkedExample) {
  ArchSpec a = load_arch(kDir / "arch.yaml");
  CollectiveInfo c;
  c.type = CollectiveType::kAllReduce;
  c.op = ReduceOp::kMax;
  c.precision = 16;
  c.level = a.find_level("GB");
  c.src = c.dest = {c.level};
  CollectiveCost d = collective_cost(a, c, 256, 256, Options::reference());
  EXPECT_EQ(d.memory, 288);   // ceil(4 (32 + 32) + 32)
  EXPECT_EQ(d.network, 212);  // 2 (10 + 32) + 512 * 4 / 16
  c.op = ReduceOp::kAdd;
  CollectiveCost f = collective_cost(a, c, 16384, 16384, Options::reference());
  EXPECT_EQ(f.memory, 18432);
  EXPECT_EQ(f.network, 12308);
  EXPECT_EQ(f.total(), 30740);
}

TensorTiming reader(std::vector<std::int64_t> transfer, std::int64_t window) {
  TensorTiming t;
  t.target = 0;
  t.child = 1;
  t.compute = window * static_cast<std::int64_t>(transfer.size());
  t.window.assign(transfer.size(), window);
  t.transfer = std::move(transfer);
  return t;
}

TEST(CometStaging, SharedPortWindow) {
  // Two reads of 3 cycles per iteration share one port and a 4-cycle window.
  std::vector<TensorTiming> ts = {reader({3, 3, 0}, 4), reader({3, 3, 0}, 4)};
  NodeCost fixed = stage(ts, 3, {}, {}, Options{});
  EXPECT_EQ(fixed.stalls, 2 * (3 + 3 - 4));  // E3: max(0, sum_j t_ij - W_i)
  EXPECT_EQ(fixed.total, 12 + 4);
  NodeCost ref = stage(ts, 3, {}, {}, Options::reference());
  // In order: the first leaves 1 cycle of window, the second stalls 2 per slot.
  EXPECT_EQ(ref.stalls, 4);
  // A compulsory transfer is never hidden.
  ts[1].hide = false;
  EXPECT_EQ(stage(ts, 3, {}, {}, Options{}).stalls, 6);
}

}  // namespace
}  // namespace yirage::costmodel::comet
