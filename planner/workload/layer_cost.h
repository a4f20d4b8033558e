// The cost of one transformer layer (and of the output head) for one micro-batch on one
// device of a tensor-parallel group: the operator graph of the layer priced by the
// costmodel library's GPU operations, with the fuse-or-not decision for its compound
// operations, and the tensor-parallel collectives it needs.
#pragma once

#include "costmodel/comm_group.h"
#include "costmodel/gpu_kernel.h"
#include "devices/device_spec.h"
#include "devices/model_spec.h"
#include "planner/plan.h"

#include <optional>
#include <string>
#include <vector>

namespace yirage::planner {

struct LayerShape {
  std::int64_t micro_batch = 1;
  std::int64_t seq = 1;
  std::int64_t tp = 1;
  bool moe_layer = false;          // this layer's FFN is the mixture of experts
  bool unfused_attention = false;  // QK^T, softmax, dropout and PV as separate kernels
  std::int64_t kv_len = 0;         // keys each query attends to (0: seq); the context in decode
  bool inference = false;          // forward only: tensor parallelism all-reduces, no backward
  // Context parallelism: `seq` is this rank's part of a sequence of seq x cp tokens, in
  // load-balanced chunks, so each query attends to seq x cp / 2 keys on average.
  std::int64_t cp = 1;
  // Sequence parallelism (training with tp > 1): norms and residual adds on 1 / tp of the
  // tokens, all-gathers and reduce-scatters in place of the all-reduces.
  bool sp = true;
  // Tensor-parallel collectives overlapped with the GEMMs (Layout::tp_overlap, tp_overlap.h).
  bool tp_overlap = false;
  // Decode (seq 1) attention as one thread block per sequence and KV head with the group's
  // queries as rows (DecodeAttention::kGrouped), not split over the compute units.
  bool grouped_decode = false;
};

/// The rows a rank normalises and adds residuals on: with sequence parallelism 1 / tp of the
/// tokens (Korthikanti et al. 2022, §4.2.2), without it all of them on every rank.
std::int64_t norm_rows(const LayerShape& s);

/// Seconds for one layer and one micro-batch on one device.
struct LayerCost {
  double forward = 0;
  double backward = 0;
  double attention_forward = 0;  // the attention core alone (what selective recompute redoes)
  double issue = 0;              // the host's time to issue the forward, where it is priced
  double tp_comm = 0;            // forward + backward tensor-parallel collectives (exposed)
  double flops_forward = 0;      // per device
  KernelTime forward_kernels;    // GPU seconds of the forward's kernels by kind
  KernelTime backward_kernels;   // and of the backward's
  // Of the forward, the kernels after the last tensor its backward keeps (the FFN's down
  // projection and the residual add after it) and the collective between them: what PyTorch's
  // non-reentrant checkpoint does not run again when it recomputes the layer (its early stop).
  // Zero where a full recomputation reruns the whole forward (Megatron-LM).
  KernelTime forward_tail;
  double tp_tail = 0;
  std::vector<std::string> fusions;  // "rmsnorm_linear: fused (1.2x)", ...
  std::vector<CompoundChoice> compounds;
};

struct DeviceContext {
  const devices::DeviceSpec& device;
  costmodel::GpuEfficiency efficiency;
  devices::DType dtype = devices::DType::kBf16;  // activations: norms, residuals, copies
  std::optional<costmodel::CommGroup> tp_group;  // the ranks of one tensor-parallel group
  bool fuse = true;  // false: compound operations run unfused, as eager PyTorch runs them
  // Training under eager PyTorch (Framework::kPytorch): separate GEMMs for Q, K, V, gate and
  // up, and the memory traffic of eager_traffic.h around them (implies fuse = false).
  bool eager = false;
  // Megatron-LM on Megatron-Core's own modules (Layout::te off): the GEMMs as Megatron-LM runs
  // them, the pointwise pieces between them as PyTorch's kernels (local_layer_bytes; implies
  // fuse = false).
  bool megatron_local = false;
  // Eager PyTorch over bf16 parameters without autocast (FSDP2, ZeRO 2/3: eager_fsdp):
  // nn.RMSNorm runs PyTorch's fused norm kernels, priced as rmsnorm operations, where under
  // autocast it runs in fp32 from its parts (eager_traffic.h).
  bool fused_norms = false;
  // Inference at a precision per tensor kind (TaskSpec): `dtype` is the activations'.
  std::optional<devices::DType> gemm_dtype = std::nullopt;  // weights, GEMM inputs (none: dtype)
  std::optional<devices::DType> kv_dtype = std::nullopt;    // the KV cache (none: dtype)
  std::optional<devices::DType> comm_dtype = std::nullopt;  // TP traffic (none: dtype)
};

LayerCost layer_cost(const devices::ModelSpec& m, const LayerShape& s, const DeviceContext& cx);

/// The output head and loss for one micro-batch: forward and backward seconds.
LayerCost head_cost(const devices::ModelSpec& m, const LayerShape& s, const DeviceContext& cx);

/// The share of `c`'s GPU time (forward and backward kernels) its GEMMs and attention take:
/// the duty that sets the clock a GPU at its power limit gives them. 1 when it has none.
double hot_duty(const LayerCost& c);

/// layer_cost and head_cost of a training step, with the GEMMs at the clock their duty allows
/// (costmodel::at_duty; fused attention counts toward the duty but keeps its rate): priced at
/// `cx`'s rates (back to back), then again at the duty of that pricing. Where `cx` has no duty
/// fit, the same as the plain ones.
LayerCost layer_cost_at_duty(const devices::ModelSpec& m,
                             const LayerShape& s,
                             const DeviceContext& cx);
LayerCost head_cost_at_duty(const devices::ModelSpec& m,
                            const LayerShape& s,
                            const DeviceContext& cx);

}  // namespace yirage::planner
