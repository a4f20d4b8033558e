// Conflict stalls between pipelined siblings (comet-model.md §2.5, E6): the closed form on hand
// numbers, and SUB and DIV pipelined under one spatial node on the edge architecture, where
// together they read the OB longer than the pipeline leaves time for.
#include "costmodel/comet/binding.h"
#include "costmodel/comet/model.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

#include <map>

namespace yirage::costmodel::comet {
namespace {

const std::filesystem::path kDir = devices::data_dir() / "comet";

TEST(CometConflict, TwoSiblingsOnOnePort) {
  // Two siblings of L_c = 130 cycles (RU 2, RD 1) pipelined over I = 4 iterations (E5): the
  // first spans slots 0-3, the second adds slot 4, its last: 130 / 4 + RD 1 = 33, so
  // L_wo = 130 + 33 = 163.
  const std::vector<StageCost> siblings = {{130, 2, 1}, {130, 2, 1}};
  const std::int64_t l_wo = pipeline_cost(siblings, 4);
  ASSERT_EQ(l_wo, 163);
  // Each keeps the read port of memory 2 (depth 2) busy 128 cycles and its write port 64:
  // read demand 128 + 128 = 256 > 163, write 64 + 64 = 128 < 163, so M_2 = 256 and
  // CF = 256 - 163 = 93 cycles on the read port.
  const std::vector<PortDemand> demands = {
      {0, 2, 2, 0, 128}, {0, 2, 2, 1, 64}, {1, 2, 2, 0, 128}, {1, 2, 2, 1, 64}};
  const std::vector<ConflictStall> cf = conflict_stalls(demands, l_wo);
  ASSERT_EQ(cf.size(), 1u);
  EXPECT_EQ(cf[0], (ConflictStall{2, 0, 93}));
  EXPECT_EQ(total_conflict(cf), 93);
}

TEST(CometConflict, OnlySharedPortsOverTheWindowCount) {
  // One sibling alone on a port never conflicts, however busy (its own E3/E4 staging covers
  // it); two under L_wo do not either.
  EXPECT_TRUE(conflict_stalls({{0, 1, 1, 0, 900}, {1, 2, 2, 0, 900}}, 100).empty());
  EXPECT_TRUE(conflict_stalls({{0, 1, 1, 0, 50}, {1, 1, 1, 0, 50}}, 100).empty());
  // Depth 1: the GB read port (60 + 70 = 130) and write port (80 + 90 = 170): M_1 = 170.
  // Depth 2: the IB (memory 3) read port 40 + 150 = 190 and the OB (memory 4) read port
  // 120 + 30 = 150: M_2 = 190. CF = (170 - 100) + (190 - 100) = 160.
  const std::vector<ConflictStall> cf = conflict_stalls({{0, 1, 1, 0, 60},
                                                         {1, 1, 1, 0, 70},
                                                         {0, 1, 1, 1, 80},
                                                         {1, 1, 1, 1, 90},
                                                         {0, 3, 2, 0, 40},
                                                         {1, 3, 2, 0, 150},
                                                         {0, 4, 2, 0, 120},
                                                         {1, 4, 2, 0, 30}},
                                                        100);
  ASSERT_EQ(cf.size(), 2u);
  EXPECT_EQ(cf[0], (ConflictStall{1, 1, 70}));
  EXPECT_EQ(cf[1], (ConflictStall{3, 0, 90}));
  EXPECT_EQ(total_conflict(cf), 160);
}

Report run_pipelined(const Options& opt) {
  ArchSpec arch = load_arch(kDir / "arch.yaml");
  Constants c = load_constants(kDir / "constants_worked_example.yaml");
  ProblemSpec problem = load_problem(kDir / "problem.yaml", c);
  Mapping m = load_mapping(kDir / "mapping_pipelined_sub_div.yaml", arch, problem, c);
  return evaluate(arch, problem, m, opt);
}

std::map<std::string, BreakdownRow> rows(const Report& r) {
  std::map<std::string, BreakdownRow> out;
  for (const BreakdownRow& b : r.rows)
    out[b.key] = b;
  return out;
}

TEST(CometConflict, PipelinedSubAndDivContendForTheObReadPort) {
  // A GB temporal loop of 4 over a GB spatial node whose children, SUB (C, D -> E) and DIV
  // (F, G -> H), each 64 iterations of a 1-cycle SIMD op on the OB, are pipelined. Per
  // iteration a child reads two 32-byte and 2-byte tiles (1 cycle each at the 64 B/cycle
  // OB-SE port) and writes one (1 cycle): L_c = 64 compute + RU 2 + RD 1 + 63 x (2 - 1) stall
  // = 130; read-port demand 2 x 63 + RU 2 = 128, write-port 63 + RD 1 = 64. L_wo = 163 (as
  // above), OB read port 128 + 128 = 256: CF = 93 per iteration of the spatial node, 372 in
  // all; the spatial node's window grows from 163 to 256 cycles per iteration.
  Report with = run_pipelined(Options{});
  Options off;
  off.conflict_stalls = false;
  Report without = run_pipelined(off);
  auto b = rows(with);
  ASSERT_EQ(b.count("CONFLICT-OB"), 1u);
  EXPECT_EQ(b["CONFLICT-OB"].kind, BreakdownRow::Kind::kConflict);
  EXPECT_EQ(b["CONFLICT-OB"].os, 4 * 93);
  EXPECT_EQ(b["CONFLICT-OB"].cs, 0);
  EXPECT_EQ(with.latency, without.latency + 4 * 93);
  EXPECT_EQ(with.nodes[1].cf, 4 * 93);  // the spatial node, once per root execution
  EXPECT_EQ(rows(without).count("CONFLICT-OB"), 0u);
  // Reference mode leaves E6 out.
  EXPECT_EQ(rows(run_pipelined(Options::reference())).count("CONFLICT-OB"), 0u);
}

TEST(CometConflict, SequentialWorkedExampleHasNoConflict) {
  // Every binding of the worked example is sequential: E6 adds nothing (51,482 corrected).
  ArchSpec arch = load_arch(kDir / "arch.yaml");
  Constants c = load_constants(kDir / "constants_worked_example.yaml");
  ProblemSpec problem = load_problem(kDir / "problem.yaml", c);
  Mapping m = load_mapping(kDir / "mapping.yaml", arch, problem, c);
  Report r = evaluate(arch, problem, m, Options{});
  EXPECT_EQ(r.latency, 51482);
  for (const BreakdownRow& row : r.rows)
    EXPECT_NE(row.kind, BreakdownRow::Kind::kConflict) << row.key;
}

}  // namespace
}  // namespace yirage::costmodel::comet
