#include "report/layout_json.h"

#include <gtest/gtest.h>

namespace yirage::report {
namespace {

TEST(LayoutJson, ItemsAsNumbersAndWordsBesideTheText) {
  nlohmann::ordered_json j = layout_json("tp=8,pp=4,dp=32,mb=1,recompute=full,zero=1,sp=off");
  EXPECT_EQ(j["text"], "tp=8,pp=4,dp=32,mb=1,recompute=full,zero=1,sp=off");
  EXPECT_EQ(j["tp"], 8);
  EXPECT_EQ(j["dp"], 32);
  EXPECT_EQ(j["recompute"], "full");
  EXPECT_EQ(j["sp"], "off");
  EXPECT_TRUE(j["tp"].is_number_integer());
}

TEST(LayoutJson, AMixedPipelineGivesItsSharedItems) {
  nlohmann::ordered_json j =
      layout_json("dp=8,mb=1,recompute=none,zero=3 | ascend: tp=2,pp=1,layers=9 | h100: tp=2");
  EXPECT_EQ(j["dp"], 8);
  EXPECT_EQ(j["zero"], 3);
  EXPECT_FALSE(j.contains("layers"));
  EXPECT_EQ(j["text"], "dp=8,mb=1,recompute=none,zero=3 | ascend: tp=2,pp=1,layers=9 | h100: tp=2");
}

}  // namespace
}  // namespace yirage::report
