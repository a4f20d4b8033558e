// Reads cluster files (data/clusters/README.md), resolving device names against a registry
// and the devices the file defines inline.
#pragma once

#include "devices/cluster_spec.h"
#include "devices/registry.h"

#include <filesystem>
#include <optional>

namespace yirage::devices {

/// Reads and validates a cluster file. Throws `InputError` listing every problem in it.
ClusterSpec load_cluster(const std::filesystem::path& path, const DeviceRegistry& registry);

/// The fabric of a node of `devices_per_node` devices `d`, built from the device's own
/// scale-up link as a cluster file's `fabric: {kind: ...}` without bandwidth builds it:
/// NVLink (behind NVSwitch beyond two devices), xGMI / Infinity Fabric, ICI, HCCS or
/// Ethernet, at the link's bandwidth and latency (`latency` where the link gives none, which
/// `*latency_assumed` then says). None when the device has no such link.
std::optional<Fabric> device_fabric(const DeviceSpec& d,
                                    std::int64_t devices_per_node,
                                    Seconds latency,
                                    bool* latency_assumed);

/// Reads a cluster from text, as if it were the contents of `path` (for the GUI and tests).
ClusterSpec parse_cluster(const std::string& path,
                          const std::string& text,
                          const DeviceRegistry& registry);

}  // namespace yirage::devices
