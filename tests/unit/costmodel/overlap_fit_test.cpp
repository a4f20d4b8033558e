// Collectives measured beside GEMMs (bench/overlap.py): the delay until the running GEMM
// ends on every rank, fitted on half of the shipped H200 rows and checked on the others.
#include "costmodel/overlap_fit.h"

#include "tests/unit/test_data.h"

#include <gtest/gtest.h>

#include <fstream>

namespace yirage::costmodel {
namespace {

std::filesystem::path bench(const char* rel) {
  return devices::data_dir() / "benchmarks" / rel;
}

TEST(OverlapFit, TheMechanismAccountsForTheDelayOfHeldOutCollectives) {
  std::vector<std::filesystem::path> files = {
      bench("H200x2/overlap.csv"), bench("H200x2/overlap_host2.csv"), bench("H200x4/overlap.csv")};
  ASSERT_TRUE(is_overlap_file(files[0]));
  EXPECT_FALSE(is_overlap_file(bench("H200x2/collectives.csv")));
  std::map<std::string, OverlapFit> fits = fit_overlap(files, testing::bundled_registry());
  ASSERT_EQ(fits.count("H200"), 1u);
  const OverlapFit& f = fits.at("H200");
  EXPECT_GT(f.wait, 0.6);
  EXPECT_LT(f.wait, 1.2);
  EXPECT_EQ(f.fit_rows + f.held_out_rows, 24u);
  EXPECT_LT(f.held_out_mape, f.unpriced_mape / 3);
}

TEST(OverlapFit, DelayIsTheLastOfTheRanksRemainingTimes) {
  // Uniform remaining times on r ranks: the largest is r / (r + 1) of the kernel on average.
  EXPECT_DOUBLE_EQ(overlap_delay(1, 1, 2e-3), 1e-3);
  EXPECT_DOUBLE_EQ(overlap_delay(1, 3, 2e-3), 1.5e-3);
  EXPECT_DOUBLE_EQ(overlap_delay(0, 8, 2e-3), 0);
}

TEST(OverlapFit, ABadCellIsPinnedToLineAndColumn) {
  std::filesystem::path p = std::filesystem::temp_directory_path() / "yirage_overlap_test.csv";
  {
    std::ofstream f(p);
    f << "# provenance\n"
         "device,gpus,collective,dtype,bytes,compute,compute_alone_s,compute_beside_s,"
         "compute_slowdown,collective_alone_s,collective_beside_s,collective_slowdown,reps\n"
         "NVIDIA H200,2,all_reduce,bfloat16,67108864,gemm,0.0015,0.0015,1,slow,0.001,4,7\n";
  }
  try {
    load_overlap(p);
    FAIL() << "expected an input error";
  } catch (const devices::InputError& e) {
    EXPECT_EQ(e.items().at(0).loc, (devices::SourceLoc{p.string(), 3, 65}));
    EXPECT_EQ(e.items().at(0).message,
              "'collective_alone_s' must be a positive number, got 'slow'");
  }
  std::filesystem::remove(p);
}

}  // namespace
}  // namespace yirage::costmodel
