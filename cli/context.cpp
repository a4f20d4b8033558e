#include "cli/context.h"

#include "devices/cluster_loader.h"
#include "devices/task_loader.h"

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

}  // namespace yirage::cli
