// The bundled data the unit tests load: the device registry, example clusters and tasks.
#pragma once

#include "devices/cluster_loader.h"
#include "devices/model_loader.h"
#include "devices/registry.h"
#include "devices/task_loader.h"

#include <string>

namespace yirage::testing {

inline const devices::DeviceRegistry& bundled_registry() {
  static const devices::DeviceRegistry r = devices::DeviceRegistry::load_bundled();
  return r;
}

inline devices::ClusterSpec example_cluster(const std::string& name) {
  return devices::load_cluster(devices::data_dir() / "clusters" / (name + ".yaml"),
                               bundled_registry());
}

inline devices::TaskSpec example_task(const std::string& name) {
  static const devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  return devices::load_task(devices::data_dir() / "tasks" / (name + ".yaml"), models);
}

}  // namespace yirage::testing
