// Reference mode against runs of the reference implementation (github.com/d-matrix-ai/comet at
// 917af0d, edge arch, GEMM-Softmax 256x256x128) on mappings whose DRAM, GB and core loops
// iterate: latency, rows and total energy as it printed them.
#include "costmodel/comet/model.h"
#include "costmodel/comet/space.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

#include <map>

namespace yirage::costmodel::comet {
namespace {

const std::filesystem::path kDir = devices::data_dir() / "comet";

struct ReferenceRun {
  Candidate factors;
  std::int64_t cycles;
  std::map<std::string, std::array<std::int64_t, 2>> rows;  // CS, OS
  double energy_pj;
};

Report evaluate_reference(const Candidate& c) {
  ArchSpec arch = load_arch(kDir / "arch.yaml");
  ProblemSpec problem =
      load_problem(kDir / "problem.yaml", load_constants(kDir / "constants_worked_example.yaml"));
  Mapping m = load_mapping(kDir / "mapping.yaml", arch, problem, sweep_constants(c, problem));
  return evaluate(arch, problem, m, Options::reference());
}

TEST(CometReferenceRuns, IteratingMappings) {
  const std::vector<ReferenceRun> runs = {
      {{{"M", {16, 1, 1, 1, 1, 1, 2, 8}},
        {"N", {1, 2, 2, 1, 2, 2, 16, 1}},
        {"K", {1, 1, 1, 1, 1, 1, 32, 4}}},
       1770451,
       {{"DRAM-", {2291, 0}},
        {"GB-", {11648, 0}},
        {"OB-", {192, 2}},
        {"OB-IB-WB-", {32, 0}},
        {"ALLREDUCE-12", {0, 800}},
        {"ALLREDUCE-21", {0, 31040}}},
       1.788877e7},
      {{{"M", {1, 1, 1, 4, 1, 1, 1, 64}},
        {"N", {1, 2, 2, 1, 2, 2, 2, 8}},
        {"K", {1, 1, 1, 1, 1, 1, 1, 128}}},
       52342,
       {{"DRAM-", {8858, 0}},
        {"GB-", {1830, 1774}},
        {"OB-", {48, 2}},
        {"OB-IB-WB-", {544, 0}},
        {"ALLREDUCE-12", {0, 560}},
        {"ALLREDUCE-21", {0, 30800}}},
       1.585562e7},
      {{{"M", {4, 1, 1, 64, 1, 1, 1, 1}},
        {"N", {1, 2, 2, 1, 2, 2, 8, 2}},
        {"K", {1, 1, 1, 1, 1, 1, 16, 8}}},
       3196049,
       {{"DRAM-", {3605, 0}},
        {"GB-", {1404, 1600}},
        {"OB-", {3072, 0}},
        {"OB-IB-WB-", {512, 0}},
        {"ALLREDUCE-12", {0, 5632}},
        {"ALLREDUCE-21", {0, 35840}}},
       1.900596e7},
  };
  for (const ReferenceRun& run : runs) {
    Report r = evaluate_reference(run.factors);
    SCOPED_TRACE(describe(run.factors));
    EXPECT_EQ(r.latency, run.cycles);
    for (const BreakdownRow& b : r.rows) {
      auto it = run.rows.find(b.key);
      if (it == run.rows.end())
        continue;
      EXPECT_EQ(b.cs, it->second[0]) << b.key;
      EXPECT_EQ(b.os, it->second[1]) << b.key;
    }
    EXPECT_NEAR(r.energy_total, run.energy_pj, 5.0);  // printed to 7 significant digits
  }
}

}  // namespace
}  // namespace yirage::costmodel::comet

namespace yirage::costmodel::comet {
namespace {

// data/comet/mapping_rowsum_allreduce.yaml (derived, §8 #5), as the reference prices it.
TEST(CometReferenceRuns, RowSumAllReduce) {
  ArchSpec arch = load_arch(kDir / "arch.yaml");
  Constants c = load_constants(kDir / "constants_worked_example.yaml");
  ProblemSpec problem = load_problem(kDir / "problem.yaml", c);
  Mapping m = load_mapping(kDir / "mapping_rowsum_allreduce.yaml", arch, problem, c);
  Report r = evaluate(arch, problem, m, Options::reference());
  EXPECT_EQ(r.latency, 18814);
  EXPECT_NEAR(r.energy_total, 1.533426e7, 5.0);
}

}  // namespace
}  // namespace yirage::costmodel::comet

namespace yirage::costmodel::comet {
namespace {

// data/comet/mapping_unfused.yaml (derived, §8 #19), as the reference prices it.
TEST(CometReferenceRuns, UnfusedBaseline) {
  ArchSpec arch = load_arch(kDir / "arch.yaml");
  Constants c = load_constants(kDir / "constants_worked_example.yaml");
  ProblemSpec problem = load_problem(kDir / "problem.yaml", c);
  Mapping m = load_mapping(kDir / "mapping_unfused.yaml", arch, problem, c);
  Report r = evaluate(arch, problem, m, Options::reference());
  EXPECT_EQ(r.latency, 84834);
  EXPECT_NEAR(r.energy_total, 1.211549e8, 50.0);
}

}  // namespace
}  // namespace yirage::costmodel::comet
