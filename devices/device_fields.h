// A device spec as a flat list of fields (path, value, unit, source), in a fixed order:
// the one description behind `devices show` and `devices --json`.
#pragma once

#include "devices/device_spec.h"

#include <optional>
#include <string>
#include <vector>

namespace yirage::devices {

struct DeviceField {
  std::string path;             // "peak.bf16", "links.0.bandwidth", "memory.kind"
  std::string text;             // as shown to people: "989.4 TFLOPS"
  std::optional<double> value;  // numbers only, in the base unit
  std::string unit;             // base unit of `value`: "FLOPS", "B/s", "" for counts
  std::string source;           // the document the number comes from ("" for text fields)
};

std::vector<DeviceField> describe(const DeviceSpec& d);

}  // namespace yirage::devices
