// One kernel on a GPU, priced with COMET's staging structure instantiated with the GPU
// hierarchy (comet-model.md §2.4, E4: latency = ramp-up + steady state + ramp-down):
// work is cut into thread-block tiles matched to the matrix units, tiles run in waves over
// the compute units (wave quantization), the steady state is the larger of the tensor-core
// time and the HBM time (the excess is the stall), the first tile loads cannot overlap
// compute (ramp-up) and the last tiles' stores cannot either (ramp-down).
#pragma once

#include "devices/device_spec.h"
#include "devices/support/units.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace yirage::costmodel {

/// Achievable fractions of a device's peaks and its launch overhead. The defaults are the
/// ideal (peak rates, no launch cost): calibration from measurements replaces them.
struct GpuEfficiency {
  double matrix = 1;     // achieved / peak matrix-unit rate on full tiles
  double attention = 1;  // achieved / peak matrix-unit rate inside fused attention
  // The same inside fused causal attention over a prompt (masked tiles, the diagonal's wasted
  // half, tiles of unequal work), fitted on causal rows where there are any; 0: `attention`.
  double attention_causal = 0;
  // Per score a prompt's fused attention also computes the softmax (its exponential, the
  // running maximum and sum), work as long as this many head-dimension columns of its two
  // matrix products take; the fitted `attention` rates hold at head dimension 128. Fitted on
  // rows of other head dimensions where there are any; 0: none.
  double attention_score_width = 0;
  // Fused attention's main backward kernel over its forward, fitted on backward rows timed
  // beside their forward where there are any; 0: kFlashBackward.
  double attention_backward = 0;
  // The host's time for one torch.autograd.grad call, below which a backward timed alone (an
  // op row) cannot go; fitted with attention_backward. A step's host is priced otherwise.
  devices::Seconds autograd_call;
  // The same for 8-bit GEMMs (fp8 through torch._scaled_mm / cuBLASLt, int8), fitted on
  // such rows where there are any; 0: `matrix` (the 16-bit fit at the 8-bit peak).
  double matrix_8bit = 0;
  // Bytes per second one compute unit streams through an 8-bit GEMM tile. Where fitted, 8-bit
  // GEMMs run as torch._scaled_mm with row-wise scales does on Hopper: one 128 x 128 tile
  // (cuBLASLt's nvjet ..._128x128_..._ovscale kernel at every M), no split-K, and the
  // busiest unit's operand strips at this rate add to the kernel's traffic at the HBM rate
  // (a unit's loads wait longer as the whole kernel's grow). 0: the 16-bit tile menu.
  double unit_stream_8bit = 0;
  double vector = 1;  // achieved / peak rate of non-matrix arithmetic
  double memory = 1;  // achieved / peak HBM bandwidth
  // Achieved / peak HBM bandwidth of the optimizer step's multi-tensor kernels (fused Adam,
  // the gradient norm and its scaling), fitted on measured optimizer phases; 0: `memory`.
  double optimizer = 0;
  // A collective launched beside a kernel that holds every SM starts when that kernel ends on
  // every rank: this fraction of r / (r + 1) of the kernel's duration (costmodel/overlap_fit.h),
  // fitted on collectives measured beside GEMMs; 0: not measured, collectives start at once.
  double overlap_wait = 0;
  // Eager PyTorch's caching allocator holds, beyond the live peak of the compute stream, this
  // fraction of it in cached blocks that later requests could not reuse (fragmentation),
  // fitted on measured steps' reserve against their allocated peak; 0: not fitted.
  double allocator_cache = 0;
  // The same under Megatron-LM, fitted on the steps measured under Megatron-Core; 0: not fitted.
  double megatron_allocator_cache = 0;
  // A training step's GEMMs and attention run back to back for seconds, at the clock a GPU
  // at its power limit holds, below the short bursts the op rows are timed in: the sustained
  // matrix rate over the op model's, fitted on GEMMs timed both ways (bench/sustained.py); the
  // step model scales `matrix` and `attention` by it. 0: not measured, the burst rate.
  double sustained_matrix = 0;
  // Between its GEMMs a step runs memory-bound kernels, which draw less power, so the clock
  // its GEMMs get rises as their share of the GPU's busy time (the duty) falls: the GEMM time
  // over the sustained one is max(duty_floor, 1 - duty_slope x (1 - duty)), fitted on GEMMs
  // interleaved with memory-bound kernels at set duties (bench/duty.py). 0: not measured,
  // the sustained rate at every duty.
  double duty_slope = 0;
  double duty_floor = 1;
  devices::Seconds launch;  // per kernel launched alone (a timed single op)
  // Per kernel of a sequence replayed from a CUDA graph (whole layers, decode steps): the
  // gap between back-to-back kernels, far below a lone launch.
  devices::Seconds graph_launch;

  // Memory-bound kernels fitted per kind ("rmsnorm", "layernorm", "softmax", "elementwise"):
  // the framework's kernel moves `traffic` times the minimal bytes at the achievable HBM
  // rate, after a fixed `latency` that replaces the launch overhead, plus `per_column` for
  // each element of a row (a row-wise kernel's block walks its first row before the stream
  // of rows overlaps anything).
  struct StreamFit {
    double traffic = 1;
    devices::Seconds latency;
    devices::Seconds per_column;
    // The fraction of the vector peak the kind's arithmetic runs at, where a kernel can be
    // bound by its instructions rather than its bytes (fitted only where the rows move
    // different bytes per element, else the two cannot be told apart); 0: bytes alone.
    double vector = 0;
  };

  std::map<std::string, StreamFit> stream;
  // The GEMM library evens out a partial last wave by splitting its tiles' K loops over
  // every unit (stream-K: cuBLAS's persistent kernels on Hopper). Chosen by calibration on
  // op rows, where the fit split prices better with it; false: whole tiles in waves.
  bool stream_k = false;
  bool in_graph = false;  // price kernels as replayed from a CUDA graph (graph_launch each)
  // Host time to issue one kernel from an eager framework (Python, dispatcher, launch call):
  // a kernel shorter than this leaves the GPU waiting. Fitted on measured training steps.
  devices::Seconds host;
  // Host time per operation of eager PyTorch under tensor parallelism (DTensor's dispatch),
  // charged per pass like `host`. Fitted on measured tensor-parallel steps; zero where not.
  devices::Seconds eager_tp_host;
  // Host time per kernel of a Megatron-LM step (its Python modules and autograd), charged per
  // pass like `host`, on devices whose `host` is not set (it would bound every op of theirs).
  // Fitted on measured Megatron-Core steps; zero where not.
  devices::Seconds megatron_host;
  // Of those, per plain PyTorch operation inside the modules (RoPE's pieces, the activation's,
  // the residual adds, unfused attention's products and softmax): far less Python than a
  // module's call. Fitted with `megatron_host`; zero: `megatron_host` for these too.
  devices::Seconds megatron_op_host;
  // Per forward or backward of a model chunk in a Megatron-LM pipeline: the GPU's idle time
  // after each point-to-point exchange, which synchronises the device (batch_p2p_sync), until
  // the host issues the next kernel. Fitted on pipelined Megatron-Core steps; zero where not.
  devices::Seconds megatron_pp_sync;
  // Of Megatron-LM's data-parallel gradient sync run beside the last backward (overlapped
  // buckets), the share of its time alone that the step still pays: NCCL's kernels take SMs
  // and memory bandwidth from the backward's, and are stretched by them. Fitted on measured
  // Megatron-Core steps with data parallelism; zero (overlap free) where not.
  double megatron_dp_overlap_cost = 0;
  // A generated block program's (codegen's generic GPU path) serial latency: clock cycles
  // per dependent step of one thread (a multiply-add of a block matmul's dot product, an
  // element of a reduced row, one element of an elementwise op), per k-step of a warp's
  // matrix-unit tile and per block-wide barrier. Zero where not fitted: such kernels are then
  // priced by their throughput alone.
  double block_step_cycles = 0;
  double block_mma_step_cycles = 0;
  double block_barrier_cycles = 0;
  // Per kernel of a generated program replayed from a CUDA graph, beyond graph_launch: the
  // wait for the kernel before it and its own blocks' start, which the latencies fitted on
  // PyTorch's memory-bound ops hold (those kernels do not pay it) but the other estimates do
  // not (GEMM+LayerNorm's three launches measured 1.7x their sum). Fitted with the cycles
  // above on measured programs; zero where not fitted.
  devices::Seconds program_launch;
  std::string source = "uncalibrated: peak rates, no launch overhead";
  // Where the efficiencies were fitted on whole measured steps instead of op rows: the
  // file and split (empty otherwise), so that a check on that file reports held-out rows.
  std::string steps_fitted_on;
  // Where `matrix` was fitted on measured steps apart from them (`calibrate --matrix-steps`):
  // that file and its split; validate-training then reports that file's held-out rows.
  std::string matrix_fitted_on;
};

/// The overhead one kernel pays: `graph_launch` in a CUDA graph, else `launch`.
devices::Seconds kernel_launch(const GpuEfficiency& eff);

struct KernelEstimate {
  std::string name;
  devices::Seconds launch;
  devices::Seconds ramp_up;    // the first tiles' loads, not overlapped
  devices::Seconds steady;     // max(compute, memory) over the waves
  devices::Seconds ramp_down;  // the last tiles' stores, not overlapped
  devices::Seconds compute;    // arithmetic time over all waves
  devices::Seconds memory;     // HBM time of all traffic
  devices::Seconds serial;     // a generated block program's dependent steps, waves in turn
  double flops = 0;
  double hbm_bytes = 0;
  // The bytes a matrix-unit kernel's operands stream at least (each read once, the result
  // written once), priced by GpuEfficiency::stream's "gemm" or "attention" fit where fitted.
  double stream_bytes = 0;
  std::int64_t tiles = 0;
  std::int64_t waves = 0;
  std::string tile;            // "128x256x64", or "stream"
  double wave_efficiency = 1;  // tiles / (waves x concurrent tiles)
  bool fitted_start = false;   // launch holds a start latency fitted on measured kernels

  devices::Seconds host;  // the host's issue time; the GPU cannot run ahead of it
  // Of `compute`, what tiles of unequal work add past the units' average share (causal
  // attention over a prompt: half its longest tile); zero where the tiles run in waves.
  devices::Seconds unequal_tail;

  devices::Seconds time() const {
    return devices::Seconds{std::max((launch + ramp_up + steady + ramp_down).value, host.value)};
  }

  /// "compute", "memory" or "serial latency": which side of the steady state binds.
  std::string bound() const {
    if (serial > compute && serial > memory)
      return "serial latency";
    return compute >= memory ? "compute" : "memory";
  }

  /// The stall of the steady state: the longer side's excess over the shorter.
  devices::Seconds stall() const { return steady - (compute < memory ? compute : memory); }
};

/// FlashAttention-2's backward over its forward: 5 matrix products to the forward's 2 (Dao
/// 2023, section 3.1).
constexpr double kFlashBackward = 2.5;

/// Seconds of fused attention's backward whose forward takes `forward` seconds, of which its
/// unequal tiles add `unequal_tail` (KernelEstimate::unequal_tail): its main kernel at the
/// fitted ratio to the forward (else kFlashBackward), with half that tail, then the kernels
/// beside it, `beside` seconds (attention_backward_kernels). The main kernel's block owns 64
/// keys and walks the queries that see them (cuDNN's sm90 bprop, 64x64x128 in its name;
/// FlashAttention-2's backward is the same), where the forward's owns 128 queries and walks
/// their keys: its longest tile is half the forward's.
double attention_backward_time(const GpuEfficiency& e,
                               double forward,
                               double unequal_tail,
                               double beside);

/// `e` for kernels that run back to back for seconds (a training step, a serving engine): the
/// matrix and attention rates scaled by `sustained_matrix` where it was fitted.
GpuEfficiency sustained(const GpuEfficiency& e);

/// The GEMM time at `duty` (the share of the GPU's busy time its GEMMs and attention take)
/// over the time back to back: max(duty_floor, 1 - duty_slope x (1 - duty)); 1 where no
/// duty fit exists.
double duty_factor(const GpuEfficiency& e, double duty);

/// `e` (a sustained efficiency) with the matrix rates the clock at `duty` allows: each
/// divided by duty_factor(e, duty). Fused attention, not measured at set duties, keeps the
/// sustained rate.
GpuEfficiency at_duty(const GpuEfficiency& e, double duty);

/// A (batched) GEMM C[MxN] = A[MxK] B[KxN], `batch` times, inputs at `dtype` and the output
/// at `out_bytes` per element. The thread-block tile is the fastest of the usual CUTLASS
/// shapes that fits the shared memory double-buffered.
KernelEstimate gemm_kernel(const devices::DeviceSpec& d,
                           devices::DType dtype,
                           const GpuEfficiency& eff,
                           std::int64_t m,
                           std::int64_t n,
                           std::int64_t k,
                           std::int64_t batch = 1);

/// A kernel that streams memory: reads `read_bytes`, writes `write_bytes`, and performs
/// `flops` non-matrix operations (norms, softmax, elementwise); `kind` names its fit in
/// `eff.stream`, if any.
KernelEstimate stream_kernel(const devices::DeviceSpec& d,
                             const GpuEfficiency& eff,
                             const std::string& kind,
                             std::string name,
                             double read_bytes,
                             double write_bytes,
                             double flops,
                             std::int64_t row_length = 0);

/// The shape of an attention call.
struct AttentionShape {
  std::int64_t batch = 1;
  std::int64_t heads = 1;
  std::int64_t kv_heads = 1;
  std::int64_t q_len = 1;
  std::int64_t kv_len = 1;
  std::int64_t head_dim = 128;
  bool causal = false;
};

/// Fused (flash) attention: prefill when q_len > 1 (tiles of 128 queries per head, a tile
/// of fewer queries computing all 128 rows),
/// decode when q_len == 1 (the KV cache split over the compute units and streamed).
/// The head-dimension columns a prompt's fused attention computes per score, at the rate the
/// `attention` fractions are fitted at (head dimension 128): the kernel's tile of the head
/// dimension, and the softmax's work as attention_score_width more.
double prompt_attention_width(std::int64_t head_dim, const GpuEfficiency& eff);

KernelEstimate attention_kernel(const devices::DeviceSpec& d,
                                devices::DType dtype,
                                const GpuEfficiency& eff,
                                const AttentionShape& s);

/// The memory-bound kernels a prompt's flash-attention backward runs beside its main one
/// (cuDNN's on sm90, data/benchmarks/H200/attention_kernels.csv; FlashAttention-2 runs the
/// same three): each query row's dot(dO, O), read in 16 bits; dQ, accumulated in fp32,
/// converted to 16 bits; and under grouped-query attention the key and value gradients,
/// computed per query head, summed over the heads that share them. Empty for decode.
std::vector<KernelEstimate> attention_backward_kernels(const devices::DeviceSpec& d,
                                                       devices::DType dtype,
                                                       const GpuEfficiency& eff,
                                                       const AttentionShape& s);

/// The device's peak rate for `dtype`, falling back to the nearest wider type it has.
devices::FlopsPerSec matrix_peak(const devices::DeviceSpec& d, devices::DType dtype);

}  // namespace yirage::costmodel
