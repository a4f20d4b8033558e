// GEMMs between memory-bound kernels at set duties (bench/duty.py): a GPU at its power limit
// gives its GEMMs more clock the less of its busy time they take. The fit is the GEMM time
// over the time back to back, max(floor, 1 - slope x (1 - duty)), on half of the rows with
// memory-bound fillers; idle gaps are not fitted.
#include "costmodel/duty_fit.h"

#include "tests/unit/test_data.h"

#include "costmodel/calibration.h"
#include "costmodel/gpu_calibration.h"
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

// bench/ops.py times each GEMM after do_bench zeroes 256 MiB: a short GEMM holds a smaller
// share of that pair than a long one, so its row is priced at a lower duty, a higher clock.
TEST(OpRowDuty, AGemmRowIsPricedAtTheDutyTheFlushLeftIt) {
  GpuEfficiency e;
  e.matrix = 0.7;
  MeasuredRow row;
  row.kind = "op";
  row.device = "H200";
  row.dtype = "bf16";
  std::string why;
  auto time = [&](const GpuEfficiency& eff, const char* shape) {
    row.op = "gemm";
    row.shape = shape;
    auto est = estimate_op_row(row, testing::bundled_registry(), eff, &why);
    EXPECT_TRUE(est) << why;
    return est ? est->time.value : 0;
  };
  GpuEfficiency hot = e;
  hot.duty_slope = 0.2;
  hot.duty_floor = 0.85;
  double short_ratio = time(hot, "2048x4096x4096") / time(e, "2048x4096x4096");
  double long_ratio = time(hot, "16384x16384x16384") / time(e, "16384x16384x16384");
  EXPECT_LT(short_ratio, 0.95);
  EXPECT_GT(long_ratio, 0.99);
  EXPECT_LT(long_ratio, 1);
  EXPECT_GE(short_ratio, 0.85);  // never past the floor
  // A longer flush leaves the GEMM a lower duty; none, the rate back to back.
  row.flush_bytes = 4.0 * (1 << 30);
  EXPECT_LT(time(hot, "4096x4096x4096"), 0.97 * time(e, "4096x4096x4096"));
  row.flush_bytes = 0;
  EXPECT_DOUBLE_EQ(time(hot, "4096x4096x4096"), time(e, "4096x4096x4096"));
  row.flush_bytes.reset();
  // Memory-bound rows keep their time: the curve moves the matrix rate only.
  row.op = "rmsnorm";
  row.shape = "16384x4096";
  auto plain = estimate_op_row(row, testing::bundled_registry(), e, &why);
  auto at_duty = estimate_op_row(row, testing::bundled_registry(), hot, &why);
  ASSERT_TRUE(plain && at_duty);
  EXPECT_DOUBLE_EQ(plain->time.value, at_duty->time.value);
}

}  // namespace
}  // namespace yirage::costmodel
