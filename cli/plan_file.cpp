#include "cli/plan_file.h"

#include "report/structured_output.h"

#include "devices/support/diagnostics.h"
#include "devices/support/yaml_reader.h"

#include <sstream>

namespace yirage::cli {

std::string plan_file_yaml(const devices::ClusterSpec& cluster,
                           const devices::TaskSpec& task,
                           const std::string& layout,
                           const nlohmann::ordered_json& estimate) {
  nlohmann::ordered_json j;
  j["version"] = 1;
  j["cluster"] = cluster.name;
  j["task"] = task.name;
  j["mode"] = devices::mode_name(task.mode);
  j["layout"] = layout;
  j["estimate"] = estimate;
  std::ostringstream out;
  out << "# A yirage plan: `yirage-plan CLUSTER TASK --plan FILE` evaluates it again.\n";
  // Its own `version`, not the output documents' `schema` (read_plan_file refuses others).
  report::write_yaml(out, j);
  return out.str();
}

PlanFile read_plan_file(const std::string& path,
                        const devices::ClusterSpec& cluster,
                        const devices::TaskSpec& task) {
  devices::Diagnostics diag;
  devices::YamlDoc doc = devices::YamlDoc::load(path, diag);
  diag.throw_if_errors();  // a file that cannot be read has nothing more to say
  PlanFile p;
  if (doc.root()) {
    devices::MapReader m(doc, doc.root(), "plan file");
    if (m.valid()) {
      std::optional<std::int64_t> version = m.integer("version", true);
      if (version && *version != 1)
        doc.error(m.key_node("version"), "plan file version " + std::to_string(*version) +
                                             " is not known; this yirage reads version 1");
      p.cluster = m.string("cluster", true).value_or("");
      p.task = m.string("task", true).value_or("");
      p.mode = m.choice("mode", {"train", "prefill", "decode", "serve"}, true).value_or("");
      p.layout = m.string("layout", true).value_or("");
      m.get("estimate");  // what it was estimated at when written; informative
      if (!p.cluster.empty() && p.cluster != cluster.name) {
        doc.error(m.key_node("cluster"),
                  "the plan is for cluster '" + p.cluster + "', not '" + cluster.name + "'");
      }
      if (!p.task.empty() && p.task != task.name) {
        doc.error(m.key_node("task"),
                  "the plan is for task '" + p.task + "', not '" + task.name + "'");
      }
      if (!p.mode.empty() && p.mode != devices::mode_name(task.mode)) {
        doc.error(m.key_node("mode"), "the plan is for mode " + p.mode + ", the task is " +
                                          devices::mode_name(task.mode));
      }
      m.finish();
    }
  }
  diag.throw_if_errors();
  return p;
}

}  // namespace yirage::cli
