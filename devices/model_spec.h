// The architecture of a transformer model: a preset from data/models/ or written out in a
// task file. Dense (MHA, GQA, MQA), mixture-of-experts with top-k routing and shared
// experts, and multi-head latent attention (MLA).
#pragma once

#include "devices/support/diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>

namespace yirage::devices {

enum class FfnKind { kGated, kPlain };  // gated: SwiGLU/GeGLU, three matrices
enum class NormKind { kRmsNorm, kLayerNorm };
enum class BiasKind { kNone, kQkv, kAll };  // which linear layers carry a bias
enum class PositionKind { kRope, kLearned };

/// Mixture of experts (absent for dense models).
struct MoeSpec {
  std::int64_t experts = 0;         // routed experts per MoE layer
  std::int64_t top_k = 0;           // routed experts per token
  std::int64_t shared_experts = 0;  // always-active experts
  std::int64_t expert_ffn = 0;      // FFN width of one expert
  std::int64_t dense_layers = 0;    // the first layers use a dense FFN of width `ffn`

  bool operator==(const MoeSpec&) const = default;
};

/// Multi-head latent attention (DeepSeek-V2/V3).
struct MlaSpec {
  std::int64_t q_lora_rank = 0;  // 0: queries are projected directly
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;

  bool operator==(const MlaSpec&) const = default;
};

/// A figure the model's authors published, to check our counts against.
struct PublishedCount {
  double total = 0;                        // parameters
  double active = 0;                       // parameters per token (MoE), 0 if not published
  bool active_excludes_embedding = false;  // the published active count leaves out the
                                           // input embedding table
  std::string source;

  bool operator==(const PublishedCount&) const = default;
};

struct ModelSpec {
  std::string name;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t ffn = 0;  // dense FFN width (0 when every layer is MoE)
  FfnKind ffn_kind = FfnKind::kGated;
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  NormKind norm = NormKind::kRmsNorm;
  BiasKind bias = BiasKind::kNone;
  PositionKind position = PositionKind::kRope;
  std::int64_t max_positions = 0;  // context length the model was trained for
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  std::optional<PublishedCount> published;
  SourceLoc loc;

  bool operator==(const ModelSpec&) const = default;
};

}  // namespace yirage::devices
