#include "planner/plan.h"

#include <charconv>
#include <map>

namespace yirage::planner {

std::string recompute_name(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

std::string Layout::str() const {
  return "tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) + ",dp=" + std::to_string(dp) +
         ",mb=" + std::to_string(micro_batch) + ",recompute=" + recompute_name(recompute) +
         ",zero=" + std::to_string(zero);
}

std::string parse_layout(const std::string& text, Layout* out) {
  Layout l;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() : comma + 1;
    std::size_t eq = item.find('=');
    if (eq == std::string::npos)
      return "'" + item + "' is not key=value";
    std::string key = item.substr(0, eq);
    std::string value = item.substr(eq + 1);
    if (key == "recompute") {
      if (value == "none")
        l.recompute = Recompute::kNone;
      else if (value == "selective")
        l.recompute = Recompute::kSelective;
      else if (value == "full")
        l.recompute = Recompute::kFull;
      else
        return "recompute must be none, selective or full, got '" + value + "'";
      continue;
    }
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || ptr != value.data() + value.size() || v < 0) {
      return "'" + value + "' for " + key + " is not a whole number";
    }
    std::map<std::string, std::int64_t*> keys = {
        {"tp", &l.tp}, {"pp", &l.pp}, {"dp", &l.dp}, {"mb", &l.micro_batch}};
    if (key == "zero") {
      if (v > 3)
        return "zero must be 0, 1, 2 or 3";
      l.zero = static_cast<int>(v);
    } else if (keys.count(key) > 0) {
      if (v < 1)
        return key + " must be at least 1";
      *keys[key] = v;
    } else {
      return "unknown layout key '" + key + "' (keys: tp, pp, dp, mb, recompute, zero)";
    }
  }
  *out = l;
  return {};
}

}  // namespace yirage::planner
