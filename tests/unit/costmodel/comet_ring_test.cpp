// The ring variant of the mesh collectives (comet-model.md §6 ring, in the E7-E8 terms of
// §2.6), selected per collective with `algorithm: ring` in the mapping: hand-derived costs on
// the edge architecture's GB mesh (2 x 2, 5-cycle hops, 2 cycles per flit, 512-bit channels,
// 64 B/cycle link ports).
#include "costmodel/comet/collective.h"
#include "costmodel/comet/model.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

namespace yirage::costmodel::comet {
namespace {

const std::filesystem::path kDir = devices::data_dir() / "comet";

CollectiveInfo ring_on_gb(const ArchSpec& a, CollectiveType type, ReduceOp op) {
  CollectiveInfo c;
  c.type = type;
  c.op = op;
  c.precision = 16;
  c.level = a.find_level("GB");
  c.src = c.dest = {c.level};
  c.algorithm = CollectiveAlgorithm::kRing;
  return c;
}

TEST(CometRing, NeighbourHops) {
  EXPECT_EQ(ring_step_hops({2, 2}, 4), 1);  // a cycle of 1-hop links round the 2 x 2 square
  EXPECT_EQ(ring_step_hops({4, 4}, 16), 1);
  EXPECT_EQ(ring_step_hops({3, 3}, 8), 1);  // 3 x 3 less a corner
  EXPECT_EQ(ring_step_hops({1, 2}, 2), 1);
  EXPECT_EQ(ring_step_hops({3, 3}, 9), 2);  // odd count: no 1-hop cycle
  EXPECT_EQ(ring_step_hops({4, 1}, 4), 2);  // a line: folded ring
}

TEST(CometRing, AllReducesOfTheWorkedExample) {
  ArchSpec a = load_arch(kDir / "arch.yaml");
  CollectiveInfo c = ring_on_gb(a, CollectiveType::kAllReduce, ReduceOp::kAdd);
  // F: S = 16384 elements of 16 b on P = 4 GBs: chunk 4096 elements = 8192 B, 6 steps of one
  // hop. T_net = 6 (5 + 4096 x 16 / 512 x 2) + 3 x 4096 x 1 / 16 = 1566 + 768 = 2334;
  // T_mem = 6 (8192/64 + 8192/64) + 3 x 1 x 8192/64 = 1536 + 384 = 1920; mesh: 30740.
  CollectiveCost f = collective_cost(a, c, 16384, 16384, Options{});
  EXPECT_EQ(f.network, 2334);
  EXPECT_EQ(f.memory, 1920);
  EXPECT_EQ(f.total(), 4254);
  // D: S = 256: chunk 64 elements = 128 B. T_net = 6 (5 + 64 x 16 / 512 x 2) + 3 x 64 / 16
  // = 54 + 12 = 66; T_mem = 6 (2 + 2) + 3 x 2 = 30; mesh: 500.
  c.op = ReduceOp::kMax;
  CollectiveCost d = collective_cost(a, c, 256, 256, Options{});
  EXPECT_EQ(d.network, 66);
  EXPECT_EQ(d.memory, 30);
  // Endpoint energy: 4 participants x 6 steps x 128 B read and written.
  const MemoryType& gb = a.memory_of(c.level);
  EXPECT_NEAR(d.read_energy, 4 * 6 * 128 * gb.child_read_energy / gb.width, 1e-9);
  EXPECT_NEAR(d.write_energy, 4 * 6 * 128 * gb.child_write_energy / gb.width, 1e-9);
}

TEST(CometRing, AllGatherAndMeshOnlyTypes) {
  ArchSpec a = load_arch(kDir / "arch.yaml");
  CollectiveInfo c = ring_on_gb(a, CollectiveType::kAllGather, ReduceOp::kNone);
  // S = 256 elements = 512 B per GB, 3 steps of the whole tile:
  // T_net = 3 (5 + 256 x 16 / 512 x 2) = 63; T_mem = 3 (512/64 + 512/64) = 48.
  CollectiveCost g = collective_cost(a, c, 256, 1024, Options{});
  EXPECT_EQ(g.network, 63);
  EXPECT_EQ(g.memory, 48);
  // A broadcast has no ring form here: `algorithm: ring` leaves it on the mesh.
  c.type = CollectiveType::kBroadcast;
  CollectiveInfo mesh = c;
  mesh.algorithm = CollectiveAlgorithm::kMesh;
  EXPECT_EQ(collective_cost(a, c, 256, 256, Options{}).total(),
            collective_cost(a, mesh, 256, 256, Options{}).total());
}

TEST(CometRing, WorkedExampleWithRingAllReduces) {
  ArchSpec arch = load_arch(kDir / "arch.yaml");
  Constants k = load_constants(kDir / "constants_worked_example.yaml");
  ProblemSpec problem = load_problem(kDir / "problem.yaml", k);
  Mapping m = load_mapping(kDir / "mapping_ring.yaml", arch, problem, k);
  EXPECT_EQ(m.nodes[12].collective.algorithm, CollectiveAlgorithm::kRing);
  EXPECT_EQ(m.nodes[21].collective.algorithm, CollectiveAlgorithm::kRing);
  // 51482 - 500 - 30740 + 96 + 4254 (corrected); 50974 - 500 - 30740 + 96 + 4254 (reference
  // mode, whose other rows are unchanged).
  EXPECT_EQ(evaluate(arch, problem, m, Options{}).latency, 24592);
  EXPECT_EQ(evaluate(arch, problem, m, Options::reference()).latency, 24084);
}

}  // namespace
}  // namespace yirage::costmodel::comet
