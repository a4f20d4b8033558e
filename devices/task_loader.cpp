#include "devices/task_loader.h"

#include "devices/support/text.h"
#include "devices/support/yaml_reader.h"

#include <algorithm>

namespace yirage::devices {
namespace {

const std::vector<std::string> kModes = {"train", "prefill", "decode", "serve", "generate"};
const std::vector<std::string> kPrecisions = {"fp32", "tf32", "bf16", "fp16", "fp8", "int8"};

template <class Enum>
std::optional<Enum> pick(const std::optional<std::string>& s,
                         const std::vector<std::string>& names) {
  if (!s)
    return std::nullopt;
  auto it = std::find(names.begin(), names.end(), *s);
  if (it == names.end())
    return std::nullopt;
  return static_cast<Enum>(it - names.begin());
}

std::optional<ModelSpec> read_model_ref(const YamlDoc& doc,
                                        MapReader& top,
                                        const ModelRegistry& models,
                                        TaskSpec& t) {
  std::string* preset = &t.model_preset;
  YAML::Node n = top.require("model");
  if (!n)
    return std::nullopt;
  t.model_loc = doc.loc(n);
  if (n.IsMap())
    return read_model(doc, n);
  std::optional<std::string> name = scalar_text(doc, n, "model");
  if (!name)
    return std::nullopt;
  const ModelSpec* m = models.find(*name);
  if (m == nullptr) {
    doc.error(n, "unknown model '" + *name + "'" + did_you_mean(*name, models.names()) +
                     " (presets: " + join_choices(models.names()) +
                     "; or write the architecture as a mapping)");
    return std::nullopt;
  }
  *preset = m->name;
  return *m;
}

void read_serve(const YamlDoc& doc, const YAML::Node& n, TaskSpec& t) {
  MapReader m(doc, n, "serve");
  if (!m.valid())
    return;
  ServeSpec s;
  s.request_rate = m.quantity<Dim::kPerSec>("request_rate", true).value_or(PerSec{});
  s.prompt_length = m.integer("prompt_length", true).value_or(0);
  s.output_length = m.integer("output_length", true).value_or(0);
  s.prefill_chunk = m.integer("prefill_chunk");
  m.finish();
  t.serve = s;
}

void read_objective(const YamlDoc& doc, const YAML::Node& n, TaskSpec& t) {
  MapReader m(doc, n, "objective");
  if (!m.valid())
    return;
  Objective& o = t.objective;
  if (m.has("minimize"))
    t.minimize_loc = doc.loc(m.get("minimize"));
  if (m.has("max_cost_per_hour"))
    t.max_cost_loc = doc.loc(m.get("max_cost_per_hour"));
  o.minimize =
      pick<Minimize>(m.choice("minimize", {"time", "cost", "energy"}), {"time", "cost", "energy"})
          .value_or(Minimize::kTime);
  o.max_devices = m.integer("max_devices");
  o.max_step_time = m.quantity<Dim::kSeconds>("max_step_time");
  o.ttft = m.quantity<Dim::kSeconds>("ttft");
  o.tpot = m.quantity<Dim::kSeconds>("tpot");
  o.min_throughput = m.quantity<Dim::kPerSec>("min_throughput");
  o.max_cost_per_hour = m.quantity<Dim::kUsdPerHour>("max_cost_per_hour");
  m.finish();
}

// Keys that only some modes use are refused in the others, so that a typo in `mode` does
// not silently drop half the task.
void check_mode_keys(MapReader& m, const TaskSpec& t) {
  auto refuse = [&](std::string_view key, const std::string& modes) {
    if (m.has(key)) {
      m.doc().error(m.key_node(key), "'" + std::string(key) + "' applies only to mode " + modes +
                                         ", not " + mode_name(t.mode));
    }
  };
  if (t.mode != Mode::kTrain) {
    refuse("optimizer", "train");
    refuse("training_tokens", "train");
  } else {
    refuse("decode_attention", "prefill, decode, serve or generate");
  }
  if (t.mode != Mode::kServe)
    refuse("serve", "serve");
  if (t.mode != Mode::kGenerate)
    refuse("output_length", "generate");
}

void check_lengths(MapReader& m, const TaskSpec& t) {
  const ModelSpec& model = t.model;
  if (model.max_positions <= 0)
    return;
  bool learned = model.position == PositionKind::kLearned;
  std::string positions = std::to_string(model.max_positions) +
                          (learned ? " learned positions" : " positions (max_positions)") +
                          " of model '" + model.name + "'";
  std::string extend =
      learned ? "" : "; a model whose context was extended says so in its max_positions";
  if (t.sequence_length > model.max_positions) {
    m.doc().error(m.get("sequence_length"), "'sequence_length' " +
                                                std::to_string(t.sequence_length) +
                                                " exceeds the " + positions + extend);
  } else if (t.mode == Mode::kGenerate &&
             t.sequence_length + t.output_length > model.max_positions) {
    m.doc().error(m.get("output_length"), "a sequence's prompt and output (" +
                                              std::to_string(t.sequence_length + t.output_length) +
                                              " tokens) exceed the " + positions + extend);
  }
  if (t.serve && t.serve->prompt_length + t.serve->output_length > model.max_positions) {
    YAML::Node serve = m.get("serve");
    m.doc().error(serve["prompt_length"] ? serve["prompt_length"] : serve,
                  "a request's prompt and output (" +
                      std::to_string(t.serve->prompt_length + t.serve->output_length) +
                      " tokens) exceed the " + positions + extend);
  }
}

// `precision: bf16` sets every tensor kind; a mapping sets them one by one (`weights`
// required, the others defaulting to it).
void read_precision(const YamlDoc& doc, MapReader& top, TaskSpec& t) {
  const std::vector<std::string> names = {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8"};
  YAML::Node n = top.get("precision");
  t.precision_loc = n ? doc.loc(n) : t.loc;
  if (n && n.IsMap()) {
    MapReader p(doc, n, "precision");
    t.precision = pick<DType>(p.choice("weights", kPrecisions, true), names).value_or(DType::kBf16);
    auto kind = [&](std::string_view key) {
      return pick<DType>(p.choice(key, kPrecisions), names).value_or(t.precision);
    };
    t.activation_precision = kind("activations");
    t.kv_cache_precision = kind("kv_cache");
    t.communication_precision = kind("communication");
    p.finish();
    bool uniform = t.activation_precision == t.precision && t.kv_cache_precision == t.precision &&
                   t.communication_precision == t.precision;
    if (t.mode == Mode::kTrain && !uniform)
      doc.error(n,
                "training runs at one precision: give 'precision' one value (precision per "
                "tensor kind is modelled for prefill, decode, serve and generate)");
    return;
  }
  t.precision = pick<DType>(top.choice("precision", kPrecisions), names).value_or(DType::kBf16);
  t.activation_precision = t.kv_cache_precision = t.communication_precision = t.precision;
}

void read_body(const YamlDoc& doc, MapReader& top, TaskSpec& t) {
  t.mode = pick<Mode>(top.choice("mode", kModes, true), kModes).value_or(Mode::kTrain);
  read_precision(doc, top, t);
  t.attention = top.choice("attention", {"flash", "unfused"}).value_or("flash") == "unfused"
                    ? AttentionKernel::kUnfused
                    : AttentionKernel::kFlash;
  t.decode_attention =
      top.choice("decode_attention", {"split", "grouped"}).value_or("split") == "grouped"
          ? DecodeAttention::kGrouped
          : DecodeAttention::kSplit;
  t.framework = top.choice("framework", {"megatron", "pytorch"}).value_or("megatron") == "pytorch"
                    ? Framework::kPytorch
                    : Framework::kMegatron;
  bool needs_shape = t.mode != Mode::kServe;
  t.sequence_length = top.integer("sequence_length", needs_shape).value_or(0);
  t.global_batch = top.integer("global_batch", needs_shape).value_or(0);
  if (t.mode == Mode::kGenerate)
    t.output_length = top.integer("output_length", true).value_or(0);
  else
    top.get("output_length");  // seen: check_mode_keys says which mode it belongs to
  t.optimizer = pick<Optimizer>(top.choice("optimizer", {"adam", "sgd"}), {"adam", "sgd"})
                    .value_or(Optimizer::kAdam);
  t.training_tokens = top.number("training_tokens");
  if (YAML::Node n = t.mode == Mode::kServe ? top.require("serve") : top.get("serve")) {
    read_serve(doc, n, t);
  }
  if (YAML::Node n = top.get("objective"))
    read_objective(doc, n, t);
  check_mode_keys(top, t);
  check_lengths(top, t);
}

}  // namespace

TaskSpec parse_task(const std::string& path, const std::string& text, const ModelRegistry& models) {
  Diagnostics diag;
  YamlDoc doc(path, text, diag);
  if (!doc.root() || doc.root().IsNull()) {
    if (diag.empty())
      diag.error(SourceLoc{path, 1, 1}, "the file is empty; expected a task");
    diag.throw_if_errors();
  }
  MapReader top(doc, doc.root(), "task");
  if (!top.valid())
    diag.throw_if_errors();
  TaskSpec t;
  t.loc = doc.loc(doc.root());
  t.name = top.string("name", true).value_or("");
  std::optional<ModelSpec> model = read_model_ref(doc, top, models, t);
  if (model)
    t.model = *model;
  read_body(doc, top, t);
  top.finish();
  diag.throw_if_errors();
  return t;
}

TaskSpec load_task(const std::filesystem::path& path, const ModelRegistry& models) {
  Diagnostics diag;
  std::optional<std::string> text = read_file_text(path, diag);
  diag.throw_if_errors();
  return parse_task(path.string(), *text, models);
}

}  // namespace yirage::devices
