// `--emit-kernels DIR` on the main form: the kernels of the best plan's fused compound
// operations for each device type of the cluster (codegen/emit/compound_kernel.h), one folder
// per device type, with a manifest (DIR/manifest.json): operation, shapes, device, backend,
// the model's expected latency, and why a kernel is missing where one is.
#pragma once

#include "cli/context.h"
#include "costmodel/calibration.h"
#include "devices/cluster_spec.h"
#include "planner/plan.h"

#include <string>
#include <vector>

namespace yirage::cli {

/// One node group's device type and the fuse-or-not decisions of its part of the plan.
struct KernelSite {
  std::string group;
  std::string device;
  std::vector<planner::CompoundChoice> compounds;
};

/// Writes the kernels of `sites` under `dir` (nothing when `dir` is empty) and says what it
/// wrote. Exit code kExitOk, or kExitBadInput when `dir` cannot be written.
int emit_plan_kernels(Context& cx,
                      const std::string& dir,
                      const std::string& plan,
                      const devices::ClusterSpec& cluster,
                      const costmodel::CalibrationSet& calibrations,
                      const std::vector<KernelSite>& sites);

}  // namespace yirage::cli
