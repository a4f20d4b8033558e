#include "report/csv.h"

#include <gtest/gtest.h>

#include <sstream>

namespace yirage::report {
namespace {

TEST(Csv, QuotesWhatNeedsItAndLeavesAbsentValuesEmpty) {
  std::ostringstream out;
  write_csv_line(out, {std::string("tp=8,pp=1"), std::string("say \"hi\""), 0.1, std::int64_t{32},
                       csv_optional(std::nullopt), std::string("plain")});
  EXPECT_EQ(out.str(), "\"tp=8,pp=1\",\"say \"\"hi\"\"\",0.1,32,,plain\n");
}

TEST(Csv, NumbersInTheirShortestExactForm) {
  std::ostringstream out;
  write_csv_line(out, {1.0 / 3, 1e-9, 2.5e12});
  EXPECT_EQ(out.str(), "0.3333333333333333,1e-09,2.5e+12\n");
}

TEST(Csv, ATableOfObjectsHasAColumnPerLeafPath) {
  auto rows = nlohmann::ordered_json::parse(R"([
    {"layout": {"text": "tp=2", "tp": 2}, "step_s": 1.5, "fusions": ["a", "b"], "run": null,
     "groups": [{"x": 1}]},
    {"layout": {"text": "tp=1,vpp=2", "tp": 1, "vpp": 2}, "step_s": 2, "ok": true}
  ])");
  std::ostringstream out;
  write_csv_table(out, rows);
  EXPECT_EQ(out.str(),
            "layout.text,layout.tp,step_s,fusions,run,layout.vpp,ok\n"
            "tp=2,2,1.5,a;b,,,\n"
            "\"tp=1,vpp=2\",1,2,,,2,true\n");
}

}  // namespace
}  // namespace yirage::report
