// Sizes of a transformer model: parameter counts (total and per token), bytes of weights,
// and FLOPs per token. Pure functions of the model's architecture.
#pragma once

#include "devices/device_spec.h"
#include "devices/model_spec.h"

#include <cstdint>

namespace yirage::planner {

/// Parameter counts, broken down so that the conventions of published figures (with or
/// without the embedding table) can be reproduced.
struct ParameterCount {
  double total = 0;       // every parameter
  double active = 0;      // parameters one token uses: all of a dense model; for MoE the
                          // shared parts plus top_k routed experts per MoE layer
  double embedding = 0;   // the input embedding table (and learned positions)
  double head = 0;        // the output projection (0 when tied to the embedding)
  double attention = 0;   // all layers' attention projections and their norms
  double ffn_total = 0;   // all layers' FFNs (every expert) and routers
  double ffn_active = 0;  // the part of `ffn_total` one token uses
  double norms = 0;       // the per-layer and final norms
};

/// Counts parameters from the architecture. Sources: Llama and Llama 2/3 papers (§2),
/// Mixtral (arXiv 2401.04088 §2), DeepSeek-V3 (arXiv 2412.19437 §2.1, MLA eq. 1-11),
/// GPT-3 (Brown et al. 2020, Table 2.1).
ParameterCount count_parameters(const devices::ModelSpec& m);

/// Width of the attention output (the output projection's input): heads x head dim (MLA:
/// its value head dim).
std::int64_t attention_out_width(const devices::ModelSpec& m);

/// Output width of the projections before attention (Q, K, V; for MLA the compressed
/// projections, priced by their parameter count).
std::int64_t qkv_width(const devices::ModelSpec& m);

/// Bytes of the weights at precision `t`.
double weight_bytes(const devices::ModelSpec& m, devices::DType t);

/// Parameters that take part in matrix multiplications for one token: `active` less the
/// input embedding (a lookup) and the norms; the output head counts even when tied.
double matmul_parameters(const devices::ModelSpec& m);

/// Forward FLOPs per token at sequence length `seq`: 2 per matmul parameter, plus the
/// attention scores and the weighted sum of values, 2·layers·(seq/2)·heads·(d_qk + d_v):
/// under the causal mask a token attends to half the sequence on average. (PaLM's MFU,
/// Chowdhery et al. 2022, App. B, counts the full sequence; at 128K tokens that would
/// count about 1.6 times the work a Llama 3 70B step needs, and report MFU above 85%.)
double forward_flops_per_token(const devices::ModelSpec& m, std::int64_t seq);

/// Training FLOPs per token: forward plus backward (twice the forward), no recomputation.
double training_flops_per_token(const devices::ModelSpec& m, std::int64_t seq);

}  // namespace yirage::planner
