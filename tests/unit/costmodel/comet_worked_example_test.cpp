// The worked example of comet-model.md §7 (edge arch, GEMM-Softmax, M=256 N=256 K=128): the
// reference implementation's run, reproduced to the cycle in reference mode, and what the
// corrected model changes.
#include "costmodel/comet/model.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

#include <map>

namespace yirage::costmodel::comet {
namespace {

Report run(const Options& opt) {
  const auto dir = devices::data_dir() / "comet";
  ArchSpec arch = load_arch(dir / "arch.yaml");
  Constants c = load_constants(dir / "constants_worked_example.yaml");
  ProblemSpec problem = load_problem(dir / "problem.yaml", c);
  Mapping mapping = load_mapping(dir / "mapping.yaml", arch, problem, c);
  return evaluate(arch, problem, mapping, opt);
}

std::map<std::string, BreakdownRow> rows(const Report& r) {
  std::map<std::string, BreakdownRow> out;
  for (const BreakdownRow& b : r.rows)
    out[b.key] = b;
  return out;
}

TEST(CometWorkedExample, ReproducesTheReferenceBreakdown) {
  Report r = run(Options::reference());
  EXPECT_EQ(r.latency, 50974);
  EXPECT_EQ(r.breakdown_total, 50974);
  auto b = rows(r);
  ASSERT_EQ(b.size(), 12u);
  // Memory groups: CS / OS.
  EXPECT_EQ(b["DRAM-"].cs, 8858);  // RU 3369 + 1833, RD 3656
  EXPECT_EQ(b["DRAM-"].os, 0);
  EXPECT_EQ(b["GB-"].cs, 6608);
  EXPECT_EQ(b["GB-"].os, 0);
  EXPECT_EQ(b["OB-IB-WB-"].cs, 576);
  EXPECT_EQ(b["OB-IB-WB-"].os, 0);
  EXPECT_EQ(b["OB-"].cs, 12);
  EXPECT_EQ(b["OB-"].os, 2);
  // Collectives: all OS.
  EXPECT_EQ(b["ALLREDUCE-12"].os, 500);
  EXPECT_EQ(b["ALLREDUCE-21"].os, 30740);
  // Operations: TMW.
  EXPECT_EQ(b["GEMM"].tmw, 350);
  EXPECT_EQ(b["ROWMAX"].tmw, 1024);
  EXPECT_EQ(b["SUB"].tmw, 256);
  EXPECT_EQ(b["EXP1"].tmw, 768);
  EXPECT_EQ(b["ROWSUM"].tmw, 1024);
  EXPECT_EQ(b["DIV"].tmw, 256);
}

TEST(CometWorkedExample, ReproducesTheReferenceEnergy) {
  Report r = run(Options::reference());
  std::map<std::string, double> e;
  for (const EnergyRow& row : r.energy)
    e[row.key] = row.pj;
  const std::map<std::string, double> want = {
      {"DRAM", 13107200},     {"GEMMEngine-GEMM", 1926024.38},
      {"GB", 448134},         {"SE-EXP1", 63242.24},
      {"SE-DIV", 52428.8},    {"GB<->GB-ALLREDUCE", 42066.80},
      {"OB", 23161.5},        {"IB<->IB", 11532.08},
      {"OB<->OB", 10912.37},  {"IB", 7936},
      {"SE-ROWSUM", 7208.96}, {"SE-SUB", 1802.24},
      {"WB<->WB", 805.68},    {"WB", 856},
      {"SE-ROWMAX", 163.84}};
  EXPECT_EQ(e.size(), want.size());
  for (const auto& [key, pj] : want)
    EXPECT_NEAR(e[key], pj, 0.05) << key;
  EXPECT_NEAR(r.energy_total, 1.570347e7, 5);
}

TEST(CometWorkedExample, CorrectedModelChargesSharedPortsAndEveryInstance) {
  Report ref = run(Options::reference());
  Report fixed = run(Options{});
  // SUB and DIV read two tensors per 1-cycle window through one OB port: 255 stalls each
  // instead of the 1 left after the reference overwrites the read port's stalls.
  EXPECT_EQ(fixed.latency, ref.latency + 2 * 254);
  EXPECT_EQ(rows(fixed)["OB-"].os, 510);
  std::map<std::string, double> e;
  for (const EnergyRow& row : fixed.energy)
    e[row.key] = row.pj;
  // EXP1 runs on all 16 SIMD units, not 4: 256 x 256 elements x 3.86 pJ.
  EXPECT_NEAR(e["SE-EXP1"], 65536 * 3.86, 1);
  EXPECT_NEAR(e["SE-DIV"], 65536 * 0.8, 1);
}

TEST(CometWorkedExample, SecondsAtTheGivenClock) {
  Options o = Options::reference();
  o.freq_ghz = 2.0;
  Report r = run(o);
  EXPECT_DOUBLE_EQ(r.seconds(), 50974 / 2e9);
}

}  // namespace
}  // namespace yirage::costmodel::comet
