// Calibration on whole measured steps (bench/run_plan.py's train_steps*.csv): the host's
// time per operation of eager PyTorch under tensor parallelism (GpuEfficiency::eager_tp_host),
// which op-level rows cannot show: DTensor dispatches every operation in Python and the GPU
// waits for it; and the bandwidth the optimizer step's multi-tensor kernels reach
// (GpuEfficiency::optimizer), from the steps' measured optimizer phases.
#pragma once

#include "costmodel/calibration.h"
#include "devices/model_loader.h"
#include "devices/registry.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace yirage::planner {

/// Fits `device`'s eager_tp_host on the eager tensor-parallel rows that ran in `files`
/// (status ok, tp > 1, the device's rows only), alternating in file order: the even ones
/// fitted (the squared relative error of the step time, searched over 0-2 ms by 10 us, then
/// by 1 us around the best), the odd ones held out. The other efficiencies are those of
/// `calibrations`. Nullopt when there are fewer than 4 such rows.
std::optional<costmodel::EagerTpHostFit> fit_eager_tp_host(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations);

/// The same for `device`'s megatron_host and megatron_op_host (GpuEfficiency): the host's time
/// per module call and per plain PyTorch operation of a Megatron-LM step, fitted together (each
/// in turn with the other held), on the rows measured under Megatron-Core
/// (bench/run_megatron.py; framework `megatron-core-<commit>`) without pipelining.
std::optional<costmodel::EagerTpHostFit> fit_megatron_host(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations);

/// The same for `device`'s megatron_pp_sync (GpuEfficiency): the GPU's idle time after each
/// point-to-point exchange of a Megatron-LM pipeline, on the pipelined Megatron-Core rows
/// (pp > 1), with the host times of `calibrations`, by the absolute relative error (a step the
/// host binds can move by 10% from run to run, and would set a squared fit alone).
std::optional<costmodel::EagerTpHostFit> fit_megatron_pp_sync(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations);

/// Fits `device`'s megatron_dp_overlap_cost (GpuEfficiency) on what overlap saves: layouts
/// measured under Megatron-Core with the gradient sync overlapping the backward and without
/// (dp_overlap=off) in one file, paired by task and layout. Pairs alternate in file order: the
/// even ones fitted (the absolute difference of the priced and measured saving over the
/// overlapped step, over 0-1 by 0.01), the odd ones held out, with the other constants of
/// `calibrations`. Nullopt with fewer than 3 pairs.
std::optional<costmodel::DpOverlapFit> fit_megatron_dp_overlap(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations);

/// Fits `device`'s optimizer efficiency (GpuEfficiency::optimizer) on the measured optimizer
/// phases (optimizer_s: gradient clipping and the step) of the eager rows that ran in `files`
/// with nothing but the step in that phase (tp = 1, pp = 1, ZeRO 0), alternating in file
/// order: the even ones fitted (the squared relative error of the phase, searched over 0.2-1
/// by 0.001), the odd ones held out. Nullopt when there are fewer than 4 such rows.
std::optional<costmodel::OptimizerFit> fit_optimizer(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations);

/// Fits `device`'s matrix efficiency (GpuEfficiency::matrix) on the rows of a measured-steps
/// file that ran on it (published runs of large models, their time mostly GEMMs), alternating
/// in file order: the even ones fitted (the squared relative error of the step, searched over
/// 0.3-1 by 0.005), the odd ones held out. The rest of the device's efficiency is that of
/// `calibrations`. Nullopt when there are fewer than 4 such rows.
std::optional<costmodel::MatrixStepsFit> fit_matrix_on_steps(
    const std::filesystem::path& file,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations);

/// Fits `device`'s allocator_cache (GpuEfficiency::allocator_cache) on the measured reserve of
/// the eager rows that ran in `files` with every allocation in the compute stream (not FSDP2,
/// whose all-gather and reduce-scatter streams keep pools of their own), from each row's
/// measured allocated peak and what the model keeps beside it (gathered_logits_cache, from the
/// task files beside each file), alternating in file order: the even ones fitted (least squared
/// relative error of the reserve, closed form), the odd ones held out. Nullopt when there are
/// fewer than 4 such rows. `megatron`: on the rows measured under Megatron-Core instead
/// (GpuEfficiency::megatron_allocator_cache).
std::optional<costmodel::AllocatorFit> fit_allocator_cache(
    const std::vector<std::filesystem::path>& files,
    const std::string& device,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    bool megatron = false);

}  // namespace yirage::planner
