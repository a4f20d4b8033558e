// The Pareto front of cost against throughput, and its SVG.
#include "report/pareto.h"

#include "tests/unit/text_count.h"

#include <gtest/gtest.h>

#include <string>

namespace yirage::report {
namespace {

using testing::count;

TEST(ParetoFront, KeepsThePointsNothingBeatsOnBothAxes) {
  std::vector<ParetoPoint> p = {
      {2.0, 100, "a", ""},  // 0: beaten by 3 (cheaper, as fast)
      {1.0, 50, "a", ""},   // 1: cheapest: on the front
      {3.0, 300, "b", ""},  // 2: fastest: on the front
      {1.5, 100, "b", ""},  // 3: on the front
      {2.5, 90, "b", ""},   // 4: beaten by 3
      {1.5, 100, "c", ""},  // 5: equal to 3: on the front too
  };
  EXPECT_EQ(pareto_front(p), (std::vector<std::size_t>{1, 3, 5, 2}));
}

TEST(ParetoFront, OneOrNoPoint) {
  EXPECT_TRUE(pareto_front({}).empty());
  EXPECT_EQ(pareto_front({{1, 1, "a", ""}}), (std::vector<std::size_t>{0}));
}

TEST(ParetoSvg, EveryPointTheFrontAndTheLegend) {
  std::vector<ParetoPoint> p = {{0.9, 40000, "H100-SXM", "H100 <4 nodes> & more"},
                                {0.86, 82000, "H100-SXM", "x"},
                                {1.3, 40000, "H200", "y"},
                                {1.3, 650000, "H200", "z"}};
  std::string svg = pareto_svg(p, "a \"title\"", "USD per million tokens", "tokens/s");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("</svg>\n"), std::string::npos);
  // A circle per point and two in the legend; the front's two points ringed.
  EXPECT_EQ(count(svg, "<circle"), p.size() + 2);
  EXPECT_EQ(count(svg, "stroke=\"#000\""), 2u);
  EXPECT_NE(svg.find(">H200</text>"), std::string::npos);
  // Text from the caller is escaped; throughput spans more than a decade: a log axis.
  EXPECT_NE(svg.find("H100 &lt;4 nodes&gt; &amp; more"), std::string::npos);
  EXPECT_NE(svg.find("a &quot;title&quot;"), std::string::npos);
  EXPECT_NE(svg.find("tokens/s (log scale)"), std::string::npos);
  EXPECT_EQ(svg.find("USD per million tokens (log scale)"), std::string::npos);
}

}  // namespace
}  // namespace yirage::report
