#include "costmodel/calibration.h"

#include "costmodel/collective.h"
#include "costmodel/validation.h"

#include <gtest/gtest.h>

#include <sstream>

namespace yirage::costmodel {
namespace {

const devices::DeviceRegistry& registry() {
  static const devices::DeviceRegistry r = devices::DeviceRegistry::load_bundled();
  return r;
}

// Measurements made by the model itself with a known bandwidth scale and extra latency: the
// fit must find them again.
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
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_NEAR(fits[0].calibration.bandwidth_scale, 0.7, 0.002);
  EXPECT_NEAR(fits[0].calibration.extra_latency.value, 20e-6, 0.5e-6);
  EXPECT_LT(fits[0].held_out_mape, 0.5);
  EXPECT_GT(fits[0].uncalibrated_held_out_mape, 5);
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
}

}  // namespace
}  // namespace yirage::costmodel
