#include "costmodel/calibration.h"

#include "tests/unit/costmodel/held_out_error.h"

#include "costmodel/collective.h"
#include "costmodel/gpu_calibration.h"
#include "costmodel/validation.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <vector>

namespace yirage::costmodel {
namespace {

const devices::DeviceRegistry& registry() {
  static const devices::DeviceRegistry r = devices::DeviceRegistry::load_bundled();
  return r;
}

// Measurements made by the model itself with a known bandwidth scale and extra latency: the
// fit of each GPU count must find them again.
TEST(Calibration, RecoversAKnownScaleAndLatency) {
  std::ostringstream csv;
  csv << "# synthetic: the model at bandwidth x 0.7 plus 20 us\n"
      << "kind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,time_s,stat\n";
  for (int ranks : {2, 4, 8}) {
    for (double mib = 1; mib <= 512; mib *= 2) {
      MeasuredRow row;
      row.device = "A100-80GB";
      row.fabric = "nvswitch";
      row.ranks = row.ranks_per_node = ranks;
      row.loc = {"synthetic", 1, 1};
      CommGroup g = *row_group(row, registry()).group;
      g.intra_bw = g.intra_bw * 0.7;
      double bytes = mib * 1024 * 1024;
      double t = estimate_collective(g, Collective::kAllReduce, bytes).latency().value + 20e-6;
      csv << "collective,all_reduce,A100-80GB,nvswitch," << ranks << "," << ranks << ","
          << static_cast<long long>(bytes) << ",," << t << ",median\n";
    }
  }
  MeasuredFile file = parse_measured("synthetic.csv", csv.str());
  std::vector<CalibrationFit> fits = fit_collectives({file}, registry(), 1 << 20);
  ASSERT_EQ(fits.size(), 3u);  // one per GPU count
  for (const CalibrationFit& f : fits) {
    EXPECT_NEAR(f.calibration.bandwidth_scale, 0.7, 0.002) << f.calibration.ranks;
    EXPECT_NEAR(f.calibration.extra_latency.value, 20e-6, 0.5e-6) << f.calibration.ranks;
    EXPECT_LT(f.held_out_mape, 0.5);
    EXPECT_GT(f.uncalibrated_held_out_mape, 5);
  }
}

// The group of four H200s of one host, as a measured row names it.
CommGroup four_h200() {
  MeasuredRow row;
  row.device = "H200";
  row.fabric = "nvswitch";
  row.ranks = row.ranks_per_node = 4;
  row.loc = {"synthetic", 1, 1};
  return *row_group(row, registry()).group;
}

// One measured row of a collective over four H200s.
void write_row(std::ostream& csv, Collective op, double bytes, double seconds) {
  csv << "collective," << collective_name(op) << ",H200,nvswitch,4,4,"
      << static_cast<long long>(bytes) << ",," << seconds << ",median\n";
}

// Two collectives measured by the model with a pipeline fill on all-gather (its first 16 MiB
// at half speed) and a different scale: the per-collective fit finds both.
TEST(Calibration, RecoversAPipelineFillPerCollective) {
  std::ostringstream csv;
  csv << "# synthetic: all-gather with +100% on the first 16 MiB; all-reduce at 0.8\n"
      << "kind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,time_s,stat\n";
  for (Collective op : {Collective::kAllReduce, Collective::kAllGather}) {
    for (double mib = 1; mib <= 1024; mib *= 2) {
      CommGroup g = four_h200();
      double bytes = mib * 1024 * 1024;
      if (op == Collective::kAllGather) {
        g.op_fill_ratio[static_cast<std::size_t>(op)] = 1;
        g.op_fill_bytes[static_cast<std::size_t>(op)] = 16 << 20;
      } else {
        g.intra_bw = g.intra_bw * 0.8;
      }
      write_row(csv, op, bytes, estimate_collective(g, op, bytes).latency().value + 5e-6);
    }
  }
  std::vector<CalibrationFit> fits =
      fit_collectives({parse_measured("synthetic.csv", csv.str())}, registry(), 1 << 20);
  ASSERT_EQ(fits.size(), 1u);
  const auto& per = fits[0].calibration.per_collective;
  ASSERT_EQ(per.count("all_gather"), 1u);
  EXPECT_NEAR(per.at("all_gather").fill_ratio, 1, 0.05);
  EXPECT_EQ(per.at("all_gather").fill_bytes, 16 << 20);
  EXPECT_NEAR(per.at("all_reduce").bandwidth_scale, 0.8, 0.01);
  EXPECT_LT(fits[0].held_out_mape, 1);
  EXPECT_GT(fits[0].shared_held_out_mape, 3);  // one shared pair cannot follow both
}

// NCCL's Simple protocol costing more fixed time than its model says: a reduce-scatter
// measured by the model with 10 us more wherever the pick is Simple (and 3 us more for every
// protocol), from 64 KiB to 1 GiB. The per-collective fit finds both, and an estimate with the
// fit adds the Simple latency to Simple picks only.
TEST(Calibration, RecoversTheSimpleProtocolsOwnLatency) {
  std::ostringstream csv;
  csv << "# synthetic: reduce-scatter, +10 us on Simple picks; all-reduce as the model\n"
      << "kind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,time_s,stat\n";
  CommGroup probe = four_h200();
  for (Collective op : {Collective::kAllReduce, Collective::kReduceScatter}) {
    for (double kib = 64; kib <= 1024 * 1024; kib *= 2) {
      double bytes = kib * 1024;
      CollectiveEstimate e = estimate_collective(probe, op, bytes);
      bool simple = e.best.protocol == Protocol::kSimple;
      write_row(
          csv, op, bytes,
          e.latency().value + 3e-6 + (op == Collective::kReduceScatter && simple ? 10e-6 : 0));
    }
  }
  std::vector<CalibrationFit> fits =
      fit_collectives({parse_measured("synthetic.csv", csv.str())}, registry(), 1 << 20);
  ASSERT_EQ(fits.size(), 1u);
  const auto& per = fits[0].calibration.per_collective;
  ASSERT_EQ(per.count("reduce_scatter"), 1u);
  EXPECT_NEAR(per.at("reduce_scatter").simple_latency.value, 10e-6, 0.2e-6);
  EXPECT_NEAR(per.at("reduce_scatter").extra_latency.value, 3e-6, 0.2e-6);
  EXPECT_NEAR(per.at("all_reduce").simple_latency.value, 0, 0.2e-6);
  EXPECT_LT(fits[0].held_out_mape, 2);  // rows from 64 KiB: 0.2 us of 15 us is 1.3%
  // Applied to a group: Simple picks only.
  auto i = static_cast<std::size_t>(Collective::kReduceScatter);
  CommGroup with = probe;
  with.op_simple_latency_s[i] = 10e-6;
  for (double bytes : {64.0 * 1024, 1024.0 * 1024 * 1024}) {
    CollectiveEstimate a = estimate_collective(probe, Collective::kReduceScatter, bytes);
    CollectiveEstimate b = estimate_collective(with, Collective::kReduceScatter, bytes);
    double added = a.best.protocol == Protocol::kSimple ? 10e-6 : 0;
    EXPECT_NEAR(b.latency().value - a.latency().value, added, 1e-12) << bytes;
  }
}

// The calibration split alternates along sizes within each op, whatever the file's order:
// rows of two widths walked in a nested loop land in both splits.
TEST(Measured, FitSplitAlternatesAlongSizes) {
  std::ostringstream csv;
  csv << "# synthetic\nkind,op,device,shape,dtype,time_s,stat\n";
  for (int rows : {1, 16, 256, 4096})
    for (int cols : {4096, 8192})
      csv << "op,rmsnorm,H200," << rows << "x" << cols << ",bf16,1e-5,median\n";
  MeasuredFile file = parse_measured("m.csv", csv.str());
  std::vector<bool> fit = fit_split(file, 0);
  int fit_4096 = 0;
  int fit_8192 = 0;
  for (std::size_t i = 0; i < fit.size(); ++i) {
    if (fit[i])
      (file.rows[i].shape.ends_with("x4096") ? fit_4096 : fit_8192)++;
  }
  EXPECT_EQ(fit_4096, 2);
  EXPECT_EQ(fit_8192, 2);
}

// Each element type alternates on its own: a file that times every shape in bf16 and then
// in fp32 puts half of each type in each split, not every bf16 row in one and every fp32
// row in the other (equal shapes sort side by side).
TEST(Measured, FitSplitAlternatesWithinEachDtype) {
  std::ostringstream csv;
  csv << "# synthetic\nkind,op,device,shape,dtype,time_s,stat\n";
  for (const char* dtype : {"bf16", "fp32"})
    for (int rows : {1, 16, 256, 4096})
      csv << "op,rmsnorm,H200," << rows << "x4096," << dtype << ",1e-5,median\n";
  MeasuredFile file = parse_measured("m.csv", csv.str());
  std::vector<bool> fit = fit_split(file, 0);
  int fit_bf16 = 0;
  int fit_fp32 = 0;
  for (std::size_t i = 0; i < fit.size(); ++i) {
    if (fit[i])
      (file.rows[i].dtype == "bf16" ? fit_bf16 : fit_fp32)++;
  }
  EXPECT_EQ(fit_bf16, 2);
  EXPECT_EQ(fit_fp32, 2);
}

TEST(Measured, ProblemsArePinnedToLineAndColumn) {
  try {
    parse_measured("m.csv",
                   "# provenance\nkind,op,device,fabric,ranks,ranks_per_node,bytes,dtype,time_s,"
                   "stat\ncollective,all_reduce,H100,nvswitch,8,8,1024,,fast,median\n");
    FAIL() << "expected an input error";
  } catch (const devices::InputError& e) {
    EXPECT_EQ(e.items().at(0).loc, (devices::SourceLoc{"m.csv", 3, 47}));
    EXPECT_EQ(e.items().at(0).message, "'time_s' must be a number, got 'fast'");
  }
  try {
    parse_measured("f.csv",
                   "# provenance\nkind,op,device,shape,dtype,time_s,stat,flush_bytes\n"
                   "op,gemm,H200,64x64x64,bf16,1e-5,median,-8\n");
    FAIL() << "expected an input error";
  } catch (const devices::InputError& e) {
    EXPECT_EQ(e.items().at(0).loc, (devices::SourceLoc{"f.csv", 3, 40}));
    EXPECT_EQ(e.items().at(0).message, "'flush_bytes' must be 0 or more, got -8");
  }
}

// An op row says how much it flushed between calls; absent, bench/ops.py's do_bench flush.
TEST(Measured, AnOpRowMayNameItsFlush) {
  MeasuredFile f =
      parse_measured("f.csv",
                     "# provenance\nkind,op,device,shape,dtype,time_s,stat,flush_bytes\n"
                     "op,gemm,H200,64x64x64,bf16,1e-5,median,0\n"
                     "op,gemm,H200,64x64x64,bf16,1e-5,median,\n");
  ASSERT_EQ(f.rows.size(), 2u);
  EXPECT_EQ(f.rows[0].flush_bytes, 0.0);
  EXPECT_FALSE(f.rows[1].flush_bytes.has_value());
}

// The committed calibration of `device` with the text `from` replaced by `to`, loaded: the
// first problem and where it is, and the 1-based line and column where `to` starts.
struct BadCalibration {
  devices::SourceLoc loc;
  std::string message;
  devices::SourceLoc expected;
};

BadCalibration load_changed(const std::string& device,
                            const std::string& from,
                            const std::string& to) {
  std::ifstream in(devices::data_dir() / "calibration" / (device + ".yaml"));
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  std::size_t at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  yaml.replace(at, from.size(), to);
  std::size_t start = yaml.rfind('\n', at);
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("yirage_bad_calibration_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::path file = dir / (device + ".yaml");
  std::ofstream(file) << yaml;
  BadCalibration bad;
  bad.expected = {file.string(),
                  1 + static_cast<int>(std::count(yaml.begin(), yaml.begin() + at, '\n')),
                  static_cast<int>(at - (start == std::string::npos ? 0 : start + 1)) + 1};
  try {
    CalibrationSet::load_dir(dir);
    ADD_FAILURE() << "expected an input error";
  } catch (const devices::InputError& e) {
    bad.loc = e.items().at(0).loc;
    bad.message = e.items().at(0).message;
  }
  std::filesystem::remove_all(dir);
  return bad;
}

// The line of a committed calibration file that starts with `key` (a refit moves its value).
std::string committed_line(const std::string& device, const std::string& key) {
  std::ifstream in(devices::data_dir() / "calibration" / (device + ".yaml"));
  for (std::string line; std::getline(in, line);) {
    if (std::size_t at = line.find(key); at != std::string::npos)
      return line.substr(at);
  }
  ADD_FAILURE() << key << " is not in " << device << ".yaml";
  return key;
}

// A calibration file with a negative launch term (the committed H100 file, one value changed)
// is refused at that value's line and column, and nothing is loaded.
TEST(Calibration, ANegativeProgramLaunchIsPinnedToLineAndColumn) {
  BadCalibration bad = load_changed("H100-SXM", committed_line("H100-SXM", "program_launch: "),
                                    "program_launch: -1 us");
  bad.expected.col += static_cast<int>(std::string("program_launch: ").size());
  EXPECT_EQ(bad.loc, bad.expected);
  EXPECT_EQ(bad.message, "'program_launch' must be zero or more, got '-1 us'");
}

// A stream fit's arithmetic rate must be a fraction of the vector peak: a vanishing one would
// price a softmax in years.
TEST(Calibration, AVanishingVectorFractionIsPinnedToLineAndColumn) {
  BadCalibration bad = load_changed("H200", "vector: 0.0221", "vector: 1e-9");
  bad.expected.col += static_cast<int>(std::string("vector: ").size());
  EXPECT_EQ(bad.loc, bad.expected);
  EXPECT_EQ(bad.message, "'vector' must be a fraction of the vector peak, 1e-06 to 1");
}

// A stream fit under a key the model never reads (a misspelt kind, a dtype on a kind fitted
// whatever the dtype, a dtype that does not exist) is refused, not silently ignored.
TEST(Calibration, AnUnknownStreamKindIsPinnedToLineAndColumn) {
  BadCalibration bad = load_changed("H200", "rmsnorm.fp32:", "rmsnorm.fp33:");
  EXPECT_EQ(bad.loc, bad.expected);
  EXPECT_EQ(bad.message,
            "unknown stream kind 'rmsnorm.fp33' (a kernel kind that calibrate fits, or rmsnorm, "
            "layernorm or their backward followed by .<dtype>; docs/formats.md)");
  EXPECT_TRUE(is_stream_fit_key("layernorm_backward.bf16"));
  EXPECT_TRUE(is_stream_fit_key("softmax_plain"));
  EXPECT_TRUE(is_stream_fit_key("gemm"));
  EXPECT_FALSE(is_stream_fit_key("softmax_plain.fp32"));
  EXPECT_FALSE(is_stream_fit_key("rms_norm"));
}

TEST(Calibration, ADutyFloorAboveOneIsPinnedToLineAndColumn) {
  BadCalibration bad = load_changed("H200", "duty_floor: 0.854", "duty_floor: 1.5");
  bad.expected.col += static_cast<int>(std::string("duty_floor: ").size());
  EXPECT_EQ(bad.loc, bad.expected);
  EXPECT_EQ(bad.message,
            "'duty_floor' must be 0.1 to 1 (the fastest GEMM time over the sustained one)");
}

}  // namespace
}  // namespace yirage::costmodel

namespace yirage::costmodel {
namespace {

// Causal attention over a prompt gets its own fraction of peak: fitted on the causal rows of
// the fit split, it prices the held-out causal rows closer than the shared one did, and
// plain attention keeps `attention`.
TEST(Calibration, CausalAttentionHasItsOwnFraction) {
  MeasuredFile ops = load_measured(devices::data_dir() / "benchmarks" / "H200" / "ops.csv");
  std::vector<GpuCalibrationFit> fits = fit_gpu_ops({ops}, registry());
  ASSERT_EQ(fits.size(), 1u);
  const GpuEfficiency& e = fits[0].efficiency;
  ASSERT_GT(e.attention_causal, 0);
  EXPECT_LT(e.attention_causal, e.attention);
  GpuEfficiency shared = e;
  shared.attention_causal = 0;
  double own = held_out_error(ops, e, {"attention_causal"});
  double one = held_out_error(ops, shared, {"attention_causal"});
  EXPECT_GT(one, 0);
  EXPECT_LT(own, one);
}

}  // namespace
}  // namespace yirage::costmodel
