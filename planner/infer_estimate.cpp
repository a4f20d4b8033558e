#include "planner/infer_estimate.h"

#include "costmodel/collective.h"
#include "costmodel/validation.h"
#include "devices/support/check.h"
#include "planner/plan.h"
#include "planner/workload/infer_layer.h"
#include "planner/workload/layer_cost.h"
#include "planner/workload/model_size.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace yirage::planner {

std::string InferLayout::str() const {
  return "tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) +
         ",replicas=" + std::to_string(replicas) + ",batch=" + std::to_string(batch);
}

namespace {

using devices::ModelSpec;

double f(std::int64_t v) {
  return static_cast<double>(v);
}

const devices::NodeGroup& group(const InferContext& cx) {
  return cx.cluster.groups.front();
}

const devices::DeviceSpec& device(const InferContext& cx) {
  return cx.cluster.device(group(cx));
}

// KV-cache bytes per token and layer on one device: keys and values of the KV heads it
// holds (heads are split over TP; with fewer KV heads than TP ranks each rank keeps one);
// MLA keeps its compressed latent and rotary key, not split.
double kv_bytes_per_token_layer(const ModelSpec& m, std::int64_t tp, double bytes) {
  if (m.mla)
    return f(m.mla->kv_lora_rank + m.mla->qk_rope_head_dim) * bytes;
  std::int64_t heads = std::max<std::int64_t>(1, m.kv_heads / tp);
  return 2.0 * f(heads * m.head_dim) * bytes;
}

std::int64_t stage_layers(const ModelSpec& m, std::int64_t pp, std::int64_t stage) {
  return m.layers / pp + (stage < m.layers % pp ? 1 : 0);
}

// The tensor-parallel group of a replica, calibrated for calls launched as `launch`; none
// without tensor parallelism.
std::optional<costmodel::CommGroup> tp_group(const InferContext& cx,
                                             const InferLayout& l,
                                             costmodel::Launch launch) {
  if (l.tp < 2)
    return std::nullopt;
  costmodel::CommGroupResult g = costmodel::make_comm_group(cx.cluster, l.tp, l.tp);
  CHECK(g.group.has_value()) << g.reason;
  costmodel::apply_calibration(*g.group, cx.calibrations, launch);
  return g.group;
}

// One forward pass through every stage of one replica in turn (no micro-batching: latency).
ForwardPass forward_pass(const InferContext& cx,
                         const InferLayout& l,
                         std::int64_t batch,
                         std::int64_t q,
                         std::int64_t keys,
                         const DeviceContext& dcx) {
  const ModelSpec& m = cx.task.model;
  // Serving frameworks (vLLM, TensorRT-LLM, SGLang) replay decode steps from CUDA graphs:
  // each kernel pays the graph's launch gap, not a lone launch (data/calibration/).
  DeviceContext step = dcx;
  step.efficiency.in_graph = q == 1;
  if (q == 1)
    step.tp_group = tp_group(cx, l, costmodel::Launch::kGraph);  // its all-reduces too
  ForwardPass p;
  p.dense_layers = m.moe ? std::min<std::int64_t>(m.moe->dense_layers, m.layers) : m.layers;
  double b = devices::dtype_bytes(cx.task.communication_precision);
  p.tp_bytes = l.tp > 1 ? f(batch * q * m.hidden) * b : 0;
  if (p.tp_bytes > 0 && step.tp_group) {
    costmodel::CollectiveEstimate e = costmodel::estimate_collective(
        *step.tp_group, costmodel::Collective::kAllReduce, p.tp_bytes);
    p.tp_algorithm = e.best.algorithm;
    p.tp_protocol = e.best.protocol;
    p.tp_calibration = step.tp_group->calibration;
  }
  for (int kind = 0; kind < 2; ++kind) {
    std::int64_t count = kind == 0 ? p.dense_layers : m.layers - p.dense_layers;
    if (count == 0)
      continue;
    LayerShape s{
        batch, q,   l.tp, kind == 1, cx.task.attention == devices::AttentionKernel::kUnfused,
        keys,  true};
    s.grouped_decode = cx.task.decode_attention == devices::DecodeAttention::kGrouped;
    LayerCost c = layer_cost(m, s, step);
    (kind == 0 ? p.dense : p.moe) = c;
    p.total += f(count) * (c.forward + c.tp_comm);
  }
  // Logits of the last position of each sequence only.
  if (step.eager) {
    LayerCost ends =
        eager_inference_ends(m, LayerShape{batch, q, l.tp, false, false, 0, true}, step);
    p.head = ends.forward + ends.tp_comm;
  } else {
    p.head = head_cost(m, LayerShape{batch, 1, l.tp, false, false, 0, true}, step).forward;
  }
  p.total += p.head;
  if (l.pp > 1) {
    bool same_node = l.tp * l.pp <= group(cx).devices_per_node;
    costmodel::CommGroupResult g = costmodel::make_comm_group(cx.cluster, 2, same_node ? 2 : 1);
    CHECK(g.group.has_value()) << g.reason;
    p.send_bytes = f(batch * q * m.hidden) * b;
    p.send =
        costmodel::estimate_collective(*g.group, costmodel::Collective::kSendRecv, p.send_bytes)
            .latency()
            .value;
    p.total += f(l.pp - 1) * p.send;
  }
  return p;
}

DeviceContext infer_device_context(const InferContext& cx, const InferLayout& l) {
  const devices::TaskSpec& t = cx.task;
  DeviceContext dcx{device(cx), {}, t.activation_precision, std::nullopt};
  dcx.gemm_dtype = t.precision;
  dcx.kv_dtype = t.kv_cache_precision;
  dcx.comm_dtype = t.communication_precision;
  // Plain PyTorch runs every operation as a kernel of its own (bench/run_infer.py).
  dcx.eager = t.framework == devices::Framework::kPytorch;
  dcx.fuse = !dcx.eager;
  if (const costmodel::GpuEfficiency* e = cx.calibrations.find_gpu(device(cx).name))
    dcx.efficiency = costmodel::sustained(*e);  // an engine runs its steps back to back
  dcx.tp_group = tp_group(cx, l, costmodel::Launch::kEager);
  return dcx;
}

std::string check_shape(const InferContext& cx, const InferLayout& l) {
  const ModelSpec& m = cx.task.model;
  std::int64_t per_node = group(cx).devices_per_node;
  if (l.replicas * l.tp * l.pp != cx.cluster.total_devices())
    return "does not use the cluster";
  if (l.tp > per_node || per_node % l.tp != 0)
    return "tensor parallelism does not divide a node";
  if (m.heads % l.tp != 0)
    return "tensor parallelism does not divide the heads";
  if (l.pp > m.layers)
    return "more stages than layers";
  return {};
}

// Context per sequence that the KV cache must hold.
std::int64_t context(const devices::TaskSpec& t) {
  if (t.mode == devices::Mode::kGenerate)
    return t.sequence_length + t.output_length;
  return t.mode == devices::Mode::kServe ? t.serve->prompt_length + t.serve->output_length
                                         : t.sequence_length;
}

}  // namespace

namespace {

struct Memory {
  double weights = 0;
  double kv = 0;
  double workspace = 0;
};

Memory inference_memory(const InferContext& cx, const InferLayout& l) {
  const ModelSpec& m = cx.task.model;
  double b = devices::dtype_bytes(cx.task.precision);
  double kv_b = devices::dtype_bytes(cx.task.kv_cache_precision);
  double act_b = devices::dtype_bytes(cx.task.activation_precision);
  ParameterCount p = count_parameters(m);
  double layer = (p.total - p.embedding - p.head) / f(m.layers);
  double head = m.tied_embeddings ? p.embedding : p.head;
  Memory mem;
  for (std::int64_t stage : {std::int64_t{0}, l.pp - 1}) {
    double params = f(stage_layers(m, l.pp, stage)) * layer + (stage == 0 ? p.embedding : 0) +
                    (stage == l.pp - 1 ? head : 0);
    mem.weights = std::max(mem.weights, params / f(l.tp) * b);
  }
  mem.kv = f(l.batch * context(cx.task) * stage_layers(m, l.pp, 0)) *
           kv_bytes_per_token_layer(m, l.tp, kv_b);
  // The activations of one prefill in flight: the layer's input and its widest output.
  std::int64_t tokens = cx.task.mode == devices::Mode::kServe ? cx.task.serve->prompt_length
                        : cx.task.mode == devices::Mode::kDecode
                            ? l.batch
                            : l.batch * cx.task.sequence_length;
  std::int64_t ffn = m.moe ? m.moe->expert_ffn * (m.moe->top_k + m.moe->shared_experts) : m.ffn;
  mem.workspace = f(tokens) * (2 * f(m.hidden) + 2 * f(ffn) / f(l.tp)) * act_b;
  return mem;
}

// The fuse-or-not decisions of a pass's layers, added to `out` once per operation and shape.
void add_compounds(const ForwardPass& p, std::vector<CompoundChoice>& out) {
  for (const LayerCost* c : {&p.dense, &p.moe})
    for (const CompoundChoice& k : c->compounds) {
      bool seen = std::any_of(out.begin(), out.end(), [&](const CompoundChoice& o) {
        return o.op == k.op && o.dims == k.dims;
      });
      if (!seen)
        out.push_back(k);
    }
}

// The attention cores of a pass's layers, seconds.
double attention_of(const ForwardPass& p, const ModelSpec& m) {
  return f(p.dense_layers) * p.dense.attention_forward +
         f(m.layers - p.dense_layers) * p.moe.attention_forward;
}

// Chunked prefill: an iteration runs every running sequence's next token and, while prompts
// wait, a chunk of C prompt tokens with them. A mixed iteration (T_m) is priced as one pass:
// the GEMMs and the rest over B + C tokens, the decodes' attention over the mean context, the
// chunk's over the prompt's mean prefix, the logits of the B sequences; a decode-only one
// (T_d) as the decode step. At rate r a fraction of iterations carries chunks, so the mean
// iteration, which is the TPOT, is T_d / (1 - r (P / C) (T_m - T_d)). A prompt's first token
// comes with its last chunk, ceil(P / C) mixed iterations after it starts, and prompts wait
// their turn for chunks (M/D/1: service (P / C) T_m, utilisation u = r (P / C) T_m).
void serve_chunked(const InferContext& cx,
                   const InferLayout& l,
                   const DeviceContext& dcx,
                   InferEstimate& e,
                   std::string* why) {
  const devices::ServeSpec& s = *cx.task.serve;
  const ModelSpec& m = cx.task.model;
  std::int64_t chunk = std::min(*s.prefill_chunk, s.prompt_length);
  ForwardPass mixed = forward_pass(cx, l, 1, l.batch + chunk, l.batch + chunk, dcx);
  ForwardPass decode = forward_pass(cx, l, l.batch, 1, s.prompt_length + s.output_length / 2, dcx);
  ForwardPass prompt = forward_pass(cx, l, 1, chunk, (s.prompt_length + chunk) / 2, dcx);
  add_compounds(mixed, e.compounds);
  add_compounds(decode, e.compounds);
  double t_m = mixed.total - mixed.head - attention_of(mixed, m) + decode.head +
               attention_of(decode, m) + attention_of(prompt, m);
  double t_d = decode.total;
  double chunks = f(s.prompt_length) / f(chunk);
  double extra = chunks * std::max(0.0, t_m - t_d);  // a request's chunks' cost to decodes
  double rate = s.request_rate.value / f(l.replicas);
  double u = rate * chunks * t_m;
  if (u >= 1) {
    *why = "prompts need " + devices::format_number(100 * u, 3) + "% of a replica's time in " +
           std::to_string(chunk) + "-token chunks";
    return;
  }
  double mean = t_d / (1 - rate * extra);
  double batch_rate = f(l.batch) / (f(s.output_length) * t_d + f(l.batch) * extra);
  if (batch_rate < rate) {
    *why = "a batch of " + std::to_string(l.batch) + " serves " +
           devices::format_number(batch_rate, 3) + " requests/s per replica, " +
           devices::format_number(rate, 3) + " arrive";
    return;
  }
  double first = std::ceil(chunks) * t_m;
  e.ttft = first + u / (2 * (1 - u)) * chunks * t_m;
  e.tpot = mean;
  e.prefill_share = u;
  e.prefill_chunk = chunk;
  e.offered_tokens_per_s = s.request_rate.value * f(s.output_length);
  e.tokens_per_s = e.offered_tokens_per_s;
  // The largest rate per replica: the batch keeps up, and the TTFT (u <= 2k / (1 + 2k), k
  // its slack in prompt service times) and the TPOT stay within the objective.
  double x = 1;
  const devices::Objective& o = cx.task.objective;
  if (o.ttft) {
    double k = (o.ttft->value - first) / (chunks * t_m);
    x = k > 0 ? 2 * k / (1 + 2 * k) : 0.0;
  }
  double r = std::min(batch_rate, x / (chunks * t_m));
  if (o.tpot) {
    double slack = 1 - t_d / o.tpot->value;
    r = slack <= 0 ? 0 : extra > 0 ? std::min(r, slack / extra) : r;
  }
  e.capacity_rate = r * f(l.replicas);
  e.capacity_batch = l.batch;
}

void serve(const InferContext& cx,
           const InferLayout& l,
           const DeviceContext& dcx,
           InferEstimate& e,
           std::string* why) {
  const devices::ServeSpec& s = *cx.task.serve;
  if (s.prefill_chunk) {
    serve_chunked(cx, l, dcx, e, why);
    return;
  }
  double rate = s.request_rate.value / f(l.replicas);
  ForwardPass first = forward_pass(cx, l, 1, s.prompt_length, s.prompt_length, dcx);
  double prefill = first.total;
  double share = rate * prefill;
  if (share >= 1) {
    *why = "prefill alone needs " + devices::format_number(100 * share, 3) + "% of a replica";
    return;
  }
  ForwardPass next = forward_pass(cx, l, l.batch, 1, s.prompt_length + s.output_length / 2, dcx);
  double step = next.total;
  add_compounds(first, e.compounds);
  add_compounds(next, e.compounds);
  double capacity = f(l.batch) * (1 - share) / (f(s.output_length) * step);
  if (capacity < rate) {
    *why = "a batch of " + std::to_string(l.batch) + " serves " +
           devices::format_number(capacity, 3) + " requests/s per replica, " +
           devices::format_number(rate, 3) + " arrive";
    return;
  }
  // Prefill as an M/D/1 queue: mean wait share / (2 (1 - share)) of a prefill.
  e.ttft = prefill * (1 + share / (2 * (1 - share)));
  e.tpot = step / (1 - share);
  e.prefill_share = share;
  e.offered_tokens_per_s = s.request_rate.value * f(s.output_length);
  e.tokens_per_s = e.offered_tokens_per_s;
  // The largest rate per replica: the batch keeps up (r (O step + B prefill) <= B), and at
  // prefill share x = r prefill the TTFT (x <= 2k / (1 + 2k), k = TTFT / prefill - 1) and
  // the TPOT (x <= 1 - step / TPOT) stay within the objective.
  double x = f(l.batch) * prefill / (f(s.output_length) * step + f(l.batch) * prefill);
  const devices::Objective& o = cx.task.objective;
  if (o.ttft) {
    double k = o.ttft->value / prefill - 1;
    x = std::min(x, k > 0 ? 2 * k / (1 + 2 * k) : 0.0);
  }
  if (o.tpot)
    x = std::min(x, std::max(0.0, 1 - step / o.tpot->value));
  e.capacity_rate = x / prefill * f(l.replicas);
  e.capacity_batch = l.batch;
}

// Joules and dollars per output token at `e.tokens_per_s`, every device at TDP.
void price_tokens(const InferContext& cx, InferEstimate& e) {
  const devices::DeviceSpec& d = device(cx);
  double n = f(cx.cluster.total_devices());
  e.joules_per_token = d.tdp && e.tokens_per_s > 0 ? d.tdp->value.value * n / e.tokens_per_s : 0;
  e.usd_per_million_tokens.reset();
  std::optional<double> usd = cx.cluster.usd_per_hour();
  if (usd && e.tokens_per_s > 0)
    e.usd_per_million_tokens = *usd / 3600 / e.tokens_per_s * 1e6;
}

// A static batch: the prompts prefilled together (the first output token), then each further
// token decoded by a step over a context one longer than the last. The steps' sum by
// Simpson's rule over their contexts (a step's time is close to affine in its context).
void generate(const InferContext& cx,
              const InferLayout& l,
              const DeviceContext& dcx,
              InferEstimate& e) {
  const devices::TaskSpec& t = cx.task;
  ForwardPass prompt = forward_pass(cx, l, l.batch, t.sequence_length, t.sequence_length, dcx);
  add_compounds(prompt, e.compounds);
  e.ttft = prompt.total;
  std::int64_t steps = t.output_length - 1;
  double decode = 0;
  if (steps > 0) {
    auto step = [&](std::int64_t keys) {
      ForwardPass p = forward_pass(cx, l, l.batch, 1, keys, dcx);
      add_compounds(p, e.compounds);
      return p.total;
    };
    std::int64_t first = t.sequence_length + 1;
    std::int64_t last = t.sequence_length + steps;
    decode = f(steps) * (step(first) + 4 * step((first + last) / 2) + step(last)) / 6;
    e.tpot = decode / f(steps);
  }
  e.latency = e.ttft + decode;
  e.tokens_per_s = f(std::min(l.replicas * l.batch, t.global_batch) * t.output_length) / e.latency;
}

}  // namespace

std::variant<InferEstimate, InferRejected> estimate_inference(const InferContext& cx,
                                                              const InferLayout& l) {
  if (std::string why = check_shape(cx, l); !why.empty())
    return InferRejected{l, why, 0};
  const devices::DeviceSpec& d = device(cx);
  Memory mem = inference_memory(cx, l);
  double capacity = d.memory_capacity.value.value * (1 - cx.memory_headroom);
  double total = mem.weights + mem.kv + mem.workspace;
  if (total > capacity) {
    return InferRejected{l,
                         "needs " + devices::format_quantity(total, devices::Dim::kBytes) +
                             " per device, more than the " +
                             devices::format_quantity(capacity, devices::Dim::kBytes) + " usable",
                         total - capacity};
  }
  DeviceContext dcx = infer_device_context(cx, l);
  InferEstimate e;
  e.layout = l;
  e.mode = cx.task.mode;
  e.weights = mem.weights;
  e.kv_cache = mem.kv;
  e.workspace = mem.workspace;
  e.capacity = capacity;
  const devices::TaskSpec& t = cx.task;
  std::string why;
  if (t.mode == devices::Mode::kPrefill) {
    ForwardPass p = forward_pass(cx, l, l.batch, t.sequence_length, t.sequence_length, dcx);
    e.ttft = p.total;
    add_compounds(p, e.compounds);
    e.tokens_per_s = f(std::min(l.replicas * l.batch, t.global_batch) * t.sequence_length) / e.ttft;
  } else if (t.mode == devices::Mode::kDecode) {
    ForwardPass p = forward_pass(cx, l, l.batch, 1, t.sequence_length, dcx);
    e.tpot = p.total;
    add_compounds(p, e.compounds);
    e.tokens_per_s = f(std::min(l.replicas * l.batch, t.global_batch)) / e.tpot;
  } else if (t.mode == devices::Mode::kGenerate) {
    generate(cx, l, dcx, e);
  } else {
    serve(cx, l, dcx, e, &why);
    if (!why.empty())
      return InferRejected{l, why, 0};
  }
  const devices::Objective& o = t.objective;
  e.meets_objective = (!o.ttft || e.ttft <= o.ttft->value || t.mode == devices::Mode::kDecode) &&
                      (!o.tpot || e.tpot <= o.tpot->value || t.mode == devices::Mode::kPrefill) &&
                      (!o.min_throughput || e.tokens_per_s >= o.min_throughput->value);
  // Every layout runs the whole cluster: its size and price per hour are the plan's.
  std::optional<double> usd = cx.cluster.usd_per_hour();
  if ((o.max_devices && cx.cluster.total_devices() > *o.max_devices) ||
      (o.max_cost_per_hour && usd && *usd > o.max_cost_per_hour->value))
    e.meets_objective = false;
  price_tokens(cx, e);
  e.binding = mem.kv > mem.weights ? "the KV cache dominates memory" : "weights dominate memory";
  return e;
}

void serve_capacity(const InferContext& cx, InferEstimate& e) {
  if (cx.task.mode != devices::Mode::kServe)
    return;
  const InferLayout& l = e.layout;
  for (std::int64_t batch = l.batch * 2; batch <= 1024; batch *= 2) {
    auto x = estimate_inference(cx, InferLayout{l.replicas, l.tp, l.pp, batch});
    if (auto* p = std::get_if<InferEstimate>(&x)) {
      if (p->capacity_rate > e.capacity_rate) {
        e.capacity_rate = p->capacity_rate;
        e.capacity_batch = batch;
      }
    } else if (std::get<InferRejected>(x).shortfall > 0) {
      break;  // larger batches need more memory
    }
  }
  e.tokens_per_s = e.capacity_rate * f(cx.task.serve->output_length);
  price_tokens(cx, e);
}

ForwardPass step_pass(const InferContext& cx, const InferLayout& l) {
  const devices::TaskSpec& t = cx.task;
  DeviceContext dcx = infer_device_context(cx, l);
  if (t.mode == devices::Mode::kPrefill)
    return forward_pass(cx, l, l.batch, t.sequence_length, t.sequence_length, dcx);
  std::int64_t keys = t.mode == devices::Mode::kGenerate ? t.sequence_length + t.output_length / 2
                      : t.mode == devices::Mode::kServe
                          ? t.serve->prompt_length + t.serve->output_length / 2
                          : t.sequence_length;
  return forward_pass(cx, l, l.batch, 1, keys, dcx);
}

InferSearchResult search_inference(const InferContext& cx) {
  InferSearchResult r;
  std::int64_t n = cx.cluster.total_devices();
  std::int64_t per_node = group(cx).devices_per_node;
  bool serving = cx.task.mode == devices::Mode::kServe;
  for (std::int64_t tp = 1; tp <= per_node; tp *= 2) {
    for (std::int64_t pp = 1; pp <= std::min(n / tp, cx.task.model.layers); ++pp) {
      if (n % tp != 0 || (n / tp) % pp != 0)
        continue;
      std::int64_t replicas = n / (tp * pp);
      std::int64_t fixed = (cx.task.global_batch + replicas - 1) / replicas;
      // Serving takes the smallest batch that keeps up with the request rate.
      for (std::int64_t batch = serving ? 1 : fixed; batch <= (serving ? 1024 : fixed);
           batch *= 2) {
        ++r.candidates;
        auto e = estimate_inference(cx, InferLayout{replicas, tp, pp, batch});
        if (auto* p = std::get_if<InferEstimate>(&e)) {
          if (serving && cx.serve_capacity)
            serve_capacity(cx, *p);
          r.plans.push_back(*p);
          break;
        }
        r.rejected.push_back(std::get<InferRejected>(e));
        if (std::get<InferRejected>(e).shortfall > 0)
          break;  // larger batches need more memory
      }
    }
  }
  // Prefill by TTFT, a static batch by its end-to-end latency (the same order as its
  // tokens/s), serving by the most requests sustained within the objective, decode by TPOT.
  // To minimise cost or energy, by tokens/s: every layout runs every device of the cluster,
  // so its dollars and joules per token go as one over it.
  auto key = [&](const InferEstimate& e) {
    if (cx.task.objective.minimize != devices::Minimize::kTime)
      return -e.tokens_per_s;
    switch (cx.task.mode) {
      case devices::Mode::kPrefill:
        return e.ttft;
      case devices::Mode::kGenerate:
        return e.latency;
      case devices::Mode::kServe:
        return cx.serve_capacity ? -e.capacity_rate : e.tpot;
      default:
        return e.tpot;
    }
  };
  std::sort(r.plans.begin(), r.plans.end(), [&](const InferEstimate& a, const InferEstimate& b) {
    if (a.meets_objective != b.meets_objective)
      return a.meets_objective;
    double ka = key(a);
    double kb = key(b);
    if (ka != kb)
      return ka < kb;
    return a.layout.str() < b.layout.str();
  });
  return r;
}

std::string parse_infer_layout(const std::string& text, InferLayout* out) {
  InferLayout l;
  l.replicas = 0;
  std::vector<std::pair<std::string, std::string>> items;
  if (std::string err = layout_items(text, &items); !err.empty())
    return err;
  std::map<std::string, std::int64_t*> keys = {
      {"tp", &l.tp}, {"pp", &l.pp}, {"replicas", &l.replicas}, {"batch", &l.batch}};
  for (const auto& [key, value] : items) {
    if (keys.count(key) == 0)
      return "unknown inference layout key '" + key + "' (keys: tp, pp, replicas, batch)";
    if (std::string err = layout_number(key, value, 1, keys[key]); !err.empty())
      return err;
  }
  *out = l;
  return {};
}

}  // namespace yirage::planner
