#include "cli/context.h"

#include "report/csv.h"
#include "report/structured_output.h"

#include "cli/output_file.h"
#include "cli/run.h"
#include "devices/cluster_loader.h"
#include "devices/task_loader.h"

#include <sstream>

namespace yirage::cli {

devices::DeviceRegistry Context::load_registry() const {
  devices::DeviceRegistry r = devices::DeviceRegistry::load_bundled();
  for (const std::string& dir : device_dirs)
    r.add_dir(dir);
  return r;
}

devices::ClusterSpec Context::load_cluster(const std::string& path,
                                           const devices::DeviceRegistry& registry) const {
  return devices::load_cluster(path, registry);
}

devices::TaskSpec Context::load_task(const std::string& path) const {
  return devices::load_task(path, devices::ModelRegistry::load_bundled());
}

int write_document(Context& cx, std::string_view kind, const nlohmann::ordered_json& j) {
  if (cx.csv.empty()) {
    report::write_structured(cx.out, cx.yaml, kind, j);
    return kExitOk;
  }
  const nlohmann::ordered_json* rows = nullptr;
  for (const char* key : {"plans", "rows", "devices", "node_types"}) {
    if (j.contains(key)) {
      rows = &j.at(key);
      break;
    }
  }
  if (rows == nullptr) {
    cx.err << "error: --csv: the answer (kind '" << kind << "') is not a table; use --json\n";
    return kExitBadInput;
  }
  std::ostringstream csv;
  report::write_csv_table(csv, *rows);
  return write_csv(cx, csv.str());
}

int write_csv(Context& cx, const std::string& text) {
  if (cx.csv == "-") {
    cx.out << text;
    return kExitOk;
  }
  if (std::string why = write_output(cx.csv, text); !why.empty()) {
    cx.err << "error: --csv: " << why << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace yirage::cli
