// Calibration of the collective model for one device type and fabric, per launch style and
// number of ranks in a node: a bandwidth scale (the achievable fraction of the fabric that
// the measurements show, relative to NCCL's constants) and an extra fixed latency per call
// (launch and synchronisation that NCCL's model leaves out). Fitted from measured rows by
// `yirage-plan calibrate`, stored in data/calibration/<device>.yaml, applied by every estimate.
#pragma once

#include "costmodel/collective.h"
#include "costmodel/gpu_calibration.h"
#include "costmodel/gpu_kernel.h"
#include "costmodel/measured.h"
#include "devices/registry.h"
#include "devices/support/units.h"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace yirage::costmodel {

struct CollectiveCalibration {
  std::string device;
  std::string fabric;
  Launch launch = Launch::kGraph;  // the launch style of the rows it was fitted on
  std::int64_t ranks = 0;          // the ranks (all in one node) it was fitted on; 0: any
  double bandwidth_scale = 1;
  devices::Seconds extra_latency;

  // Collectives fitted on their own rows, by name; the others use the shared pair above.
  struct PerCollective {
    double bandwidth_scale = 1;
    devices::Seconds extra_latency;
    // Pipeline fill: the first `fill_bytes` of a message move `fill_ratio` times slower
    // again than the rest (chunks grow with the message up to NCCL's buffer, so mid-size
    // messages run below the asymptotic bandwidth).
    double fill_ratio = 0;
    double fill_bytes = 0;
    // NCCL's Simple protocol's fixed cost beyond the extra latency (what its larger chunks
    // and the flag waits between them add at every size; 0: none), where NCCL picks it.
    devices::Seconds simple_latency;
    // Eager launches: the host's interval between back-to-back calls, the least a call
    // takes (0: none).
    devices::Seconds issue;
    // How the fill fades past `fill_bytes`: the bandwidth term grows by
    // fill_ratio x (min(bytes, fill_bytes) / bytes)^fill_power. 1: a fixed cost once the
    // message passes fill_bytes; below 1, a bandwidth that keeps rising with the size (NCCL's
    // all-to-all: 317 GB/s a rank at 16 MiB, 662 at 1 GiB, 675 at 4 GiB on two H200s).
    double fill_power = 1;
  };

  std::map<std::string, PerCollective> per_collective;
  std::string fitted_on;  // provenance: files, rows, date
  devices::SourceLoc loc;
};

/// The calibrations known to a run, keyed by (device, fabric), each with its entries per
/// (launch style, ranks).
class CalibrationSet {
 public:
  /// Loads every `*.yaml` of `dir` (a missing directory is an empty set). Throws
  /// devices::InputError on malformed files.
  static CalibrationSet load_dir(const std::filesystem::path& dir);
  /// Adds `c`, replacing an entry of the same device, fabric, launch style and ranks.
  void add(CollectiveCalibration c);
  /// Whether any collective calibration exists for the device and fabric.
  bool has_collectives(const std::string& device, const std::string& fabric) const;
  /// The entry for collectives over `ranks` ranks of a node launched as `launch`: the launch
  /// style itself, else the CUDA-graph fit; among those, the fit on exactly `ranks` ranks,
  /// else the largest count below it, else the smallest above, else one fitted on any count.
  /// nullptr when the device and fabric have none.
  const CollectiveCalibration* find(const std::string& device,
                                    const std::string& fabric,
                                    std::int64_t ranks,
                                    Launch launch) const;
  void add_gpu(const std::string& device, GpuEfficiency e);
  /// Gives `device` (derived from `base` with a few fields changed) `base`'s fits, the
  /// operations' and the collectives', where it has none of its own.
  void inherit(const std::string& device, const std::string& base);
  /// inherit() for every device of `types` derived from another (DeviceSpec::base).
  void inherit_derived(const std::vector<devices::DeviceSpec>& types);
  /// The fitted efficiencies of a device's operations, or nullptr (then: peak rates).
  const GpuEfficiency* find_gpu(const std::string& device) const;

  bool empty() const { return entries_.empty() && gpu_.empty(); }

 private:
  std::map<std::pair<std::string, std::string>, std::vector<CollectiveCalibration>> entries_;
  std::map<std::string, GpuEfficiency> gpu_;
};

/// A data file's path as shown to users and written into calibration files: relative to the
/// data directory's parent ("data/calibration/H100-SXM.yaml"), so output does not depend on
/// where yirage lives.
std::string display_path(const std::string& path);

/// The result of fitting one (device, fabric) on a calibration split.
struct CalibrationFit {
  CollectiveCalibration calibration;
  std::size_t fit_rows = 0;
  std::size_t held_out_rows = 0;
  double fit_mape = 0;              // percent, on the rows used for the fit
  double held_out_mape = 0;         // percent, on the others, with the per-collective fits
  double shared_held_out_mape = 0;  // the same with the shared pair alone
  double uncalibrated_held_out_mape = 0;
  std::map<std::string, double> per_collective_held_out_mape;
};

/// Fits every (device, fabric, launch style, ranks) of the collective rows of at least
/// `min_bytes` (in-place rows beside the others; eager and synced rows measured in the same
/// files as graph rows take the graph fit with the host's cost on top) on the fit
/// split of measured.h's `fit_split`, the others held out. The bandwidth scale is
/// searched over [0.2, 2] in steps of 0.001; for each, the extra latency that minimises the
/// squared relative error has a closed form (weighted least squares), clamped at zero.
std::vector<CalibrationFit> fit_collectives(const std::vector<MeasuredFile>& files,
                                            const devices::DeviceRegistry& registry,
                                            double min_bytes);

/// The YAML text of a calibration file for one device: its collective fits (one per
/// fabric) and its operation fit.
std::string calibration_yaml(const std::vector<CalibrationFit>& fits,
                             const std::vector<GpuCalibrationFit>& gpu_fits,
                             const std::string& device,
                             const std::string& date);

}  // namespace yirage::costmodel
