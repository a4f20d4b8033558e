#include "planner/workload/model_size.h"

namespace yirage::planner {
namespace {

using devices::BiasKind;
using devices::FfnKind;
using devices::ModelSpec;
using devices::NormKind;

double norm_params(const ModelSpec& m, double width) {
  return m.norm == NormKind::kLayerNorm ? 2 * width : width;  // LayerNorm has a bias
}

// One layer's attention projections (and MLA's inner norms).
double attention_params(const ModelSpec& m) {
  double h = static_cast<double>(m.hidden);
  double heads = static_cast<double>(m.heads);
  if (m.mla) {
    const devices::MlaSpec& a = *m.mla;
    double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
    double kv_rank = static_cast<double>(a.kv_lora_rank);
    double q = a.q_lora_rank > 0
                   ? h * a.q_lora_rank + norm_params(m, a.q_lora_rank) + a.q_lora_rank * heads * qk
                   : h * heads * qk;
    double kv = h * (kv_rank + a.qk_rope_head_dim) + norm_params(m, kv_rank) +
                kv_rank * heads * (a.qk_nope_head_dim + a.v_head_dim);
    double o = heads * a.v_head_dim * h;
    return q + kv + o;
  }
  double q_width = heads * m.head_dim;
  double kv_width = static_cast<double>(m.kv_heads * m.head_dim);
  double weights = h * q_width + 2 * h * kv_width + q_width * h;
  double bias = 0;
  if (m.bias != BiasKind::kNone)
    bias += q_width + 2 * kv_width;
  if (m.bias == BiasKind::kAll)
    bias += h;
  return weights + bias;
}

// One FFN (or one expert) of width `width`.
double ffn_params(const ModelSpec& m, double width) {
  double h = static_cast<double>(m.hidden);
  double matrices = m.ffn_kind == FfnKind::kGated ? 3 : 2;
  double bias = m.bias == BiasKind::kAll ? width * (matrices - 1) + h : 0;
  return matrices * h * width + bias;
}

double attention_dims(const ModelSpec& m) {
  if (m.mla) {
    return static_cast<double>(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim +
                               m.mla->v_head_dim);
  }
  return 2.0 * static_cast<double>(m.head_dim);
}

}  // namespace

ParameterCount count_parameters(const ModelSpec& m) {
  ParameterCount c;
  double h = static_cast<double>(m.hidden);
  double layers = static_cast<double>(m.layers);
  c.embedding = static_cast<double>(m.vocab) * h;
  if (m.position == devices::PositionKind::kLearned)
    c.embedding += m.max_positions * h;
  c.head = m.tied_embeddings ? 0 : static_cast<double>(m.vocab) * h;
  c.attention = layers * attention_params(m);
  c.norms = layers * 2 * norm_params(m, h) + norm_params(m, h);
  double dense_layers = m.moe ? static_cast<double>(m.moe->dense_layers) : layers;
  c.ffn_total = c.ffn_active = dense_layers * ffn_params(m, static_cast<double>(m.ffn));
  if (m.moe) {
    const devices::MoeSpec& e = *m.moe;
    double moe_layers = layers - dense_layers;
    double expert = ffn_params(m, static_cast<double>(e.expert_ffn));
    double router = h * static_cast<double>(e.experts);
    c.ffn_total +=
        moe_layers * (static_cast<double>(e.experts + e.shared_experts) * expert + router);
    c.ffn_active +=
        moe_layers * (static_cast<double>(e.top_k + e.shared_experts) * expert + router);
  }
  double shared = c.embedding + c.head + c.attention + c.norms;
  c.total = shared + c.ffn_total;
  c.active = shared + c.ffn_active;
  return c;
}

double weight_bytes(const ModelSpec& m, devices::DType t) {
  return count_parameters(m).total * devices::dtype_bytes(t);
}

double matmul_parameters(const ModelSpec& m) {
  ParameterCount c = count_parameters(m);
  double head = static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
  return c.active - c.embedding - c.norms - c.head + head;
}

double forward_flops_per_token(const ModelSpec& m, std::int64_t seq) {
  double attention = 2.0 * static_cast<double>(m.layers) * static_cast<double>(seq) / 2 *
                     static_cast<double>(m.heads) * attention_dims(m);
  return 2.0 * matmul_parameters(m) + attention;
}

double training_flops_per_token(const ModelSpec& m, std::int64_t seq) {
  return 3.0 * forward_flops_per_token(m, seq);
}

std::int64_t attention_out_width(const devices::ModelSpec& m) {
  return m.mla ? m.heads * m.mla->v_head_dim : m.heads * m.head_dim;
}

std::int64_t qkv_width(const devices::ModelSpec& m) {
  if (!m.mla)
    return (m.heads + 2 * m.kv_heads) * m.head_dim;
  ParameterCount p = count_parameters(m);
  double per_layer = p.attention / static_cast<double>(m.layers);
  double out_proj = static_cast<double>(attention_out_width(m) * m.hidden);
  return static_cast<std::int64_t>((per_layer - out_proj) / static_cast<double>(m.hidden));
}

}  // namespace yirage::planner
