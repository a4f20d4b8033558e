// Pricing a layer's operations on one device: costmodel's GPU operations at the dtype each
// operation runs in, the kernels they launch, the host's issue time, and the tensor-parallel
// collectives between them. Shared by the layer models of layer_cost.cpp and infer_layer.cpp.
#pragma once

#include "costmodel/gpu_op.h"
#include "planner/workload/eager_traffic.h"
#include "planner/workload/layer_cost.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace yirage::planner {

// Backward over forward: a GEMM's backward computes two products of the forward's size
// (input and weight gradients); fused attention's is costmodel::attention_backward_time.
constexpr double kBackwardGemm = 2.0;

/// Backward over forward seconds of operation `op` (see the definition).
double backward_ratio(const std::string& op);

// The operation of costmodel's that prices `op`'s backward where it has one of its own
// (softmax_backward, rmsnorm_backward, layernorm_backward: priced from their fits, or from
// the forward where a device has none), else empty.
std::string backward_op(const std::string& op);

/// Where operation `name`'s seconds go in a KernelTime: attention, the matrix products and the
/// compound operations around them, or the memory-bound rest.
double& kernel_slot(KernelTime& k, const std::string& name);

/// The dtype operation `name` runs in: GEMMs (and the compounds around them) in the
/// context's gemm_dtype, attention in its kv_dtype, the rest in dtype.
devices::DType op_dtype(const DeviceContext& cx, const std::string& name);

costmodel::OpEstimate price(const DeviceContext& cx,
                            const std::string& name,
                            std::vector<std::int64_t> dims,
                            bool fused,
                            bool causal = false);

// Prices a layer's operations on one device and counts the kernels they launch. Each kernel
// is priced at the GPU's time alone: the host's issue time (GpuEfficiency::host) is charged
// per pass by with_host_issue, since the host runs ahead of long kernels and the GPU waits
// only when the pass as a whole issues slower than it runs.
class Pricer {
 public:
  explicit Pricer(const DeviceContext& cx) : cx_(cx) { cx_.efficiency.host = {}; }

  const DeviceContext& context() const { return cx_; }

  std::int64_t kernels() const { return kernels_; }

  // Of kernels(), those of plain PyTorch operations (plain_op, stream) rather than of a
  // framework module's call: Megatron-LM's host issues them faster (megatron_op_host).
  std::int64_t plain_kernels() const { return plain_; }

  // The backward of every operation priced so far (backward_ratio of each; a softmax's and a
  // norm's their own operation).
  double backward() const { return backward_; }

  // The forward and backward of every operation priced so far, by kind of kernel.
  const KernelTime& forward_kernels() const { return forward_kernels_; }

  const KernelTime& backward_kernels() const { return backward_kernels_; }

  // The mean time of the GEMMs priced so far (0 if none): what a collective launched beside
  // a weight-gradient GEMM of the same shape waits behind.
  double mean_gemm() const { return gemms_ > 0 ? gemm_time_ / static_cast<double>(gemms_) : 0; }

  costmodel::OpEstimate op(const std::string& name,
                           std::vector<std::int64_t> dims,
                           bool causal = false) {
    // A softmax's backward and a norm's are their own kernels (backward_op).
    std::string own = backward_op(name);
    double back = own.empty() ? -1 : price(cx_, own, dims, false).time.value;
    costmodel::OpEstimate e = price(cx_, name, std::move(dims), false, causal);
    count(name, e, back);
    return e;
  }

  // The same, issued as a plain PyTorch operation (plain_kernels).
  costmodel::OpEstimate plain_op(const std::string& name, std::vector<std::int64_t> dims) {
    costmodel::OpEstimate e = op(name, std::move(dims));
    plain_ += static_cast<std::int64_t>(e.kernels.size());
    return e;
  }

  // Memory-bound kernels priced by their bytes (eager_traffic.h): `forward` and `backward`
  // seconds, `kernels` launched in forward.
  void stream(double forward, double backward, std::int64_t kernels) {
    kernels_ += kernels;
    plain_ += kernels;
    backward_ += backward;
    forward_kernels_.memory += forward;
    backward_kernels_.memory += backward;
  }

  // A compound operation, fused when that is possible and faster on this device.
  costmodel::OpEstimate compound(const std::string& name,
                                 const std::vector<std::int64_t>& dims,
                                 LayerCost& c) {
    const costmodel::GpuOpInfo* info = costmodel::find_gpu_op(name);
    costmodel::OpShape shape{dims, false};
    std::string why;
    auto fused = costmodel::estimate_gpu_op(cx_.device, op_dtype(cx_, name), cx_.efficiency, *info,
                                            shape, true, &why);
    costmodel::OpEstimate unfused = price(cx_, name, dims, false);
    c.compounds.push_back(
        {name, dims, false, fused ? fused->time.value : 0, unfused.time.value, fused ? "" : why});
    costmodel::OpEstimate chosen = unfused;
    if (cx_.fuse && fused && fused->time < unfused.time) {
      c.compounds.back().fused = true;
      c.fusions.push_back(name + ": fused (" +
                          devices::format_number(unfused.time.value / fused->time.value, 3) + "x)");
      chosen = *fused;
    } else if (fused && fused->time < unfused.time) {
      c.fusions.push_back(name + ": unfused, as the framework runs it (fused: " +
                          devices::format_number(unfused.time.value / fused->time.value, 3) + "x)");
    } else {
      c.fusions.push_back(name + ": unfused" + (fused ? "" : " (" + why + ")"));
    }
    count(name, chosen);
    return chosen;
  }

 private:
  // `back`: the backward's time where it was priced apart, else negative.
  void count(const std::string& name, const costmodel::OpEstimate& e, double back = -1) {
    kernels_ += static_cast<std::int64_t>(e.kernels.size());
    if (back < 0) {
      back = name == "attention"
                 ? costmodel::attention_backward_time(cx_.efficiency, e.time.value,
                                                      e.unequal_tail.value, e.backward_beside.value)
                 : backward_ratio(name) * e.time.value;
    }
    backward_ += back;
    kernel_slot(forward_kernels_, name) += e.time.value;
    kernel_slot(backward_kernels_, name) += back;
    if (name == "gemm") {
      gemm_time_ += e.time.value;
      ++gemms_;
    }
  }

  DeviceContext cx_;
  std::int64_t kernels_ = 0;
  std::int64_t plain_ = 0;
  double backward_ = 0;
  KernelTime forward_kernels_;
  KernelTime backward_kernels_;
  double gemm_time_ = 0;
  std::int64_t gemms_ = 0;
};

/// The attention heads and KV heads on one rank of a tensor-parallel group of `t`, and the
/// head dimension attention runs at (MLA: its no-RoPE and RoPE parts together).
struct LocalHeads {
  std::int64_t heads;
  std::int64_t kv;
  std::int64_t head_dim;
};

inline LocalHeads local_heads(const devices::ModelSpec& m, std::int64_t t) {
  return {std::max<std::int64_t>(1, m.heads / t), std::max<std::int64_t>(1, m.kv_heads / t),
          m.mla ? m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim : m.head_dim};
}

/// Whether a Megatron-LM training layer's unfused attention runs FusedScaleMaskSoftmax's
/// PyTorch path (megatron_torch_softmax): without the compiled kernel (Layout::te off: no
/// Apex or Transformer Engine) or where its shape rule refuses `heads` heads a rank.
bool megatron_torch_path(const DeviceContext& cx, const LayerShape& s, std::int64_t heads);

/// One attention call of a context-parallel layer: its dims (costmodel's attention shape),
/// whether causal, and how many such calls a rank runs in a pass.
struct CpAttentionTile {
  std::vector<std::int64_t> dims;
  bool causal = false;
  std::int64_t count = 1;
};

/// Context parallelism's attention as Transformer Engine's ring (context_parallel.py,
/// AttnFuncWithCPAndKVP2P) and PyTorch's load-balanced ring attention run it, causal: a rank
/// holds 2 of the sequence's 2 x cp chunks, t = s.seq tokens; step 0 attends them causally
/// (t x t), each of the cp - 1 later steps a non-causal tile of t queries by t / 2 keys (a rank
/// past the keys' owner: t / 2 queries by t keys, the same work).
std::vector<CpAttentionTile> cp_attention_tiles(const LayerShape& s,
                                                std::int64_t heads,
                                                std::int64_t kv,
                                                std::int64_t head_dim);

/// Bytes of the merges between those steps, per pass: forward, each step's partial output
/// rescaled and summed in fp32 (6 B an output element at step 0, 10 at each later one, 6 to
/// cast back; a rank past the keys' owner merges half its tokens, 3/4 of a step on average);
/// backward, each step's dq summed into the rank's and its dk and dv into the ring's buffer in
/// 16 bits (4 B an element at step 0, 6 at each later one).
PassTime cp_merge_bytes(const LayerShape& s,
                        std::int64_t heads,
                        std::int64_t kv,
                        std::int64_t head_dim);

/// Attention's forward as the framework runs it (fused, grouped decode, context-parallel tiles
/// and their merges, or unfused QK^T, softmax, dropout and PV): its seconds, its matrix FLOPs,
/// what causal tiles of unequal work add to the seconds (OpEstimate::unequal_tail), and the
/// seconds of the kernels its backward runs beside the multiple of the forward
/// (OpEstimate::backward_beside); costmodel::attention_backward_time takes both.
struct AttentionForward {
  double time = 0;
  double flops = 0;
  double unequal_tail = 0;
  double backward_beside = 0;
};

AttentionForward attention_time(
    Pricer& p, const LayerShape& s, std::int64_t heads, std::int64_t kv, std::int64_t head_dim);

/// An eager framework's host issues every kernel of a pass at `per_kernel` each (see the
/// definition); the pass takes the longer of its GPU time and that issue time.
void with_host_issue(devices::Seconds per_kernel,
                     std::int64_t kernels,
                     LayerCost& c,
                     double backward_wait = 0);

/// The same for a forward the host issues in `issue` seconds, and a backward in
/// `backward_issue` times that (an eager framework's autograd issues about twice the forward's
/// kernels, each as dear).
void with_issue_time(double issue,
                     LayerCost& c,
                     double backward_wait = 0,
                     double backward_issue = 2);

/// Megatron-LM's host issues a backward in about the time it issues the forward: its Python
/// runs the forward's modules, while autograd replays their backward in C++ with its gradient
/// hooks in Python (measured on one H200 without a profiler, bench/run_megatron.py's
/// host_forward_s and host_backward_s: 16.5 and 16.8 ms, 16.3 and 17.2 ms per micro-batch of
/// GPT-3 2.7B-wide layers; docs/step-model.md).
constexpr double kMegatronBackwardIssue = 1.0;

/// The tensor-parallel collectives of one layer's forward: their seconds and how many calls.
struct TpCollectives {
  double time = 0;
  std::int64_t calls = 0;
};

/// The backward's wait for collectives launched beside weight-gradient GEMMs.
double backward_wait(const DeviceContext& cx, const TpCollectives& tp, double mean_gemm);

/// Forward tensor-parallel collectives of `bytes` each: two all-reduces (inference, or no
/// sequence parallelism), else two all-gathers and two reduce-scatters.
TpCollectives tp_collectives(const DeviceContext& cx, double bytes, const LayerShape& s);

}  // namespace yirage::planner
