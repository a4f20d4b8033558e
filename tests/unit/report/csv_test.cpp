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

}  // namespace
}  // namespace yirage::report
