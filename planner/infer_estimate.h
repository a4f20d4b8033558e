// Inference plans on a homogeneous cluster: replicas of a tensor- and pipeline-parallel
// model, each with a batch; prefill (time to first token), decode (time per output token
// with the KV cache at the task's context) and serving (a request rate with prompt and
// output lengths, continuous batching). Memory per device (weights, KV cache, workspace) is
// checked first.
#pragma once

#include "costmodel/calibration.h"
#include "costmodel/collective.h"
#include "devices/cluster_spec.h"
#include "devices/task_spec.h"
#include "planner/workload/layer_cost.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace yirage::planner {

struct InferLayout {
  std::int64_t replicas = 1;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t batch = 1;   // sequences in flight per replica
  std::string str() const;  // "tp=8,pp=1,replicas=4,batch=16"
};

struct InferEstimate {
  InferLayout layout;
  devices::Mode mode = devices::Mode::kDecode;  // the task's: which of TTFT and TPOT exist
  double ttft = 0;           // seconds: prefill of one batch (serve: one prompt, plus queueing)
  double tpot = 0;           // seconds per output token (decode, serve)
  double tokens_per_s = 0;   // prefill: prompt tokens; decode and serve: output tokens
  double weights = 0;        // bytes per device
  double kv_cache = 0;       // bytes per device
  double workspace = 0;      // bytes per device
  double capacity = 0;       // usable bytes per device
  double prefill_share = 0;  // serve: the fraction of each replica's time spent in prefill
  // serve: the prompt tokens an iteration carries under chunked prefill; none: each prompt
  // prefilled alone (ServeSpec::prefill_chunk, capped at the prompt)
  std::optional<std::int64_t> prefill_chunk;
  double latency = 0;  // generate: seconds from the batch's prompts to its last token
  // serve: the largest request rate (whole cluster) the layout sustains within the objective,
  // at `capacity_batch` (this batch or a larger one that fits); tokens_per_s is that rate's
  // output tokens, offered_tokens_per_s the task's.
  double capacity_rate = 0;
  std::int64_t capacity_batch = 0;
  double offered_tokens_per_s = 0;
  bool meets_objective = true;  // the task's TTFT / TPOT / throughput limits
  double joules_per_token = 0;  // at TDP (an upper bound); 0 if unknown
  std::optional<double> usd_per_million_tokens;
  std::string binding;
  std::vector<CompoundChoice> compounds;  // fuse-or-not decisions of the steps' layers
};

struct InferRejected {
  InferLayout layout;
  std::string reason;
  double shortfall = 0;
};

struct InferContext {
  const devices::ClusterSpec& cluster;
  const devices::TaskSpec& task;
  const costmodel::CalibrationSet& calibrations;
  double memory_headroom = 0.05;
  // Serving: rank layouts by the requests they sustain and report that capacity (false: by
  // TPOT at the offered rate, tokens/s the offered load; node groups sharing a rate).
  bool serve_capacity = true;
};

std::variant<InferEstimate, InferRejected> estimate_inference(const InferContext& cx,
                                                              const InferLayout& l);

/// One forward pass of a replica, piece by piece, as the estimate prices it: every layer,
/// the output head and pp - 1 sends between stages, in turn (no micro-batching: latency).
struct ForwardPass {
  LayerCost dense;                // one dense layer (forward, exposed tp_comm)
  LayerCost moe;                  // one mixture-of-experts layer, if the model has them
  std::int64_t dense_layers = 0;  // the first layers are dense
  double head = 0;                // logits of the last position of each sequence
  double tp_bytes = 0;            // one tensor-parallel all-reduce (two per layer); 0: tp = 1
  costmodel::Algorithm tp_algorithm = costmodel::Algorithm::kRing;  // the estimate's pick
  costmodel::Protocol tp_protocol = costmodel::Protocol::kSimple;
  std::string tp_calibration;  // where the tp group's calibration came from, or empty
  double send = 0;             // seconds for one send between stages
  double send_bytes = 0;
  double total = 0;
};

/// The pass the step of the task's mode runs: the batch's prompts (prefill; its time is the
/// TTFT), or one token per sequence (decode, its time the TPOT; serve, its decode step at
/// the mean context, prompt + output / 2).
ForwardPass step_pass(const InferContext& cx, const InferLayout& l);

struct InferSearchResult {
  std::vector<InferEstimate> plans;  // best first: meeting the objective, then fastest
  std::vector<InferRejected> rejected;
  std::size_t candidates = 0;
};

InferSearchResult search_inference(const InferContext& cx);

/// Serving: raises `e`'s capacity to the best of its batch and the larger ones that fit
/// memory (doubling, up to 1,024), and prices its tokens, energy and money at that capacity.
void serve_capacity(const InferContext& cx, InferEstimate& e);

/// Parses an inference `--layout` ("tp=8,pp=1,replicas=2,batch=16"); replicas default to as
/// many as the cluster holds (0 here). Returns an error message or empty.
std::string parse_infer_layout(const std::string& text, InferLayout* out);

}  // namespace yirage::planner
