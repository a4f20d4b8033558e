#include "devices/model_loader.h"

#include "devices/registry.h"
#include "devices/support/text.h"

#include <algorithm>

namespace yirage::devices {
namespace {

std::optional<MoeSpec> read_moe(const YamlDoc& doc, const YAML::Node& n, std::int64_t layers) {
  MapReader m(doc, n, "moe");
  if (!m.valid())
    return std::nullopt;
  MoeSpec moe;
  moe.experts = m.integer("experts", true).value_or(0);
  moe.top_k = m.integer("top_k", true).value_or(0);
  moe.shared_experts = m.integer("shared_experts", false, 0).value_or(0);
  moe.expert_ffn = m.integer("expert_ffn", true).value_or(0);
  moe.dense_layers = m.integer("dense_layers", false, 0).value_or(0);
  if (moe.experts > 0 && moe.top_k > moe.experts) {
    doc.error(m.get("top_k"), "'top_k' (" + std::to_string(moe.top_k) +
                                  ") exceeds the number of experts (" +
                                  std::to_string(moe.experts) + ")");
  }
  if (layers > 0 && moe.dense_layers >= layers) {
    doc.error(m.get("dense_layers"), "'dense_layers' must be fewer than the model's " +
                                         std::to_string(layers) + " layers");
  }
  m.finish();
  return moe;
}

std::optional<MlaSpec> read_mla(const YamlDoc& doc, const YAML::Node& n) {
  MapReader m(doc, n, "mla");
  if (!m.valid())
    return std::nullopt;
  MlaSpec mla;
  mla.q_lora_rank = m.integer("q_lora_rank", false, 0).value_or(0);
  mla.kv_lora_rank = m.integer("kv_lora_rank", true).value_or(0);
  mla.qk_nope_head_dim = m.integer("qk_nope_head_dim", true).value_or(0);
  mla.qk_rope_head_dim = m.integer("qk_rope_head_dim", true).value_or(0);
  mla.v_head_dim = m.integer("v_head_dim", true).value_or(0);
  m.finish();
  return mla;
}

std::optional<PublishedCount> read_published(const YamlDoc& doc, const YAML::Node& n) {
  MapReader m(doc, n, "published");
  if (!m.valid())
    return std::nullopt;
  PublishedCount p;
  p.total = m.number("total", true).value_or(0);
  p.active = m.number("active").value_or(0);
  p.active_excludes_embedding = m.boolean("active_excludes_embedding").value_or(false);
  p.source = m.string("source", true).value_or("");
  m.finish();
  return p;
}

template <class Enum>
Enum enum_or(MapReader& m,
             std::string_view key,
             const std::vector<std::string>& names,
             Enum fallback) {
  std::optional<std::string> s = m.choice(key, names);
  for (std::size_t i = 0; s && i < names.size(); ++i) {
    if (names[i] == *s)
      return static_cast<Enum>(i);
  }
  return fallback;
}

void read_shape(MapReader& m, ModelSpec& s) {
  s.layers = m.integer("layers", true).value_or(0);
  s.hidden = m.integer("hidden", true).value_or(0);
  s.heads = m.integer("heads", true).value_or(0);
  s.kv_heads = m.integer("kv_heads").value_or(s.heads);
  s.head_dim = m.integer("head_dim").value_or(s.heads > 0 ? s.hidden / s.heads : 0);
  s.ffn = m.integer("ffn", false, 0).value_or(0);
  s.ffn_kind = enum_or(m, "ffn_kind", {"gated", "plain"}, FfnKind::kGated);
  s.vocab = m.integer("vocab", true).value_or(0);
  s.tied_embeddings = m.boolean("tied_embeddings").value_or(false);
  s.norm = enum_or(m, "norm", {"rmsnorm", "layernorm"}, NormKind::kRmsNorm);
  s.bias = enum_or(m, "bias", {"none", "qkv", "all"}, BiasKind::kNone);
  s.position = enum_or(m, "position", {"rope", "learned"}, PositionKind::kRope);
  s.max_positions = m.integer("max_positions", s.position == PositionKind::kLearned).value_or(0);
}

void check_shape(MapReader& m, const ModelSpec& s) {
  const YamlDoc& doc = m.doc();
  if (s.heads > 0 && s.kv_heads > 0 && s.heads % s.kv_heads != 0) {
    doc.error(m.get("kv_heads"), "'heads' (" + std::to_string(s.heads) +
                                     ") must be a multiple of 'kv_heads' (" +
                                     std::to_string(s.kv_heads) + ")");
  }
  if (s.kv_heads > s.heads && s.heads > 0) {
    doc.error(m.get("kv_heads"), "'kv_heads' cannot exceed 'heads'");
  }
  bool needs_dense_ffn = !s.moe || s.moe->dense_layers > 0;
  if (needs_dense_ffn && s.ffn == 0 && m.valid()) {
    doc.error(m.has("ffn") ? m.get("ffn") : m.node(),
              "'ffn' must be given and positive for the model's dense layers");
  }
}

}  // namespace

std::optional<ModelSpec> read_model(const YamlDoc& doc, const YAML::Node& node) {
  std::size_t errors_before = doc.diag().items().size();
  MapReader m(doc, node, "model");
  if (!m.valid())
    return std::nullopt;
  ModelSpec s;
  s.loc = doc.loc(node);
  s.name = m.string("name", true).value_or("");
  read_shape(m, s);
  if (YAML::Node n = m.get("moe"))
    s.moe = read_moe(doc, n, s.layers);
  if (YAML::Node n = m.get("mla"))
    s.mla = read_mla(doc, n);
  if (YAML::Node n = m.get("published"))
    s.published = read_published(doc, n);
  check_shape(m, s);
  m.finish();
  if (doc.diag().items().size() != errors_before)
    return std::nullopt;
  return s;
}

ModelRegistry ModelRegistry::load_dir(const std::filesystem::path& dir) {
  ModelRegistry r;
  Diagnostics diag;
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml")
      files.push_back(e.path());
  }
  if (ec)
    diag.error(SourceLoc{dir.string(), 0, 0}, "not a directory of model files");
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    YamlDoc doc = YamlDoc::load(f, diag);
    if (!doc.root())
      continue;
    std::optional<ModelSpec> s = read_model(doc, doc.root());
    if (!s)
      continue;
    if (const ModelSpec* other = r.find(s->name)) {
      diag.error(s->loc, "model '" + s->name + "' is already defined at " + other->loc.str());
      continue;
    }
    r.models_.push_back(std::move(*s));
  }
  diag.throw_if_errors();
  std::sort(r.models_.begin(), r.models_.end(),
            [](const ModelSpec& a, const ModelSpec& b) { return a.name < b.name; });
  return r;
}

ModelRegistry ModelRegistry::load_bundled() {
  return load_dir(data_dir() / "models");
}

const ModelSpec* ModelRegistry::find(std::string_view name) const {
  for (const ModelSpec& m : models_) {
    if (iequals(m.name, name))
      return &m;
  }
  return nullptr;
}

std::vector<std::string> ModelRegistry::names() const {
  std::vector<std::string> out;
  for (const ModelSpec& m : models_)
    out.push_back(m.name);
  return out;
}

}  // namespace yirage::devices
