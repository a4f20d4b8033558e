// Inputs the fuzz targets (tests/fuzz/) found, kept under tests/fuzz/regressions/<target>/:
// each now loads, or is refused with a diagnostic, without undefined behaviour (which the
// sanitizer build, scripts/sanitize.sh, would stop on).
#include "costmodel/measured.h"
#include "devices/support/diagnostics.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace yirage::costmodel {
namespace {

namespace fs = std::filesystem;

const fs::path kRegressions = fs::path(YIRAGE_TEST_DATA_DIR) / ".." / "fuzz" / "regressions";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A shape with a 22-digit dimension overflowed int64 while the calibration split ordered
// the rows by size (measured.cpp, reversed_dims).
TEST(FuzzRegression, MeasuredShapeWithTooManyDigitsIsOrderedWithoutOverflow) {
  MeasuredFile f = parse_measured("m.csv",
                                  "# synthetic\n"
                                  "kind,op,device,shape,dtype,time_s,stat\n"
                                  "op,gemm,H200,2222222222222222222222x4096x4096,bf16,1e-5,median\n"
                                  "op,gemm,H200,1x4096x4096,bf16,1e-5,median\n");
  std::vector<bool> fit = fit_split(f, 0);
  ASSERT_EQ(fit.size(), 2u);
  EXPECT_NE(fit[0], fit[1]);  // one size class each way
}

// A rank count of 2.2e124 was cast to int64 (undefined); counts are now whole numbers up to
// 2^31 - 1, refused at their cell otherwise.
TEST(FuzzRegression, MeasuredRanksOutOfRangeAreRefused) {
  try {
    parse_measured("m.csv",
                   "# synthetic\n"
                   "kind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,time_s,stat\n"
                   "collective,all_reduce,H200,nvswitch,2.2e124,2,4096,bf16,1e-05,median\n"
                   "collective,all_reduce,H200,nvswitch,2,2.5,4096,bf16,1e-05,median\n");
    FAIL() << "loaded";
  } catch (const devices::InputError& e) {
    ASSERT_EQ(e.items().size(), 2u);
    EXPECT_EQ(e.items()[0].loc.str(), "m.csv:3:37");
    EXPECT_EQ(e.items()[0].message,
              "'ranks' must be a whole number from 1 to 2147483647, got 2.2e124");
    EXPECT_EQ(e.items()[1].message,
              "'ranks_per_node' must be a whole number from 1 to 2147483647, got 2.5");
  }
}

TEST(FuzzRegression, EveryMeasuredFindingLoadsOrIsRefused) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(kRegressions / "measured")) {
    SCOPED_TRACE(e.path().string());
    ++files;
    try {
      MeasuredFile f = parse_measured(e.path().string(), read(e.path()));
      (void)fit_split(f, 1 << 20);
    } catch (const devices::InputError& err) {
      EXPECT_FALSE(err.items().empty());
    }
  }
  EXPECT_GE(files, 1);
}

}  // namespace
}  // namespace yirage::costmodel
