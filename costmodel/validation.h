// Estimates next to measurements: every measured collective row priced by the model on the
// topology the row describes, and the errors summarised per size band.
#pragma once

#include "costmodel/calibration.h"
#include "costmodel/comm_group.h"
#include "costmodel/measured.h"
#include "devices/registry.h"

#include <string>
#include <vector>

namespace yirage::costmodel {

struct ValidationPoint {
  MeasuredRow row;
  double estimate_s = 0;
  double error = 0;    // (estimate - measured) / measured
  std::string choice;  // the algorithm and protocol the model chose
  std::string group;   // the category its statistics go to (empty: the op's name)
};

struct Validation {
  std::vector<ValidationPoint> points;
  std::vector<std::string> skipped;  // "file:line: reason"
};

/// Prices every collective row of `file` on one node of `ranks_per_node` devices of the
/// row's type and fabric (multi-node rows are skipped: their network is not in the file),
/// calibrated by `calibrations` where they have an entry for the row's device and fabric
/// (the entry for the row's ranks and launch style).
Validation validate_collectives(const MeasuredFile& file,
                                const devices::DeviceRegistry& registry,
                                const CalibrationSet* calibrations = nullptr);

/// The one-node group a measured collective row describes, uncalibrated.
CommGroupResult row_group(const MeasuredRow& row, const devices::DeviceRegistry& registry);

/// Applies the calibration of the group's device and fabric for its ranks per node and the
/// launch style of its calls (CalibrationSet::find), if `set` has one.
void apply_calibration(CommGroup& group, const CalibrationSet& set, Launch launch);

struct BandStats {
  std::string band;  // "1 MiB - 8 MiB"
  double low = 0;    // bytes, inclusive
  double high = 0;   // bytes, exclusive
  std::size_t rows = 0;
  double mape = 0;     // mean absolute percentage error, in percent
  double bias = 0;     // mean signed error, in percent
  double max_abs = 0;  // largest absolute error, in percent
};

/// The size bands: below 1 MiB, 1-8 MiB, 8-64 MiB, 64-512 MiB, 512 MiB and more.
std::vector<BandStats> band_stats(const std::vector<ValidationPoint>& points);

/// Statistics over the points of at least `min_bytes`.
BandStats overall(const std::vector<ValidationPoint>& points, double min_bytes);
/// Statistics over the points below `min_bytes`.
BandStats overall_below(const std::vector<ValidationPoint>& points, double min_bytes);

/// Prices every op row of `file` on its device, with the device's calibration from
/// `calibrations` when it has one (else at peak rates).
Validation validate_ops(const MeasuredFile& file,
                        const devices::DeviceRegistry& registry,
                        const CalibrationSet* calibrations = nullptr);

/// Statistics per category (the point's group, else its op name; all sizes), in order of
/// first appearance.
std::vector<BandStats> op_stats(const std::vector<ValidationPoint>& points);

}  // namespace yirage::costmodel
