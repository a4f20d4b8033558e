#include "codegen/verify/verifier.h"

#include "codegen/ir/ugraph_json.h"
#include "codegen/program/program_loader.h"
#include "codegen/search/superoptimizer.h"
#include "devices/support/diagnostics.h"

#include <gtest/gtest.h>

namespace yirage::codegen {
namespace {

const char* kRmsLinear = R"(name: rms
inputs:
  - {name: X, shape: [4, 64]}
  - {name: W, shape: [64, 32]}
ops:
  - {name: R, op: rms, in: [X]}
  - {name: N, op: div, in: [X, R]}
  - {name: Y, op: matmul, in: [N, W]}
outputs: [Y]
)";

// The fused µGraph of mugraph.md §1.3: RMS and matmul accumulated in one loop, divided after.
KernelGraph fused(const KernelGraph& ref, Accum rms_accum) {
  KernelGraph g = ref;
  g.ops = {{OpKind::kCustom, {0, 1}, -1, 0}};
  BlockGraph b;
  b.grid = {4, 1, 1};
  b.forloop = 4;
  b.inputs = {{0, {kReplicated, kReplicated, kReplicated}, 1},
              {1, {1, kReplicated, kReplicated}, 0}};
  b.ops = {{OpKind::kAccum, {0}, -1, rms_accum},
           {OpKind::kMatmul, {0, 1}, -1, Accum::kSum},
           {OpKind::kAccum, {3}, -1, Accum::kSum},
           {OpKind::kDiv, {4, 2}, -1, Accum::kSum}};
  b.outputs = {{5, {1, kReplicated, kReplicated}}};
  g.blocks = {b};
  g.outputs = {2};
  return g;
}

TEST(Verifier, AcceptsACorrectRewriteAndRejectsAWrongOne) {
  KernelGraph ref = parse_program(kRmsLinear, "rms.yaml").graph;
  KernelGraph good = fused(ref, Accum::kRmsLast);
  ASSERT_EQ(check_graph(good, nullptr), "");
  FieldTest test(ref, 42);
  EXPECT_TRUE(test.check_full(good));
  EXPECT_TRUE(test.check_sampled(good, 7, 2));
  EXPECT_EQ(verify_full(ref, good, 3, 3, 1e-4, nullptr), "");
  // Wrong: the sum of the last dim instead of its RMS (same shapes, different function).
  KernelGraph bad = fused(ref, Accum::kSumLast);
  ASSERT_EQ(check_graph(bad, nullptr), "");
  EXPECT_FALSE(test.check_full(bad));
  EXPECT_FALSE(test.check_sampled(bad, 7, 2));
}

TEST(Ugraph, JsonRoundTripAndVersionTag) {
  KernelGraph ref = parse_program(kRmsLinear, "rms.yaml").graph;
  KernelGraph g = fused(ref, Accum::kRmsLast);
  std::string json = ugraph_to_json(g);
  EXPECT_EQ(ugraph_from_json(json, "g.json"), g);
  std::string old = json;
  old.replace(old.find("\"version\": 1"), 12, "\"version\": 0");
  EXPECT_THROW(ugraph_from_json(old, "g.json"), devices::InputError);
  EXPECT_NE(ugraph_to_dot(g).find("digraph"), std::string::npos);
}

TEST(Ugraph, ValidityRules) {
  KernelGraph ref = parse_program(kRmsLinear, "rms.yaml").graph;
  KernelGraph g = fused(ref, Accum::kRmsLast);
  g.blocks[0].ops[3].in = {3, 2};  // divides a tensor inside the loop by an accumulated one
  EXPECT_NE(check_graph(g, nullptr), "");
  g = fused(ref, Accum::kRmsLast);
  g.blocks[0].grid[0] = 3;  // 32 columns do not split into 3
  EXPECT_NE(check_graph(g, nullptr), "");
}

TEST(Program, BadFileNamesLineAndColumn) {
  try {
    parse_program(
        "name: p\ninputs:\n  - {name: X, shape: [4, 8]}\nops:\n  - {name: Y, op: matmull, in: [X, "
        "X]}\noutputs: [Y]\n",
        "p.yaml");
    FAIL() << "no error";
  } catch (const devices::InputError& e) {
    EXPECT_EQ(e.items().at(0).loc.str(), "p.yaml:5:19");
  }
}

}  // namespace
}  // namespace yirage::codegen
