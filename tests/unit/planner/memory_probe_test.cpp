// Memory an earlier job left allocated under a measured step (planner/step_validation.h): rows
// whose allocated peak exceeds what their layout allocates alone lose the excess from both
// peaks, except under DDP; a probe table that lacks a rank's peak says nothing of that layout.
#include "tests/unit/scratch_files.h"
#include "tests/unit/test_data.h"

#include "planner/step_validation.h"

#include <gtest/gtest.h>

namespace yirage::planner {
namespace {

MeasuredStep row(const std::string& layout, double allocated, double reserved) {
  MeasuredStep r;
  r.cluster = "h200x4";
  r.task = "l8b-L4-s4096-gb8";
  r.layout = layout;
  r.status = "ok";
  r.peak_allocated = allocated;
  r.peak_reserved = reserved;
  return r;
}

TEST(MemoryProbe, TakesWhatAnEarlierJobLeftOffBothPeaksOutsideDdp) {
  const std::string tp = "tp=4,pp=1,dp=1,mb=1,recompute=none,zero=0";
  const std::string ddp = "tp=1,pp=1,dp=4,mb=1,recompute=none,zero=0";
  const std::string fsdp = "tp=1,pp=1,dp=4,mb=1,recompute=none,zero=3";
  ProbePeaks probe{{{"h200x4", "l8b-L4-s4096-gb8", tp}, 18.55e9},
                   {{"h200x4", "l8b-L4-s4096-gb8", ddp}, 52.41e9},
                   {{"h200x4", "l8b-L4-s4096-gb8", fsdp}, 17.94e9}};
  std::vector<MeasuredStep> rows = {row(tp, 26.25e9, 28.76e9), row(tp, 18.56e9, 21.1e9),
                                    row(ddp, 67.8e9, 69.38e9), row(fsdp, 17.94e9, 29.39e9),
                                    row("tp=2,pp=2,dp=1,mb=1,recompute=none,zero=0", 40e9, 41e9)};
  EXPECT_EQ(subtract_leftover(probe, rows), 1u);
  EXPECT_NEAR(rows[0].leftover, 7.7e9, 1e6);
  EXPECT_NEAR(rows[0].peak_allocated, 18.55e9, 1e6);
  EXPECT_NEAR(rows[0].peak_reserved, 28.76e9 - 7.7e9, 1e6);
  EXPECT_EQ(rows[1].leftover, 0);             // within 2% of the probe: its own
  EXPECT_EQ(rows[2].peak_allocated, 67.8e9);  // DDP: its second buckets may be its own
  EXPECT_EQ(rows[3].leftover, 0);
  EXPECT_EQ(rows[4].peak_allocated, 40e9);        // not probed
  EXPECT_EQ(subtract_leftover(probe, rows), 0u);  // once only
}

// The live peak against the probe: each layout once, whatever the rows measured of it; layouts
// the model cannot run, the probe did not measure, or under DDP, left out.
TEST(MemoryProbe, TheLivePeakMeetsEachProbedLayoutOnce) {
  const std::string a = "tp=4,pp=1,dp=1,mb=1,recompute=none,zero=0";
  const std::string b = "tp=2,pp=1,dp=2,mb=1,recompute=none,zero=3";
  const std::string ddp = "tp=2,pp=1,dp=2,mb=1,recompute=none,zero=1";
  ProbePeaks probe{{{"h200x4", "l8b-L4-s4096-gb8", a}, 20e9},
                   {{"h200x4", "l8b-L4-s4096-gb8", b}, 30e9},
                   {{"h200x4", "l8b-L4-s4096-gb8", ddp}, 30e9}};
  auto point = [](const std::string& layout, double live, bool priced) {
    StepPoint p;
    p.row = row(layout, 0, 0);
    p.estimate_live = live;
    if (priced)
      p.estimate_s = 1.0;
    return p;
  };
  std::vector<StepPoint> points = {point(a, 18e9, true), point(a, 18e9, true),
                                   point(b, 33e9, false), point("tp=1", 5e9, true),
                                   point(ddp, 60e9, true)};
  ProbeStats s = live_against_probe(probe, points);
  EXPECT_EQ(s.layouts, 1u);
  EXPECT_NEAR(s.mape, 10, 1e-9);
  EXPECT_NEAR(s.bias, -10, 1e-9);
  EXPECT_NEAR(s.worst, -10, 1e-9);
  points.push_back(point(b, 36e9, true));
  s = live_against_probe(probe, points);
  EXPECT_EQ(s.layouts, 2u);
  EXPECT_NEAR(s.bias, 5, 1e-9);
  EXPECT_NEAR(s.worst, 20, 1e-9);
}

TEST(MemoryProbe, ALayoutWithARankWithoutItsAllocatedPeakIsLeftOut) {
  std::filesystem::path dir = testing::scratch_dir("memory_probe");
  std::ofstream(dir / "rank_peaks.csv")
      << "# probe\n"
      << "cluster,task,layout,rank,world,status,peak_allocated_bytes,peak_reserved_bytes,source\n"
      << "h200x4,t,\"tp=2,pp=2,dp=1,mb=1,recompute=none,zero=0\",0,4,ok,,30000000000,log\n"
      << "h200x4,t,\"tp=2,pp=2,dp=1,mb=1,recompute=none,zero=0\",3,4,ok,20000000000,,rows\n"
      << "h200x4,t,\"tp=4,pp=1,dp=1,mb=1,recompute=none,zero=0\",0,4,ok,18000000000,,rows\n";
  ProbePeaks p = load_probe_peaks(dir / "rank_peaks.csv");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p.begin()->second, 18e9);
  std::filesystem::remove_all(dir);
}

// The shipped probe: a layout measured as the first job of its process is reproduced to 0.1%
// (tp=4 without sequence parallelism), and the measured tp=4 row of a process that had run DDP
// jobs before loses one fp32 copy of the model's weights (7.7 GB for the 8B width, 4 layers).
TEST(MemoryProbe, TheShippedProbeReproducesACleanRowAndCorrectsALaterOne) {
  std::filesystem::path h200 = devices::data_dir() / "benchmarks" / "H200";
  ProbePeaks probe = load_probe_peaks(probe_beside(h200 / "train_steps_4gpu.csv"));
  double clean =
      probe.at({"h200x4", "l8b-L4-s4096-gb8", "tp=4,pp=1,dp=1,mb=1,recompute=none,zero=0,sp=off"});
  std::vector<MeasuredStep> rows = load_measured_steps(h200 / "train_steps_4gpu.csv");
  bool seen_clean = false;
  bool seen_corrected = false;
  for (const MeasuredStep& r : rows) {
    if (r.layout == "tp=4,pp=1,dp=1,mb=1,recompute=none,zero=0,sp=off") {
      EXPECT_NEAR(r.peak_allocated / clean, 1, 1e-3);
      EXPECT_EQ(r.leftover, 0);
      seen_clean = true;
    }
    if (r.layout == "tp=4,pp=1,dp=1,mb=1,recompute=none,zero=0") {
      EXPECT_NEAR(r.leftover, 7.7e9, 0.05e9);
      seen_corrected = true;
    }
  }
  EXPECT_TRUE(seen_clean);
  EXPECT_TRUE(seen_corrected);
}

}  // namespace
}  // namespace yirage::planner
