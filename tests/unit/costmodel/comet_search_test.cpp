// The mapping space of the reference sweeps: enumeration under constraints, the constants
// recipe, the fit check and the exhaustive search.
#include "costmodel/comet/search.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace yirage::costmodel::comet {
namespace {

const std::filesystem::path kDir = devices::data_dir() / "comet";

struct Fixture {
  ArchSpec arch = load_arch(kDir / "arch.yaml");
  Constants constants = load_constants(kDir / "constants_worked_example.yaml");
  ProblemSpec problem = load_problem(kDir / "problem.yaml", constants);
};

Candidate worked_example() {
  return {{"M", {1, 1, 1, 1, 1, 1, 1, 256}},
          {"N", {1, 2, 2, 1, 2, 2, 1, 16}},
          {"K", {1, 1, 1, 1, 1, 1, 1, 128}}};
}

TEST(CometSpace, EnumeratesTheEdgeSweep) {
  Fixture f;
  FactorConstraints c = load_constraints(kDir / "constraints.yaml", f.problem);
  EXPECT_EQ(c.fixed.at("N").at(1), 2);  // DRAM spatial X
  EXPECT_EQ(c.fixed.count("ND"), 0u);   // not a dimension of this problem
  std::vector<Candidate> space = enumerate_space(f.problem, c);
  // M = 2^8 over 4 free levels (165 ways), N = 16 over 2 (5), K = 2^7 over 2 (8).
  EXPECT_EQ(space.size(), 165u * 5u * 8u);
  EXPECT_NE(std::find(space.begin(), space.end(), worked_example()), space.end());
}

TEST(CometSpace, RecipeGivesTheWorkedExampleConstants) {
  Fixture f;
  Constants c = sweep_constants(worked_example(), f.problem);
  for (const auto& [key, value] : f.constants.values)
    EXPECT_EQ(c.values[key], value) << key;
}

TEST(CometSearch, RejectsTilesThatDoNotFit) {
  Fixture f;
  Mapping m = load_mapping(kDir / "mapping.yaml", f.arch, f.problem, f.constants);
  EXPECT_FALSE(check_fit(f.arch, f.problem, m).has_value());
  f.arch.memories[f.arch.levels[f.arch.find_level("IB")].memory].depth = 4;  // 16 KiB
  std::optional<Rejected> r = check_fit(f.arch, f.problem, m);
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->reason.find("32768 B of tiles in IB (16384 B)"), std::string::npos) << r->reason;
}

TEST(CometSearch, FindsTheBestOfASmallSpace) {
  Fixture f;
  std::ifstream in(kDir / "mapping.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<Candidate> space = {worked_example()};
  Candidate two = worked_example();
  two["M"] = {1, 1, 1, 1, 1, 1, 2, 128};
  space.push_back(two);
  SearchResult r =
      search_space(f.arch, f.problem, "mapping.yaml", text.str(), space, Options::reference());
  ASSERT_TRUE(r.best_latency.has_value());
  EXPECT_EQ(r.candidates, 2u);
  EXPECT_EQ(r.rejected, 0u);
  EXPECT_LE(r.best_latency->latency, 50974);
}

}  // namespace
}  // namespace yirage::costmodel::comet
