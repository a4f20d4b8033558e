#include "report/structured_output.h"

#include "devices/support/check.h"
#include "devices/support/units.h"

#include <yaml-cpp/yaml.h>

#include <cmath>

namespace yirage::report {
namespace {

void emit(YAML::Emitter& e, const nlohmann::ordered_json& j) {
  if (j.is_object()) {
    e << YAML::BeginMap;
    for (const auto& [key, value] : j.items()) {
      e << YAML::Key << key << YAML::Value;
      emit(e, value);
    }
    e << YAML::EndMap;
  } else if (j.is_array()) {
    e << YAML::BeginSeq;
    for (const auto& v : j)
      emit(e, v);
    e << YAML::EndSeq;
  } else if (j.is_string()) {
    e << j.get<std::string>();
  } else if (j.is_boolean()) {
    e << j.get<bool>();
  } else if (j.is_number_integer()) {
    e << j.get<std::int64_t>();
  } else if (j.is_number()) {
    e << j.dump();  // the shortest round-tripping form, as in the JSON output
  } else {
    e << YAML::Null;
  }
}

}  // namespace

void write_yaml(std::ostream& out, const nlohmann::ordered_json& j) {
  YAML::Emitter e;
  emit(e, j);
  out << e.c_str() << "\n";
}

namespace {

// A non-finite number would print as null (JSON) or .inf (YAML): a bug, never an answer.
bool all_finite(const nlohmann::ordered_json& j) {
  if (j.is_number_float())
    return std::isfinite(j.get<double>());
  if (j.is_structured()) {
    for (const auto& v : j)
      if (!all_finite(v))
        return false;
  }
  return true;
}

}  // namespace

void write_structured(std::ostream& out,
                      bool yaml,
                      std::string_view kind,
                      const nlohmann::ordered_json& j) {
  if (!all_finite(j))
    throw devices::InternalError("a result to print is not a finite number");
  CHECK(j.is_object()) << "a document to print is an object";
  // Every document opens with the version of its shape and what it answers (docs/json.md).
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();
  doc["schema"] = kSchemaVersion;
  doc["kind"] = std::string(kind);
  for (const auto& [key, value] : j.items())
    doc[key] = value;
  if (yaml) {
    write_yaml(out, doc);
  } else {
    out << doc.dump(2) << "\n";
  }
}

}  // namespace yirage::report
