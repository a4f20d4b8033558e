// Reads cluster files (data/clusters/README.md), resolving device names against a registry
// and the devices the file defines inline.
#pragma once

#include "devices/cluster_spec.h"
#include "devices/registry.h"

#include <filesystem>

namespace yirage::devices {

/// Reads and validates a cluster file. Throws `InputError` listing every problem in it.
ClusterSpec load_cluster(const std::filesystem::path& path, const DeviceRegistry& registry);

/// Reads a cluster from text, as if it were the contents of `path` (for the GUI and tests).
ClusterSpec parse_cluster(const std::string& path,
                          const std::string& text,
                          const DeviceRegistry& registry);

}  // namespace yirage::devices
