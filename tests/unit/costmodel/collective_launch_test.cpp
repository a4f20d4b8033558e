// Collectives by launch style: the measured rows' launch columns, calibrations fitted and
// looked up per (launch style, ranks), and nccl-tests' own output read as measured rows.
#include "tests/unit/test_data.h"

#include "costmodel/calibration.h"
#include "costmodel/collective.h"
#include "costmodel/measured.h"
#include "costmodel/nccl_tests.h"
#include "costmodel/validation.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace yirage::costmodel {
namespace {

using testing::bundled_registry;

TEST(CollectiveLaunch, NamesRoundTrip) {
  for (Launch l : {Launch::kGraph, Launch::kQueued, Launch::kEager, Launch::kSynced})
    EXPECT_EQ(parse_launch(launch_name(l)), l);
  EXPECT_FALSE(parse_launch("lazy").has_value());
}

TEST(CollectiveLaunch, RowsWithoutTheColumnAreGraphReplays) {
  MeasuredFile f =
      parse_measured("m.csv",
                     "# p\nkind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,time_s,stat\n"
                     "collective,all_reduce,H200,nvswitch,2,2,1048576,bf16,1e-5,median\n");
  EXPECT_EQ(f.rows.at(0).launch, "graph");
  EXPECT_FALSE(f.rows.at(0).in_place);
}

TEST(CollectiveLaunch, AnUnknownLaunchIsPinnedToItsColumn) {
  try {
    parse_measured("m.csv",
                   "# p\nkind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,launch,in_place,"
                   "time_s,stat\ncollective,all_reduce,H200,nvswitch,2,2,1024,bf16,eagre,0,1e-5,"
                   "median\n");
    FAIL() << "expected an input error";
  } catch (const devices::InputError& e) {
    EXPECT_EQ(e.items().at(0).loc, (devices::SourceLoc{"m.csv", 3, 51}));
    EXPECT_EQ(e.items().at(0).message,
              "unknown launch 'eagre'; expected graph, queued, eager or synced; did you mean "
              "'eager'?");
  }
}

// Rows made by the model: a graph replay with 4 us a rank of extra latency; eager launches
// taking at least 30 us a rank (the host's issue interval); synchronised calls 30 us more
// than a replay. The fit keeps each (launch, ranks) apart, finds the eager and synced host
// costs on top of the graph fit, and the lookup returns each its own.
TEST(CollectiveLaunch, FitsAndFindsOneEntryPerLaunchAndRanks) {
  std::ostringstream csv;
  csv << "# synthetic\nkind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,launch,time_s,stat\n";
  for (int ranks : {2, 4}) {
    for (std::string launch : {"graph", "eager", "synced"}) {
      for (double bytes = 1024; bytes <= 512.0 * 1024 * 1024; bytes *= 2) {
        MeasuredRow row;
        row.device = "H200";
        row.fabric = "nvswitch";
        row.ranks = row.ranks_per_node = ranks;
        row.loc = {"synthetic", 1, 1};
        CommGroup g = *row_group(row, bundled_registry()).group;
        double t =
            estimate_collective(g, Collective::kAllReduce, bytes).latency().value + 4e-6 * ranks;
        if (launch == "eager")
          t = std::max(t, 30e-6 * ranks);
        if (launch == "synced")
          t += 30e-6;
        csv << "collective,all_reduce,H200,nvswitch," << ranks << "," << ranks << ","
            << static_cast<long long>(bytes) << ",bf16," << launch << "," << t << ",median\n";
      }
    }
  }
  std::vector<CalibrationFit> fits =
      fit_collectives({parse_measured("s.csv", csv.str())}, bundled_registry(), 0);
  ASSERT_EQ(fits.size(), 6u);
  CalibrationSet set;
  for (const CalibrationFit& f : fits) {
    const CollectiveCalibration& c = f.calibration;
    double ranks = static_cast<double>(c.ranks);
    if (c.launch == Launch::kGraph) {
      EXPECT_NEAR(c.extra_latency.value, 4e-6 * ranks, 0.3e-6) << c.ranks;
    } else if (c.launch == Launch::kEager) {
      EXPECT_NEAR(c.per_collective.at("all_reduce").issue.value, 30e-6 * ranks, 0.2e-6);
    } else {
      EXPECT_NEAR(c.per_collective.at("all_reduce").extra_latency.value, 4e-6 * ranks + 30e-6,
                  0.3e-6);
    }
    EXPECT_LT(f.held_out_mape, 0.5) << launch_name(c.launch) << " " << c.ranks;
    set.add(c);
  }
  auto found = [&](std::int64_t ranks, Launch l) {
    const CollectiveCalibration* c = set.find("H200", "nvswitch", ranks, l);
    return c == nullptr ? std::string("none")
                        : launch_name(c->launch) + "/" + std::to_string(c->ranks);
  };
  EXPECT_EQ(found(2, Launch::kEager), "eager/2");
  EXPECT_EQ(found(4, Launch::kGraph), "graph/4");
  EXPECT_EQ(found(8, Launch::kEager), "eager/4");  // the largest count below
  EXPECT_EQ(found(3, Launch::kSynced), "synced/2");
  EXPECT_EQ(found(1, Launch::kGraph), "graph/2");  // the smallest above
  EXPECT_EQ(set.find("H100-SXM", "nvswitch", 4, Launch::kEager), nullptr);
  CalibrationSet graph_only;
  graph_only.add(fits.front().calibration);
  EXPECT_EQ(graph_only.find("H200", "nvswitch", 2, Launch::kEager)->launch, Launch::kGraph);
}

// The group of two H200s of one host, as a measured row names it.
CommGroup two_h200() {
  MeasuredRow row;
  row.device = "H200";
  row.fabric = "nvswitch";
  row.ranks = row.ranks_per_node = 2;
  row.loc = {"synthetic", 1, 1};
  return *row_group(row, bundled_registry()).group;
}

// Calls queued on a stream run faster than NCCL's constants say (they include a kernel launch
// the queued call does not wait for): the queued fit takes a negative extra latency, and
// eager calls, measured in the same file, are priced as the queued kernels with the host's
// issue interval on top, not as the graph replays.
TEST(CollectiveLaunch, EagerCallsBuildOnTheQueuedFit) {
  std::ostringstream csv;
  csv << "# synthetic\nkind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,launch,time_s,stat\n";
  CommGroup g = two_h200();
  for (double bytes = 1024; bytes <= 512.0 * 1024 * 1024; bytes *= 2) {
    double t = estimate_collective(g, Collective::kAllReduce, bytes).latency().value;
    double queued = t - 2e-6;
    for (auto [launch, time] : {std::pair{"graph", t + 4e-6}, std::pair{"queued", queued},
                                std::pair{"eager", std::max(queued, 40e-6)}}) {
      csv << "collective,all_reduce,H200,nvswitch,2,2," << static_cast<long long>(bytes) << ",bf16,"
          << launch << "," << time << ",median\n";
    }
  }
  std::vector<CalibrationFit> fits =
      fit_collectives({parse_measured("s.csv", csv.str())}, bundled_registry(), 0);
  ASSERT_EQ(fits.size(), 3u);
  EXPECT_EQ(fits[1].calibration.launch, Launch::kQueued);
  EXPECT_NEAR(fits[0].calibration.extra_latency.value, 4e-6, 0.3e-6);
  EXPECT_NEAR(fits[1].calibration.extra_latency.value, -2e-6, 0.3e-6);
  ASSERT_EQ(fits[2].calibration.launch, Launch::kEager);
  EXPECT_NEAR(fits[2].calibration.extra_latency.value, -2e-6, 0.3e-6);
  EXPECT_NEAR(fits[2].calibration.per_collective.at("all_reduce").issue.value, 40e-6, 0.2e-6);
  for (const CalibrationFit& f : fits)
    EXPECT_LT(f.held_out_mape, 0.5) << launch_name(f.calibration.launch);
}

// A bandwidth that keeps rising with the size (NCCL's all-to-all): rows made with a fill
// fading as the square root of its share past 1 MiB are fitted with that power, and the
// held-out rows come within 1%; a fill that ends at one size could not follow them.
TEST(CollectiveLaunch, AFillThatFadesSlowlyIsFittedWithItsPower) {
  std::ostringstream csv;
  csv << "# synthetic\nkind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,time_s,stat\n";
  CommGroup g = two_h200();
  for (Collective op : {Collective::kAllToAll, Collective::kSendRecv}) {
    for (double bytes = 1024; bytes <= 4.0 * 1024 * 1024 * 1024; bytes *= 2) {
      CollectiveEstimate e = estimate_collective(g, op, bytes);
      double fill = 2 * std::sqrt(std::min(bytes, 1024.0 * 1024) / bytes);
      double t = e.best.latency_term.value + e.best.bandwidth_term.value * (1 + fill);
      csv << "collective," << collective_name(op) << ",H200,nvswitch,2,2,"
          << static_cast<long long>(bytes) << ",bf16," << t << ",median\n";
    }
  }
  std::vector<CalibrationFit> fits =
      fit_collectives({parse_measured("s.csv", csv.str())}, bundled_registry(), 0);
  ASSERT_EQ(fits.size(), 1u);
  for (const auto& [name, p] : fits[0].calibration.per_collective) {
    EXPECT_EQ(p.fill_power, 0.5) << name;
    EXPECT_NEAR(p.fill_ratio, 2, 0.05) << name;
    EXPECT_LT(fits[0].per_collective_held_out_mape.at(name), 1) << name;
  }
}

// Output in the format of nccl-tests 2.19 (src/util.cu), four GPUs of one host.
const char* kAllGather =
    "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n"
    "# Collective test starting: all_gather_perf\n"
    "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 "
    "iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid   1234 on       host device  0 [0000:18:00] NVIDIA H200\n"
    "#  Rank  1 Group  0 Pid   1234 on       host device  1 [0000:2a:00] NVIDIA H200\n"
    "#  Rank  2 Group  0 Pid   1234 on       host device  2 [0000:3a:00] NVIDIA H200\n"
    "#  Rank  3 Group  0 Pid   1234 on       host device  3 [0000:5d:00] NVIDIA H200\n"
    "#\n"
    "#                                                              out-of-place                "
    "       in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong \n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)        \n"
    "     1048576        131072  bfloat16    none      -1    25.10   41.78   31.33      0    "
    "24.90   42.11   31.58      0\n"
    "     2097152        262144  bfloat16    none      -1    36.40   57.61   43.21      0    "
    "36.00   58.25   43.69      0\n"
    "     4194304        524288  bfloat16    none      -1    52.00   80.66   60.49      0    "
    "51.50   81.44   61.08      0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 45.23 \n"
    "#\n"
    "# Collective test concluded: all_gather_perf\n";

TEST(NcclTests, ReadsBothPlacementsOfEverySize) {
  std::string text = kAllGather;
  ASSERT_TRUE(is_nccl_tests_output(text));
  MeasuredFile f = parse_nccl_tests("ag.txt", text);
  ASSERT_EQ(f.rows.size(), 6u);
  const MeasuredRow& r = f.rows[1];
  EXPECT_EQ(r.op, "all_gather");
  EXPECT_EQ(r.device, "NVIDIA H200");
  EXPECT_EQ(r.ranks, 4);
  EXPECT_EQ(r.ranks_per_node, 4);
  EXPECT_EQ(r.launch, "eager");
  EXPECT_TRUE(r.in_place);
  EXPECT_EQ(r.dtype, "bf16");
  EXPECT_DOUBLE_EQ(r.bytes, 1048576);
  EXPECT_NEAR(r.time_s, 24.90e-6, 1e-12);
  EXPECT_FALSE(f.provenance.empty());
  // the rows price like any other: one node of four H200s
  Validation v = validate_collectives(f, bundled_registry());
  EXPECT_EQ(v.points.size(), 6u);
  EXPECT_TRUE(v.skipped.empty());
}

TEST(NcclTests, GraphRunsAndOldVersionsNamedByTheirFile) {
  std::string text = kAllGather;
  text.replace(text.find("graph: 0"), 8, "graph: 1");
  text.erase(text.find("# Collective test starting"),
             std::string("# Collective test starting: all_gather_perf\n").size());
  MeasuredFile f = parse_nccl_tests("runs/reduce_scatter_perf.out", text);
  EXPECT_EQ(f.rows.at(0).launch, "graph");
  EXPECT_EQ(f.rows.at(0).op, "reduce_scatter");
}

TEST(NcclTests, WrongElementsAreNotAMeasurement) {
  std::string text = kAllGather;
  std::size_t row = text.find("     2097152");
  std::size_t wrong = text.find("43.21      0", row) + 11;
  text[wrong] = '7';
  try {
    parse_nccl_tests("ag.txt", text);
    FAIL() << "expected an input error";
  } catch (const devices::InputError& e) {
    EXPECT_EQ(e.items().at(0).loc.line, 15);
    EXPECT_EQ(e.items().at(0).message,
              "nccl-tests reported 7 wrong elements: the run is not a valid measurement");
  }
}

TEST(NcclTests, WithoutACollectiveItSaysHowToNameTheFile) {
  std::string text = kAllGather;
  text.erase(text.find("# Collective test starting"),
             std::string("# Collective test starting: all_gather_perf\n").size());
  try {
    parse_nccl_tests("run.txt", text);
    FAIL() << "expected an input error";
  } catch (const devices::InputError& e) {
    EXPECT_EQ(e.items().at(0).loc, (devices::SourceLoc{"run.txt", 1, 1}));
    EXPECT_NE(e.items().at(0).message.find("all_reduce_perf.txt"), std::string::npos);
  }
}

}  // namespace
}  // namespace yirage::costmodel
