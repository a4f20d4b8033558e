// Small readers shared by the COMET loaders: the reference files write booleans as `True` or
// `true`, sizes as plain integers, and factor lists as text such as "M=[a,b] N=[1,1]".
#pragma once

#include "devices/support/yaml_reader.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace yirage::costmodel::comet {

/// A boolean written true/True/TRUE or false/False/FALSE.
std::optional<bool> read_bool(devices::MapReader& m, std::string_view key);

/// A whole number >= `min`.
std::optional<std::int64_t> read_int(devices::MapReader& m,
                                     std::string_view key,
                                     bool required = false,
                                     std::int64_t min = 0);

/// A number >= 0.
std::optional<double> read_number(devices::MapReader& m, std::string_view key);

/// One `DIM=VALUE` or `DIM=[V1,V2,...]` assignment of a factor line, values as written.
struct Assignment {
  std::string dim;
  std::vector<std::string> values;
};

/// Parses "M=[a,b] N=[1,1] K= [1,1]" or "M=a N=b"; on a syntax error returns nullopt and sets
/// `error`.
std::optional<std::vector<Assignment>> parse_assignments(const std::string& text,
                                                         std::string& error);

/// Splits "GB[0..3]" into ("GB", 4); a plain name has 1 instance. Nullopt on a bad range.
std::optional<std::pair<std::string, std::int64_t>> parse_instance_name(const std::string& s);

}  // namespace yirage::costmodel::comet
