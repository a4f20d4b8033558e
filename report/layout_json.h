// A layout in machine-readable output: an object of its `key=value` items (whole numbers as
// numbers, the rest as strings) with the `--layout` text beside them, so that a reader needs
// no parser of its own and can still pass the text back to `--layout`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace yirage::report {

/// {"text": "tp=8,pp=4,...", "tp": 8, "pp": 4, "recompute": "full", ...}. A mixed cluster's
/// pipeline ("dp=8,mb=1,... | group: tp=2,pp=1,layers=9 | ...") gives the items before the
/// first " | "; its groups are the plan's `parts`.
nlohmann::ordered_json layout_json(const std::string& text);

}  // namespace yirage::report
