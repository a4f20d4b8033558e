// What `yirage-plan calibrate` fitted, for machines (kind "calibration", docs/json.md): one
// row per fitted group of constants, each with the rows it was fitted on and its held-out
// error, the same figures as the text tables.
#pragma once

#include "costmodel/calibration.h"
#include "costmodel/gpu_calibration.h"

#include <nlohmann/json.hpp>
#include <vector>

namespace yirage::cli {

/// The rows: `part` names what was fitted ("collectives", "operations", "memory-bound
/// kernels", "8-bit GEMMs", "layers", "generated kernels", "overlap", "optimizer",
/// "eager tensor parallelism", "allocator", "sustained GEMMs", "steps").
nlohmann::ordered_json calibration_rows(const std::vector<costmodel::CalibrationFit>& fits,
                                        const std::vector<costmodel::GpuCalibrationFit>& gpu_fits);

}  // namespace yirage::cli
