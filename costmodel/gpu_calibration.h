// Validation and calibration of the GPU operation model against measured op rows
// (bench/ops.py): the achievable fractions of peak (matrix units in GEMMs and in fused
// attention, HBM bandwidth, vector units) and the launch overhead of one device.
#pragma once

#include "costmodel/gpu_kernel.h"
#include "costmodel/gpu_op.h"
#include "costmodel/measured.h"
#include "devices/registry.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace yirage::costmodel {

/// The bytes triton.testing.do_bench zeroes before every timed call to flush the L2 (its
/// CUDA driver's get_empty_cache_for_benchmark: 256 MiB), as bench/ops.py times its rows.
constexpr double kDoBenchFlushBytes = 256.0 * 1024 * 1024;

/// The estimate of one measured op row, or nullopt with the reason. A GEMM row is priced at
/// the duty it was timed at (GpuEfficiency::duty_slope): the GEMM, then the memset of its
/// flush (MeasuredRow::flush_bytes; absent, kDoBenchFlushBytes; 0, back to back).
std::optional<OpEstimate> estimate_op_row(const MeasuredRow& row,
                                          const devices::DeviceRegistry& registry,
                                          const GpuEfficiency& eff,
                                          std::string* why);

/// The fit of `GpuEfficiency::graph_launch` on measured whole-layer rows (planner/).
struct LayerLaunchFit {
  devices::Seconds graph_launch;
  std::size_t fit_rows = 0;
  std::size_t held_out_rows = 0;
  double held_out_mape = 0;  // percent, the layer rows held out (forward and backward)
  std::string fitted_on;
};

/// The fit of a generated block program's serial latency (GpuEfficiency::block_*_cycles) on
/// measured generated kernels (codegen/).
struct BlockLatencyFit {
  double step_cycles = 0;
  double mma_step_cycles = 0;
  double barrier_cycles = 0;
  devices::Seconds launch;  // GpuEfficiency::program_launch
  std::size_t fit_rows = 0;
  std::size_t held_out_rows = 0;
  double held_out_mape = 0;  // percent, the programs held out
  double unpriced_mape = 0;  // percent, the same rows without the serial latency
  std::string fitted_on;
};

/// The fit of a device's efficiencies and host issue time (GpuEfficiency::host) on measured
/// whole training steps (planner/), for a device without measured op rows.
struct StepFit {
  std::size_t fit_rows = 0;
  std::size_t held_out_rows = 0;
  double held_out_mape = 0;  // percent, the steps held out
  std::string fitted_on;
};

/// Whether `key` names a stream fit the model reads (GpuEfficiency::stream): a kind
/// calibration fits ("softmax_plain", the operand streams "gemm" and "attention"), or one fitted
/// per dtype and its dtype ("rmsnorm.fp32").
bool is_stream_fit_key(const std::string& key);

/// One dimensionless constant fitted on half of some measured rows and checked on the rest.
struct HeldOutFit {
  double value = 0;
  std::size_t fit_rows = 0;
  std::size_t held_out_rows = 0;
  double held_out_mape = 0;  // percent, the rows held out
  double unfitted_mape = 0;  // percent, the same rows without the constant
  std::string fitted_on;
};

/// `GpuEfficiency::optimizer` on measured optimizer phases (planner/); unfitted: the phases at
/// the `memory` efficiency.
using OptimizerFit = HeldOutFit;
/// `GpuEfficiency::allocator_cache` on measured steps' reserve (planner/); unfitted: the
/// reserve taken as the allocated peak.
using AllocatorFit = HeldOutFit;
/// `GpuEfficiency::matrix` of a device without op rows, on measured steps whose time is mostly
/// GEMMs (planner/, `calibrate --matrix-steps`); unfitted: the value the whole-step fit found.
using MatrixStepsFit = HeldOutFit;
/// `GpuEfficiency::sustained_matrix` on GEMMs timed back to back; unfitted: the op model's rate.
using SustainedFit = HeldOutFit;
/// `GpuEfficiency::megatron_dp_overlap_cost` on Megatron-Core steps whose gradient sync
/// overlaps the backward (planner/); unfitted: the overlapped sync priced as free.
using DpOverlapFit = HeldOutFit;

/// `GpuEfficiency::duty_slope` (`value`) and `duty_floor` on GEMMs interleaved with
/// memory-bound kernels at set duties (bench/duty.py); unfitted: the sustained rate.
struct DutyFit : HeldOutFit {
  double floor = 1;
};

/// The fit of `GpuEfficiency::overlap_wait` on collectives measured beside GEMMs.
struct OverlapFit {
  double wait = 0;
  std::size_t fit_rows = 0;
  std::size_t held_out_rows = 0;
  double held_out_mape = 0;  // percent, the collectives beside GEMMs held out
  double unpriced_mape = 0;  // percent, the same rows priced as if alone
  std::string fitted_on;
};

/// The fit of `GpuEfficiency::eager_tp_host` on measured tensor-parallel steps (planner/).
struct EagerTpHostFit {
  devices::Seconds host;     // per operation
  devices::Seconds op_host;  // Megatron-LM's plain PyTorch operations (megatron_op_host); 0: none
  std::size_t fit_rows = 0;
  std::size_t held_out_rows = 0;
  double held_out_mape = 0;  // percent, the tensor-parallel rows held out
  double unpriced_mape = 0;  // percent, the same rows without the host's time
  std::string fitted_on;
};

/// GpuEfficiency::matrix_8bit, fitted alone on the 8-bit GEMM rows with everything else
/// held at the 16-bit fit.
struct Matrix8bitFit {
  std::string fitted_on;  // files and rows
  double held_out_mape = 0;
  double unfitted_held_out_mape = 0;  // at `matrix` (the 16-bit fraction at the 8-bit peak)
};

/// GpuEfficiency::attention_backward and autograd_call, fitted alone on the fit split's rows
/// of op `attention_backward` (fused causal attention's backward, priced from its modelled
/// forward and the kernels beside it) with everything else at the op fit.
struct AttentionBackwardFit {
  std::string fitted_on;  // files and rows
  double held_out_mape = 0;
  double unfitted_held_out_mape = 0;  // at kFlashBackward times the forward
};

struct GpuCalibrationFit {
  std::string device;
  std::optional<Matrix8bitFit> matrix_8bit;
  std::optional<AttentionBackwardFit> attention_backward;
  // GpuEfficiency::attention_score_width, on prompt attention rows of head dimensions other
  // than 128 (unfitted: 0).
  std::optional<HeldOutFit> attention_score;
  GpuEfficiency efficiency;
  std::optional<StepFit> steps;
  std::optional<MatrixStepsFit> matrix_steps;
  std::optional<EagerTpHostFit> eager_tp;
  std::optional<EagerTpHostFit> megatron_host;     // the same fit, on Megatron-Core steps
  std::optional<EagerTpHostFit> megatron_pp_sync;  // the same, on pipelined Megatron-Core steps
  std::optional<DpOverlapFit> megatron_dp_overlap;
  std::optional<OptimizerFit> optimizer;
  std::optional<OverlapFit> overlap;
  std::optional<AllocatorFit> allocator;
  std::optional<AllocatorFit> megatron_allocator;  // the same, on Megatron-Core steps
  std::optional<SustainedFit> sustained;
  std::optional<DutyFit> duty;
  std::optional<LayerLaunchFit> layers;
  std::optional<BlockLatencyFit> block;
  std::size_t fit_rows = 0;
  std::size_t held_out_rows = 0;
  double fit_mape = 0;
  double held_out_mape = 0;
  double uncalibrated_held_out_mape = 0;
  std::string fitted_on;
};

/// How a device's GEMMs speed up as their duty falls, fitted apart from the op rows (fit_duty):
/// by device, and `otherwise` for a device without its own (borrowed; none: the sustained rate).
struct DutyByDevice {
  std::map<std::string, DutyFit> own;
  std::optional<DutyFit> otherwise;
  std::string otherwise_from;  // the device `otherwise` was fitted on

  const DutyFit* find(const std::string& device) const;
};

/// Fits each device's GpuEfficiency on the op rows of `fit_split` (the others held out): coordinate
/// descent over the four fractions in [0.05, 1] by steps of 0.01, three rounds, with the
/// launch overhead that minimises the squared relative error in closed form at each step. The
/// GEMM rows are priced at the duty they were timed at (estimate_op_row) with `duty`'s fit
/// held, so `matrix` is the rate of GEMMs back to back.
std::vector<GpuCalibrationFit> fit_gpu_ops(const std::vector<MeasuredFile>& files,
                                           const devices::DeviceRegistry& registry,
                                           const DutyByDevice& duty = {});

}  // namespace yirage::costmodel
