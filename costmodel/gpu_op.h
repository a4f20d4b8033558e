// Operations on a GPU, single and compound, each priced as the kernels it runs. A compound
// operation (RMSNorm+Linear, gated MLP, GEMM+softmax, GEMM+LayerNorm, LoRA+Linear) has an
// unfused form (one kernel per basic op, intermediates through HBM) and a fused form (one
// kernel, intermediates on chip), the latter only when its working set fits on chip.
#pragma once

#include "costmodel/gpu_kernel.h"

#include <optional>
#include <string>
#include <vector>

namespace yirage::costmodel {

enum class GpuOp {
  kGemm,
  kAttention,
  kRmsNorm,
  kLayerNorm,
  kRmsNormBackward,
  kLayerNormBackward,
  kSoftmax,
  kSoftmaxBackward,
  kElementwise,
  kCopy,
  kQuantize,
  kStrided,
  kStridedBinary,
  kCat,
  kWiden,
  kAccumulate,
  kColumnSum,
  kRmsNormLinear,
  kGatedMlp,
  kGemmSoftmax,
  kGemmLayerNorm,
  kLoraLinear,
};

struct GpuOpInfo {
  GpuOp op;
  std::string name;   // "rmsnorm_linear"
  std::string shape;  // "MxKxN"
  std::string help;   // one line
  bool compound = false;
};

/// Every operation, in a fixed order.
const std::vector<GpuOpInfo>& gpu_ops();
const GpuOpInfo* find_gpu_op(const std::string& name);

/// An operation's shape: its dimensions in the order of GpuOpInfo::shape, and the flags.
struct OpShape {
  std::vector<std::int64_t> dims;
  bool causal = false;  // attention
};

/// The kernel PyTorch runs for a softmax (or its backward) over rows of `cols` elements of
/// `bytes` each (SoftMax.cu's dispatch, as profiled in H200/softmax_kernels.csv): its stream
/// kind, "softmax_warp" (one warp a row: forward up to 2,048 elements and 8 KiB, backward up
/// to 1,024; "softmax_warp_wide" for a forward's rows of over 1,024), "softmax_reg" (forward:
/// the row in registers, under ten elements a thread of 1,024; "softmax_reg_wide" from seven
/// elements a thread, where a unit holds one block instead of two), "softmax_smem" (the row in 48
/// KiB of shared memory, 16-byte aligned) or "softmax_plain" (the row read from memory on each
/// pass), with "_backward" after "softmax" for the backward's. Where a device has no fit of that
/// kernel, "softmax" (or "softmax_backward"), fitted on all its rows, prices it.
std::string softmax_kernel(std::int64_t cols, double bytes, bool backward);

/// A softmax's backward over its forward where no backward kernel is fitted: it reads the
/// output and the gradient and writes one, 6 B to the forward's 4.
constexpr double kSoftmaxBackwardRatio = 1.5;

/// A norm's backward over its forward where no backward is fitted: it reads the input and the
/// gradient, writes one and reduces the weights' gradients, twice the forward's traffic.
constexpr double kNormBackwardRatio = 2.0;

/// Parses "2048x4096x4096" against the op's shape; returns an error message or empty.
std::string parse_op_shape(const GpuOpInfo& info, const std::string& text, OpShape* shape);

struct OpEstimate {
  std::string op;
  bool fused = false;
  std::vector<KernelEstimate> kernels;
  devices::Seconds time;
  // What its kernels' unequal tiles add to `time` (KernelEstimate::unequal_tail).
  devices::Seconds unequal_tail;
  // The seconds of the kernels its backward runs beside the multiple of its own (attention
  // over a prompt: attention_backward_kernels); zero for every other op.
  devices::Seconds backward_beside;
  devices::Joules energy;  // at the device's TDP for the duration (an upper bound); 0 if no TDP
  double flops = 0;
  double hbm_bytes = 0;
  std::string note;  // why a fused form is not possible, ...
};

/// The operation in its unfused form (`fused` false) or fused form. A fused form that does
/// not fit on chip returns nullopt with the reason in `why`.
std::optional<OpEstimate> estimate_gpu_op(const devices::DeviceSpec& d,
                                          devices::DType dtype,
                                          const GpuEfficiency& eff,
                                          const GpuOpInfo& info,
                                          const OpShape& shape,
                                          bool fused,
                                          std::string* why);

}  // namespace yirage::costmodel
