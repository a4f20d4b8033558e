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
         ",zero=" + std::to_string(zero) + (vpp > 1 ? ",vpp=" + std::to_string(vpp) : "") +
         (ep > 1 ? ",ep=" + std::to_string(ep) : "") + (cp > 1 ? ",cp=" + std::to_string(cp) : "") +
         (tp > 1 && !sp ? ",sp=off" : "") + (offload ? ",offload=on" : "") +
         (dp_overlap ? "" : ",dp_overlap=off") + (grad_fusion ? "" : ",grad_fusion=off") +
         (te ? "" : ",te=off") + (tp_overlap ? ",tp_overlap=on" : "");
}

std::string layout_items(const std::string& text,
                         std::vector<std::pair<std::string, std::string>>* out) {
  out->clear();
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
    for (const auto& seen : *out) {
      if (seen.first == key)
        return "'" + key + "' is given twice";
    }
    out->emplace_back(key, item.substr(eq + 1));
  }
  return {};
}

std::string layout_number(const std::string& key,
                          const std::string& value,
                          std::int64_t min,
                          std::int64_t* out) {
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size() || v < 0)
    return "'" + value + "' for " + key + " is not a whole number";
  if (v < min)
    return key + " must be at least " + std::to_string(min);
  // Far above any cluster, and small enough that products of several degrees stay exact.
  constexpr std::int64_t kMax = std::int64_t{1} << 20;
  if (v > kMax)
    return key + " must be at most " + std::to_string(kMax);
  *out = v;
  return {};
}

std::string parse_layout(const std::string& text, Layout* out) {
  Layout l;
  std::vector<std::pair<std::string, std::string>> items;
  if (std::string err = layout_items(text, &items); !err.empty())
    return err;
  std::map<std::string, std::int64_t*> keys = {
      {"tp", &l.tp},   {"pp", &l.pp}, {"dp", &l.dp}, {"mb", &l.micro_batch},
      {"vpp", &l.vpp}, {"ep", &l.ep}, {"cp", &l.cp}};
  std::map<std::string, bool*> switches = {{"sp", &l.sp},
                                           {"offload", &l.offload},
                                           {"dp_overlap", &l.dp_overlap},
                                           {"grad_fusion", &l.grad_fusion},
                                           {"te", &l.te},
                                           {"tp_overlap", &l.tp_overlap}};
  for (const auto& [key, value] : items) {
    if (key == "recompute") {
      if (value == "none")
        l.recompute = Recompute::kNone;
      else if (value == "selective")
        l.recompute = Recompute::kSelective;
      else if (value == "full")
        l.recompute = Recompute::kFull;
      else
        return "recompute must be none, selective or full, got '" + value + "'";
    } else if (key == "zero") {
      std::int64_t v = 0;
      if (std::string err = layout_number(key, value, 0, &v); !err.empty())
        return err;
      if (v > 3)
        return "zero must be 0, 1, 2 or 3";
      l.zero = static_cast<int>(v);
    } else if (switches.count(key) > 0) {
      if (value != "on" && value != "off")
        return key + " must be on or off, got '" + value + "'";
      *switches[key] = value == "on";
    } else if (keys.count(key) > 0) {
      if (std::string err = layout_number(key, value, 1, keys[key]); !err.empty())
        return err;
    } else {
      return "unknown layout key '" + key +
             "' (keys: tp, pp, dp, mb, recompute, zero, vpp, ep, cp, sp, offload, dp_overlap, "
             "grad_fusion, te, tp_overlap)";
    }
  }
  *out = l;
  return {};
}

}  // namespace yirage::planner
