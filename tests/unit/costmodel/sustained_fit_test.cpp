// GEMMs timed back to back (bench/sustained.py): at its power limit a GPU holds a lower clock
// than in the bursts the op rows are timed in. The factor is fitted on half of each device's
// rows against the op model's time (the shipped op-level efficiencies) and checked on the rest.
#include "costmodel/sustained_fit.h"

#include "tests/unit/test_data.h"

#include "costmodel/calibration.h"

#include <gtest/gtest.h>

#include <fstream>

namespace yirage::costmodel {
namespace {

std::filesystem::path bench(const char* rel) {
  return devices::data_dir() / "benchmarks" / rel;
}

std::map<std::string, GpuEfficiency> shipped(const std::string& device) {
  CalibrationSet cal = CalibrationSet::load_dir(devices::data_dir() / "calibration");
  return {{device, *cal.find_gpu(device)}};
}

// Back to back, at the power cap, the H200's GEMMs run a little below the op model's rate
// (which comes from bursts); the fit brings the held-out rows closer than the op model.
TEST(SustainedFit, H200sGemmsRunNoFasterBackToBackThanTheOpModelSays) {
  std::vector<std::filesystem::path> files = {bench("H200/sustained.csv")};
  ASSERT_TRUE(is_sustained_file(files[0]));
  EXPECT_FALSE(is_sustained_file(bench("H200x2/overlap.csv")));
  auto fits = fit_sustained(files, testing::bundled_registry(), shipped("H200"));
  ASSERT_EQ(fits.count("H200"), 1u);
  const SustainedFit& f = fits.at("H200");
  EXPECT_GT(f.value, 0.85);
  EXPECT_LT(f.value, 1.0);
  EXPECT_EQ(f.fit_rows + f.held_out_rows, 15u);
  EXPECT_LT(f.held_out_mape, f.unfitted_mape);
  // A device without op-level efficiencies here is not fitted.
  EXPECT_TRUE(fit_sustained(files, testing::bundled_registry(), shipped("H100-SXM")).empty());
}

TEST(SustainedFit, ABadCellIsPinnedToLineAndColumn) {
  std::filesystem::path p = std::filesystem::temp_directory_path() / "yirage_sustained_test.csv";
  {
    std::ofstream f(p);
    f << "# provenance\n"
         "device,m,n,k,layout,burst_s,sustained_first_s,sustained_s,burst_tflops\n"
         "NVIDIA H200,4096,4096,4096,nn,1e-4,1e-4,-2,700\n";
  }
  try {
    load_sustained(p);
    FAIL() << "expected an input error";
  } catch (const devices::InputError& e) {
    EXPECT_EQ(e.items().at(0).loc, (devices::SourceLoc{p.string(), 3, 41}));
    EXPECT_EQ(e.items().at(0).message, "'sustained_s' must be a positive number, got '-2'");
  }
  std::filesystem::remove(p);
}

}  // namespace
}  // namespace yirage::costmodel
