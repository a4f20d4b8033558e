// A task: a model and what to do with it (train, prefill, decode, serve), at what size and
// precision, and what to optimise under which constraints. The format is documented in
// data/tasks/README.md.
#pragma once

#include "devices/device_spec.h"
#include "devices/model_spec.h"
#include "devices/support/diagnostics.h"
#include "devices/support/units.h"

#include <cstdint>
#include <optional>
#include <string>

namespace yirage::devices {

/// generate: a static batch, each sequence's prompt prefilled together and then its output
/// decoded token by token (the end-to-end latency and tokens/s that published tables give).
enum class Mode { kTrain, kPrefill, kDecode, kServe, kGenerate };
enum class Optimizer { kAdam, kSgd };
enum class Minimize { kTime, kCost, kEnergy };
/// How the framework runs attention: one fused kernel (FlashAttention), or as separate
/// kernels with the s x s scores in memory (QK^T, softmax, dropout, PV), as older stacks do.
enum class AttentionKernel { kFlash, kUnfused };
/// How decode attention reads the KV cache: split over every compute unit and the partial
/// results combined (flash-decoding: FlashAttention's split-KV path, FlashInfer, vLLM), or
/// one thread block per sequence and KV head with that head's group of queries as rows (a
/// plain SDPA call per KV head, as bench/run_infer.py's grouped decode does).
enum class DecodeAttention { kSplit, kGrouped };
/// What runs a training step: Megatron-LM's fused kernels (bf16 weights, fp32 gradients
/// accumulated by the weight-gradient GEMM, fused norms, RoPE and SwiGLU where they pay), or
/// eager PyTorch under autocast over fp32 weights (torchtitan without torch.compile, and
/// bench/run_plan.py): every norm, RoPE, activation, cast and gradient accumulation a kernel
/// of its own, the loss in fp32 (planner/workload/eager_traffic.h).
enum class Framework { kMegatron, kPytorch };

std::string mode_name(Mode m);
std::string optimizer_name(Optimizer o);
std::string minimize_name(Minimize m);

/// Serving: requests arrive at a rate, each with a prompt and an output length.
struct ServeSpec {
  PerSec request_rate;
  std::int64_t prompt_length = 0;  // tokens
  std::int64_t output_length = 0;  // tokens
  // Chunked prefill (vLLM's, Sarathi-Serve's): each engine iteration runs every running
  // sequence's next token and up to this many prompt tokens. None: each prompt prefilled
  // alone, ahead of the decodes.
  std::optional<std::int64_t> prefill_chunk;

  bool operator==(const ServeSpec&) const = default;
};

/// What to minimise, and the limits a plan must respect.
struct Objective {
  Minimize minimize = Minimize::kTime;
  std::optional<std::int64_t> max_devices;
  std::optional<Seconds> max_step_time;
  std::optional<Seconds> ttft;           // time to first token (serve)
  std::optional<Seconds> tpot;           // time per output token (decode, serve)
  std::optional<PerSec> min_throughput;  // tokens per second
  std::optional<UsdPerHour> max_cost_per_hour;

  bool operator==(const Objective&) const = default;
};

struct TaskSpec {
  std::string name;
  ModelSpec model;
  std::string model_preset;  // the preset's name, or empty for an inline architecture
  Mode mode = Mode::kTrain;
  // `precision`: the weights and the GEMMs' inputs. Below 16 bits (fp8, int8) with wider
  // activations, each GEMM's input is quantised per token on entry (W8A8), as engines run it.
  DType precision = DType::kBf16;
  DType activation_precision = DType::kBf16;     // between GEMMs: norms, residuals, attention
  DType kv_cache_precision = DType::kBf16;       // the KV cache's keys and values
  DType communication_precision = DType::kBf16;  // tensor-parallel and pipeline traffic
  std::int64_t sequence_length = 0;              // tokens per sequence; the context for decode
  std::int64_t global_batch = 0;   // sequences per step (train) or in flight (inference)
  std::int64_t output_length = 0;  // generate: tokens each sequence decodes after its prompt
  Optimizer optimizer = Optimizer::kAdam;
  AttentionKernel attention = AttentionKernel::kFlash;
  DecodeAttention decode_attention = DecodeAttention::kSplit;
  Framework framework = Framework::kMegatron;
  std::optional<double> training_tokens;  // tokens of the whole run (train)
  std::optional<ServeSpec> serve;
  Objective objective;
  SourceLoc loc;            // the task's top-level mapping
  SourceLoc model_loc;      // the value of `model:`
  SourceLoc precision_loc;  // the value of `precision:` (the task's position if defaulted)
  SourceLoc minimize_loc;   // the value of `objective: minimize:` (the task's if defaulted)
  SourceLoc max_cost_loc;   // the value of `objective: max_cost_per_hour:`, if given

  bool operator==(const TaskSpec&) const = default;
};

/// "bf16", or per tensor kind where they differ: "weights fp8, activations bf16, KV cache
/// bf16, communication bf16".
std::string precision_text(const TaskSpec& t);

}  // namespace yirage::devices
