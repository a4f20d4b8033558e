#include "devices/support/yaml_reader.h"

#include "devices/support/text.h"

#include <gtest/gtest.h>

namespace yirage::devices {
namespace {

TEST(Diagnostics, RenderShowsLineAndCaret) {
  Diagnostics diag;
  diag.error(SourceLoc{"c.yaml", 3, 16}, "bad 'bandwidth'", "    bandwidth: 900 GBs");
  EXPECT_EQ(diag.render(),
            "c.yaml:3:16: error: bad 'bandwidth'\n"
            "      bandwidth: 900 GBs\n"
            "                 ^\n");
}

TEST(MapReader, ReportsUnknownMissingAndDuplicateKeysTogether) {
  Diagnostics diag;
  YamlDoc doc("t.yaml", "nodes: 2\nbandwith: 1 GB/s\nnodes: 3\n", diag);
  MapReader m(doc, doc.root(), "network");
  EXPECT_EQ(m.integer("nodes"), 2);
  m.quantity<Dim::kBytesPerSec>("bandwidth", true);
  m.finish();
  ASSERT_EQ(diag.items().size(), 3u);
  EXPECT_EQ(diag.render(),
            "t.yaml:1:1: error: missing key 'bandwidth' in network\n"
            "  nodes: 2\n"
            "  ^\n"
            "t.yaml:2:1: error: unknown key 'bandwith' in network; did you mean 'bandwidth'?\n"
            "  bandwith: 1 GB/s\n"
            "  ^\n"
            "t.yaml:3:1: error: duplicate key 'nodes' (first given at line 1)\n"
            "  nodes: 3\n"
            "  ^\n"
            "3 errors\n");
}

TEST(MapReader, SyntaxErrorsHavePositions) {
  Diagnostics diag;
  YamlDoc doc("s.yaml", "a: [1, 2\nb: 3\n", diag);
  EXPECT_FALSE(doc.root());
  ASSERT_EQ(diag.items().size(), 1u);
  EXPECT_EQ(diag.items()[0].loc.file, "s.yaml");
  EXPECT_GT(diag.items()[0].loc.line, 0);
}

TEST(MapReader, NumbersAndQuantitiesMustBePositive) {
  Diagnostics diag;
  YamlDoc doc("n.yaml", "a: -1\nb: 0 GB/s\nc: eight\n", diag);
  MapReader m(doc, doc.root(), "x");
  EXPECT_FALSE(m.integer("a"));
  EXPECT_FALSE(m.quantity<Dim::kBytesPerSec>("b"));
  EXPECT_FALSE(m.integer("c"));
  ASSERT_EQ(diag.items().size(), 3u);
  EXPECT_EQ(diag.items()[0].message, "'a' must be at least 1, got -1");
  EXPECT_EQ(diag.items()[1].message, "'b' must be positive, got '0 GB/s'");
  EXPECT_EQ(diag.items()[2].message, "'c' must be a whole number, got 'eight'");
}

TEST(Text, DidYouMean) {
  EXPECT_EQ(closest("bandwith", {"latency", "bandwidth"}), "bandwidth");
  EXPECT_EQ(closest("zzz", {"latency", "bandwidth"}), "");
  EXPECT_EQ(closest("h100", {"H100-SXM", "H100"}), "H100");
  EXPECT_EQ(join_choices({"a", "b", "c"}), "a, b or c");
}

}  // namespace
}  // namespace yirage::devices
