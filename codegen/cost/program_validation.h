// Generated kernels against the cost model: measured rows of kind "program" (a kernel made
// from a µGraph, the row's shape names it) priced by price_ugraph as replayed from a CUDA
// graph, as bench/check_programs.py times them; and the fit of the generic block path's
// serial latency (costmodel::GpuEfficiency::block_*_cycles) on them.
#pragma once

#include "codegen/ir/ugraph.h"
#include "costmodel/calibration.h"
#include "costmodel/gpu_calibration.h"
#include "costmodel/validation.h"

namespace yirage::codegen {

/// The µGraph a program row was generated from: its shape, a path relative to the measured
/// file. Throws devices::InputError naming the row when the file is missing or malformed.
KernelGraph program_ugraph(const costmodel::MeasuredFile& file, const costmodel::MeasuredRow& row);

/// Prices every program row of `file` on its device, calibrated by `calibrations` where they
/// have an entry for it (rows of an unknown device are skipped, with the reason).
costmodel::Validation validate_programs(const costmodel::MeasuredFile& file,
                                        const devices::DeviceRegistry& registry,
                                        const costmodel::CalibrationSet* calibrations);

/// Fits each fit's block cycles (a scalar step, a matrix-unit k-step, a barrier) and the time
/// each kernel of a program adds in a CUDA graph (GpuEfficiency::program_launch) on the
/// program rows of its device (the rows of costmodel::fit_split; the others held out), its
/// other fitted values held: the sum of squared relative errors, searched on a grid (up to
/// 100, 400 and 1000 cycles) refined twice around its best point, the launch in closed form at
/// each point. Sets the fit's `block` and efficiency; leaves fits without program rows alone.
void fit_block_latency(const std::vector<costmodel::MeasuredFile>& files,
                       const devices::DeviceRegistry& registry,
                       std::vector<costmodel::GpuCalibrationFit>& fits);

}  // namespace yirage::codegen
