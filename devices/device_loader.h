// Reads device specifications from YAML (one device per registry file, or inline in a
// cluster file). The format is documented in data/devices/README.md.
#pragma once

#include "devices/device_spec.h"
#include "devices/support/yaml_reader.h"

#include <optional>

namespace yirage::devices {

/// Reads one device from a mapping node. Problems go to the document's diagnostics; the
/// result is nullopt when any was found.
std::optional<DeviceSpec> read_device(const YamlDoc& doc, const YAML::Node& node);

}  // namespace yirage::devices
