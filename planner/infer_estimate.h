// Inference plans on a homogeneous cluster: replicas of a tensor- and pipeline-parallel
// model, each with a batch; prefill (time to first token), decode (time per output token
// with the KV cache at the task's context) and serving (a request rate with prompt and
// output lengths, continuous batching). Memory per device (weights, KV cache, workspace) is
// checked first.
#pragma once

#include "costmodel/calibration.h"
#include "devices/cluster_spec.h"
#include "devices/task_spec.h"

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
  double ttft = 0;              // seconds: prefill of one batch (serve: one prompt, plus queueing)
  double tpot = 0;              // seconds per output token (decode, serve)
  double tokens_per_s = 0;      // prefill: prompt tokens; decode and serve: output tokens
  double weights = 0;           // bytes per device
  double kv_cache = 0;          // bytes per device
  double workspace = 0;         // bytes per device
  double capacity = 0;          // usable bytes per device
  double prefill_share = 0;     // serve: the fraction of each replica's time spent in prefill
  bool meets_objective = true;  // the task's TTFT / TPOT / throughput limits
  double joules_per_token = 0;  // at TDP (an upper bound); 0 if unknown
  std::optional<double> usd_per_million_tokens;
  std::string binding;
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
};

std::variant<InferEstimate, InferRejected> estimate_inference(const InferContext& cx,
                                                              const InferLayout& l);

struct InferSearchResult {
  std::vector<InferEstimate> plans;  // best first: meeting the objective, then fastest
  std::vector<InferRejected> rejected;
  std::size_t candidates = 0;
};

InferSearchResult search_inference(const InferContext& cx);

/// Parses an inference `--layout` ("tp=8,pp=1,replicas=2,batch=16"); replicas default to as
/// many as the cluster holds (0 here). Returns an error message or empty.
std::string parse_infer_layout(const std::string& text, InferLayout* out);

}  // namespace yirage::planner
