// GEMMs between memory-bound kernels at set duties (bench/duty.py): a GPU at its power limit
// gives its GEMMs more clock the less of its busy time they take. The fit is the GEMM time
// over the time back to back, max(floor, 1 - slope x (1 - duty)), on half of the rows with
// memory-bound fillers; idle gaps are not fitted.
#include "costmodel/duty_fit.h"

#include "tests/unit/test_data.h"

#include "costmodel/calibration.h"
#include "costmodel/gpu_kernel.h"

#include <gtest/gtest.h>

#include <fstream>

namespace yirage::costmodel {
namespace {

std::filesystem::path temp_csv(const char* name, const std::string& body) {
  std::filesystem::path p = std::filesystem::temp_directory_path() / name;
  std::ofstream f(p);
  f << "# provenance\n"
       "device,gemm,filler,target_duty,fillers,gap_s,duty,gemm_burst_s,gemm_s,filler_burst_s,"
       "filler_s,sm_mhz,power_w,temperature_c,throttle_reasons\n"
    << body;
  return p;
}

std::string row(const char* gemm, const char* filler, double duty, double gemm_s) {
  return std::string("NVIDIA H200,") + gemm + "," + filler + ",0.5,1,0," + std::to_string(duty) +
         ",1e-3," + std::to_string(gemm_s) + ",1e-4,1e-4,1500,690,55,0x4\n";
}

// Rows made from a known curve (slope 0.25, floor 0.85) give it back, and the held-out rows
// fit far better than the time back to back.
TEST(DutyFit, RecoversTheCurveItWasMadeFrom) {
  std::string body = row("4096x4096x4096", "copy", 1.0, 1e-3);
  for (const char* filler : {"copy", "rmsnorm", "idle"}) {
    for (double d : {0.9, 0.7, 0.5, 0.3, 0.15}) {
      double r = std::max(0.85, 1 - 0.25 * (1 - d));
      body += row("4096x4096x4096", filler, d, std::string(filler) == "idle" ? 0.95e-3 : r * 1e-3);
    }
  }
  std::filesystem::path p = temp_csv("yirage_duty_fit_test.csv", body);
  ASSERT_TRUE(is_duty_file(p));
  auto fits = fit_duty({p}, testing::bundled_registry());
  std::filesystem::remove(p);
  ASSERT_EQ(fits.count("H200"), 1u);
  const DutyFit& f = fits.at("H200");
  EXPECT_NEAR(f.value, 0.25, 0.002);
  EXPECT_NEAR(f.floor, 0.85, 0.002);
  EXPECT_EQ(f.fit_rows + f.held_out_rows, 10u);  // idle rows and the reference left out
  EXPECT_LT(f.held_out_mape, 0.1);
  EXPECT_GT(f.unfitted_mape, 5);
}

// The H200's rows give the shipped calibration's curve; fused attention's rows are not fitted.
TEST(DutyFit, TheShippedH200FitComesFromItsRowsAndBeatsTheRateBackToBack) {
  std::filesystem::path dir = devices::data_dir() / "benchmarks" / "H200";
  auto fits = fit_duty({dir / "duty.csv", dir / "duty_shapes.csv"}, testing::bundled_registry());
  ASSERT_EQ(fits.count("H200"), 1u);
  const DutyFit& f = fits.at("H200");
  EXPECT_EQ(f.fit_rows + f.held_out_rows, 48u);  // 6 GEMMs x 2 fillers x 4 duties
  EXPECT_LT(f.held_out_mape, 3);
  EXPECT_GT(f.unfitted_mape, 8);
  CalibrationSet shipped = CalibrationSet::load_dir(devices::data_dir() / "calibration");
  EXPECT_NEAR(shipped.find_gpu("H200")->duty_slope, f.value, 1e-3);
  EXPECT_NEAR(shipped.find_gpu("H200")->duty_floor, f.floor, 1e-3);
}

TEST(DutyFit, ABadCellIsPinnedToLineAndColumn) {
  std::filesystem::path p =
      temp_csv("yirage_duty_bad_test.csv",
               "NVIDIA H200,4096x4096x4096,copy,1.00,0,0,1.0,1e-3,zero,0,0,1490,690,57,0x4\n");
  try {
    load_duty(p);
    FAIL() << "expected an input error";
  } catch (const devices::InputError& e) {
    EXPECT_EQ(e.items().at(0).loc, (devices::SourceLoc{p.string(), 3, 51}));
    EXPECT_EQ(e.items().at(0).message, "'gemm_s' must be a positive number, got 'zero'");
  }
  std::filesystem::remove(p);
}

TEST(DutyFactor, FallsWithTheDutyDownToTheFloorAndLeavesAttentionAlone) {
  GpuEfficiency e;
  e.matrix = 0.8;
  e.attention = 0.6;
  EXPECT_EQ(duty_factor(e, 0.2), 1);  // no fit: the rate back to back
  e.duty_slope = 0.25;
  e.duty_floor = 0.85;
  EXPECT_DOUBLE_EQ(duty_factor(e, 1), 1);
  EXPECT_DOUBLE_EQ(duty_factor(e, 0.8), 0.95);
  EXPECT_DOUBLE_EQ(duty_factor(e, 0.1), 0.85);
  EXPECT_DOUBLE_EQ(duty_factor(e, -3), 0.85);  // clamped, never below the floor
  EXPECT_DOUBLE_EQ(duty_factor(e, 7), 1);
  GpuEfficiency hot = at_duty(e, 0.8);
  EXPECT_DOUBLE_EQ(hot.matrix, 0.8 / 0.95);
  EXPECT_DOUBLE_EQ(hot.attention, 0.6);
}

}  // namespace
}  // namespace yirage::costmodel
