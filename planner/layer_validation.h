// Whole transformer layers next to measurements: every `layer` row of a measured file
// (bench/layers.py) priced by the planner's layer model, as the framework runs it.
#pragma once

#include "costmodel/calibration.h"
#include "costmodel/gpu_calibration.h"
#include "costmodel/measured.h"
#include "costmodel/validation.h"
#include "devices/model_loader.h"
#include "devices/registry.h"

namespace yirage::planner {

/// Prices every layer row of `file`: the shape `MODEL:BxSxK` (batch, new tokens per
/// sequence, keys attended) on `ranks` devices of the row's type and fabric, forward
/// (S = 1: decode against a cache of K) or forward and backward (sequence-parallel when
/// tensor-parallel), compound operations unfused, with the device's calibration from
/// `calibrations` when it has one.
costmodel::Validation validate_layers(const costmodel::MeasuredFile& file,
                                      const devices::DeviceRegistry& registry,
                                      const devices::ModelRegistry& models,
                                      const costmodel::CalibrationSet* calibrations);

/// Fits `graph_launch` of every device in `fits` (their other efficiencies as fitted) on the
/// layer rows of `files` of that device, the rows of costmodel::fit_split fitted and the others
/// held out: the model is linear in it, so the least-squares relative error has a closed form.
void fit_graph_launch(const std::vector<costmodel::MeasuredFile>& files,
                      const devices::DeviceRegistry& registry,
                      const devices::ModelRegistry& models,
                      const costmodel::CalibrationSet* calibrations,
                      std::vector<costmodel::GpuCalibrationFit>& fits);

}  // namespace yirage::planner
