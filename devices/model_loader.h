// Reads model architectures (data/models/*.yaml, or a `model:` mapping in a task file) and
// keeps the registry of model presets.
#pragma once

#include "devices/model_spec.h"
#include "devices/support/yaml_reader.h"

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace yirage::devices {

/// Reads one model from a mapping; problems go to the document's diagnostics.
std::optional<ModelSpec> read_model(const YamlDoc& doc, const YAML::Node& node);

class ModelRegistry {
 public:
  /// Loads every `*.yaml` of `dir` in name order; throws `InputError` on any problem.
  static ModelRegistry load_dir(const std::filesystem::path& dir);
  /// `data_dir() / "models"`.
  static ModelRegistry load_bundled();

  /// The preset called `name` (case-insensitive), or nullptr.
  const ModelSpec* find(std::string_view name) const;

  const std::vector<ModelSpec>& models() const { return models_; }

  std::vector<std::string> names() const;

 private:
  std::vector<ModelSpec> models_;
};

}  // namespace yirage::devices
