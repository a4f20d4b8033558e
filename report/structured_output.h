// Machine-readable output: the JSON object a command builds, printed as JSON (--json) or as
// YAML (--yaml) from the same value, so the two never disagree.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>

namespace yirage::report {

/// Writes `j` as YAML (block style, keys in insertion order).
void write_yaml(std::ostream& out, const nlohmann::ordered_json& j);

/// The version of the documents' shape, the first key of every object written: raised when
/// a key is renamed, removed or changes meaning (added keys keep it).
inline constexpr int kSchemaVersion = 1;

/// Writes the document `j` (an object) as YAML when `yaml`, else as indented JSON, opening
/// with `schema` and `kind` (what it answers: "training", "devices", ...; docs/json.md).
void write_structured(std::ostream& out,
                      bool yaml,
                      std::string_view kind,
                      const nlohmann::ordered_json& j);

}  // namespace yirage::report
