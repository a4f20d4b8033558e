// Loading the COMET reference formats: architecture, problem, constants and mapping, and the
// file:line:col diagnostics of malformed input.
#include "costmodel/comet/mapping.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

namespace yirage::costmodel::comet {
namespace {

const std::filesystem::path kDir = devices::data_dir() / "comet";

// The first diagnostic of a load that must fail.
template <class F>
devices::Diagnostic first_error(F load) {
  try {
    load();
  } catch (const devices::InputError& e) {
    return e.items().front();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

TEST(CometArch, ReadsTheEdgeHierarchy) {
  ArchSpec a = load_arch(kDir / "arch.yaml");
  ASSERT_GE(a.find_level("GB"), 0);
  EXPECT_EQ(a.levels[a.find_level("GB")].instances, 4);
  // Parse order: connects, drains, fills (the report's group order): OB before IB and WB.
  EXPECT_LT(a.find_level("OB"), a.find_level("IB"));
  EXPECT_LT(a.find_level("IB"), a.find_level("WB"));
  int gemm = a.find_level("GEMMEngine");
  EXPECT_EQ(a.levels[gemm].parents.size(), 3u);  // one compute level under OB, IB and WB
  EXPECT_EQ(a.total_instances(gemm), 16);
  EXPECT_EQ(a.network(a.find_level("WB"), gemm)->port_bw, 512);
  EXPECT_EQ(a.network(a.find_level("IB"), gemm)->port_bw, 64);
  const MemoryType& dram = a.memory_of(a.find_level("DRAM"));
  EXPECT_EQ(dram.child_read_bw, 25);  // generic `bw`
  EXPECT_TRUE(a.levels[a.find_level("GB")].link_network.has_value());
  EXPECT_FALSE(a.levels[a.find_level("IB")].link_network.has_value());
}

TEST(CometProblem, SubstitutesConstants) {
  Constants c = load_constants(kDir / "constants_worked_example.yaml");
  ProblemSpec p = load_problem(kDir / "problem.yaml", c);
  EXPECT_EQ(p.sizes.at("M"), 256);
  EXPECT_EQ(p.sizes.at("K"), 128);
  ASSERT_EQ(p.ops.size(), 6u);
  EXPECT_TRUE(p.op("GEMM")->tensor("C")->read_write);  // written `True`
  EXPECT_TRUE(p.intermediate("F"));
  EXPECT_FALSE(p.intermediate("H"));
}

TEST(CometMapping, ReadsTheFusedTree) {
  ArchSpec a = load_arch(kDir / "arch.yaml");
  Constants c = load_constants(kDir / "constants_worked_example.yaml");
  ProblemSpec p = load_problem(kDir / "problem.yaml", c);
  Mapping m = load_mapping(kDir / "mapping.yaml", a, p, c);
  ASSERT_EQ(m.nodes.size(), 28u);  // numbered as in the reference's report
  EXPECT_EQ(m.nodes[12].kind, NodeKind::kCollective);
  EXPECT_EQ(m.nodes[21].collective.in_tensor, "F");
  EXPECT_EQ(m.nodes[1].loop, LoopType::kSpatial);
  EXPECT_EQ(m.nodes[1].entries[0].factor("N"), 4);  // 2 x 2
  EXPECT_TRUE(m.leaf(5));
  EXPECT_EQ(m.nodes[6].op.primitive.at("N"), 16);
  EXPECT_EQ(m.nodes[6].op.reduction_dims, std::vector<std::string>{"M"});
  EXPECT_EQ(m.nodes[10].op.reduction_dims, std::vector<std::string>{"K"});
}

TEST(CometArch, UnknownKeyIsDiagnosedWithItsPosition) {
  devices::Diagnostic d = first_error([] {
    parse_arch("a.yaml",
               "ComputeTiles: []\n"
               "MemoryTypes:\n"
               "  - name: DRAM\n"
               "    class: DRAM\n"
               "    attributes: {bw: 25, widht: 8}\n"
               "Hierarchy:\n"
               "  - name: DRAM\n"
               "    type: DRAM\n");
  });
  EXPECT_EQ(d.loc.file, "a.yaml");
  EXPECT_EQ(d.loc.line, 5);
  EXPECT_NE(d.message.find("did you mean 'width'"), std::string::npos) << d.message;
}

TEST(CometMapping, BadFactorIsDiagnosed) {
  ArchSpec a = load_arch(kDir / "arch.yaml");
  Constants c = load_constants(kDir / "constants_worked_example.yaml");
  ProblemSpec p = load_problem(kDir / "problem.yaml", c);
  devices::Diagnostic d = first_error([&] {
    parse_mapping("m.yaml",
                  "mapping:\n"
                  "  node_type: DataMovement_Tile\n"
                  "  target: [DRAM]\n"
                  "  type: temporal\n"
                  "  tensors: [A]\n"
                  "  precision: [8]\n"
                  "  tag: [GEMM]\n"
                  "  child: [GB]\n"
                  "  factors:\n"
                  "    - M=[no_such_constant] N=[1] K=[1]\n"
                  "  permutation: KNM\n"
                  "  subtree:\n"
                  "    - node_type: Operation\n"
                  "      type: GEMM\n"
                  "      name: GEMM\n"
                  "      TilePrimitive: M=256 N=16 K=128\n",
                  a, p, c);
  });
  EXPECT_EQ(d.loc.line, 10);
  EXPECT_EQ(d.loc.col, 7);
  EXPECT_NE(d.message.find("no_such_constant"), std::string::npos) << d.message;
}

TEST(CometMapping, UnknownLevelIsDiagnosed) {
  ArchSpec a = load_arch(kDir / "arch.yaml");
  Constants c;
  ProblemSpec p =
      load_problem(kDir / "problem.yaml", load_constants(kDir / "constants_worked_example.yaml"));
  devices::Diagnostic d = first_error([&] {
    parse_mapping("m.yaml",
                  "mapping:\n"
                  "  node_type: CollectiveOperation\n"
                  "  type: allreduce\n"
                  "  target: XB\n"
                  "  in_tensor: D\n",
                  a, p, c);
  });
  EXPECT_EQ(d.loc.line, 4);
  EXPECT_NE(d.message.find("unknown architecture level 'XB'"), std::string::npos) << d.message;
}

}  // namespace
}  // namespace yirage::costmodel::comet
