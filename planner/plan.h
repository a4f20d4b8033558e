// A training layout (data, tensor, pipeline parallelism, micro-batch, recomputation, ZeRO)
// and its estimate: step time with its breakdown, memory per device, throughput, MFU,
// energy and money. Plans are values; a plan that cannot run carries the reason.
#pragma once

#include "devices/support/units.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yirage::planner {

enum class Recompute { kNone, kSelective, kFull };

std::string recompute_name(Recompute r);

struct Layout {
  std::int64_t dp = 1;
  std::int64_t tp = 1;  // with sequence parallelism when > 1 (Megatron-style)
  std::int64_t pp = 1;
  std::int64_t micro_batch = 1;
  Recompute recompute = Recompute::kNone;
  int zero = 0;  // ZeRO stage 0-3 over the data-parallel group
  // Interleaved 1F1B (Narayanan et al. 2021, §2.2): each device holds `vpp` model chunks of
  // layers / (pp x vpp) layers; 1 is plain 1F1B.
  std::int64_t vpp = 1;
  // Expert parallelism (MoE): the routed experts split over `ep` ranks of the data-parallel
  // group, tokens dispatched to them and back by all-to-all.
  std::int64_t ep = 1;
  // Context parallelism (Megatron-LM's): every sequence split over `cp` ranks in 2 cp
  // load-balanced chunks; attention exchanges keys and values around the cp ring.
  std::int64_t cp = 1;
  // Sequence parallelism with tensor parallelism (Korthikanti et al. 2022): norms and
  // dropouts split over the tp ranks. On by default; `sp=off` keeps them whole.
  bool sp = true;
  // Optimizer offload (ZeRO-Offload, Ren et al. 2021): the optimizer state lives in host
  // memory and the host CPUs run the optimizer step; gradients go down and the updated
  // weights come back over each device's host link.
  bool offload = false;
  // The data-parallel gradient synchronisation overlaps the backward (Megatron-LM's
  // --overlap-grad-reduce, bucketed as its gradients become ready); off, it starts when the
  // last micro-batch's backward ends, as Megatron-LM's train_step ran it before that option
  // (2021-2022: the SC'21 and Korthikanti et al. runs). `dp_overlap=off` in the text form.
  bool dp_overlap = true;
  // Megatron-LM's gradient-accumulation fusion (since 2022, on with fp32 gradient
  // accumulation; it needs Apex or Transformer Engine): each weight-gradient GEMM adds into
  // the fp32 main gradient. Off, each micro-batch's gradients are added apart: into fp32 main
  // gradients for bf16, by autograd in 16 bits for fp16 (Megatron-LM of 2021,
  // Megatron-DeepSpeed's engine; megatron_gradient_accumulation). `grad_fusion=off` in the
  // text form.
  bool grad_fusion = true;
  // Megatron-LM's layers from Transformer Engine (`--transformer-impl transformer_engine`, its
  // default) or, off, Megatron-Core's own modules without Transformer Engine or Apex
  // (`--transformer-impl local`): RoPE, the activation and the residual adds as PyTorch's
  // separate kernels, PyTorch's norms, and torch's foreach AdamW in place of a fused Adam.
  // `te=off` in the text form.
  bool te = true;
  // Tensor-parallel communication overlapped with the GEMMs beside it (Transformer Engine's
  // userbuffers: Megatron-LM's --tp-comm-overlap, NeMo's ub_tp_comm_overlap; off by default,
  // as in Megatron-LM): needs tp > 1, sequence parallelism and Transformer Engine.
  // `tp_overlap=on` in the text form (workload/tp_overlap.h).
  bool tp_overlap = false;

  std::int64_t devices() const { return dp * tp * pp * cp; }

  /// "tp=8,pp=4,dp=32,mb=1,recompute=none,zero=1[,vpp=2][,ep=8][,cp=2][,sp=off]
  /// [,offload=on][,dp_overlap=off][,grad_fusion=off][,te=off][,tp_overlap=on]": the form
  /// `--layout` reads.
  std::string str() const;
  bool operator==(const Layout&) const = default;
};

/// Parses the `--layout` form; returns an error message or empty.
std::string parse_layout(const std::string& text, Layout* out);

/// The `key=value` items of a layout string in order; an error message or empty.
std::string layout_items(const std::string& text,
                         std::vector<std::pair<std::string, std::string>>* out);

/// `value` as a whole number of at least `min` for `key`; an error message or empty.
std::string layout_number(const std::string& key,
                          const std::string& value,
                          std::int64_t min,
                          std::int64_t* out);

/// Bytes per device of each kind of state (the first pipeline stage, which holds the most).
struct MemoryUse {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double capacity = 0;  // the device's memory, less the reserve
  double host = 0;      // host memory per device (optimizer offload), not in total()
  // What the framework's allocator holds beyond the live peak (eager PyTorch's cached blocks
  // and FSDP2's side-stream pools), not in total(): the allocator releases it before it runs
  // out, so fitting is judged on total(), and total() + reserve is what it shows reserved.
  double reserve = 0;

  double total() const { return weights + gradients + optimizer + activations; }
};

/// GPU seconds of a step's kernels by kind, as a profiler counts them (bench/run_plan.py's
/// kernel_*_s columns): matrix products, attention, the memory-bound kernels between them
/// (norms, elementwise, casts and copies), the loss's softmax over the vocabulary, and the
/// optimizer. Host waits and collectives are not kernels of these kinds.
struct KernelTime {
  double gemm = 0;
  double attention = 0;
  double memory = 0;
  double loss = 0;
  double optimizer = 0;

  /// Adds `scale` times `o`.
  void add(const KernelTime& o, double scale = 1) {
    gemm += scale * o.gemm;
    attention += scale * o.attention;
    memory += scale * o.memory;
    loss += scale * o.loss;
    optimizer += scale * o.optimizer;
  }

  double total() const { return gemm + attention + memory + loss + optimizer; }
};

/// Where a step's time goes (seconds); `total` = the sum of the parts.
struct StepBreakdown {
  double compute = 0;    // forward, backward and recomputation on the critical stage
  double tp_comm = 0;    // tensor-parallel collectives inside the layers (exposed)
  double pp_comm = 0;    // pipeline sends (exposed)
  double bubble = 0;     // pipeline fill and drain
  double dp_comm = 0;    // data-parallel and ZeRO collectives not hidden by backward
  double optimizer = 0;  // the optimizer step
  double total = 0;
  KernelTime kernels;  // the critical stage's kernels (GPU time, overlapped or not) per step
  // The host's time issuing the first stage's forward passes of a step, where the model
  // prices the host (Megatron-LM, eager PyTorch's tensor parallelism); 0 where it does not.
  double host_forward = 0;
  // The kernels as kernels above, for the first stage, which holds rank 0 (what a profiler on
  // rank 0 counts; the critical stage's without pipelining).
  KernelTime first_kernels = {};
};

/// One compound operation of a layer and the fuse-or-not decision for it on one device: what
/// `--emit-kernels` generates kernels for.
struct CompoundChoice {
  std::string op;                  // "rmsnorm_linear", as in costmodel::find_gpu_op
  std::vector<std::int64_t> dims;  // in the op's order ("MxKxN"), per device
  bool fused = false;
  double fused_s = 0;    // seconds fused; 0 when it cannot fuse (why)
  double unfused_s = 0;  // seconds as separate kernels
  std::string why;       // why it cannot fuse
};

struct PlanEstimate {
  Layout layout;
  std::int64_t micro_batches = 0;  // per pipeline per step
  StepBreakdown step;
  MemoryUse memory;
  double tokens_per_s = 0;
  double mfu = 0;          // model FLOPs (no recomputation) / peak
  double hfu = 0;          // hardware FLOPs (with recomputation) / peak
  devices::Joules energy;  // per step: every device at TDP (an upper bound); 0 if unknown
  std::optional<double> usd_per_step;  // when every device has a price
  // Which of the task's limits (max_step_time, max_devices, max_cost_per_hour,
  // min_throughput) the plan misses, "; "-separated; empty when it keeps them all.
  std::string objective_miss;
  std::vector<std::string> fusions;       // the fuse-or-not decisions of one layer
  std::vector<CompoundChoice> compounds;  // the same, with shapes and times
};

/// A candidate that cannot run, and why.
struct Rejected {
  Layout layout;
  std::string reason;
  double shortfall = 0;  // bytes over capacity, for "nothing fits" explanations
};

}  // namespace yirage::planner
