#include "report/layout_json.h"

#include "planner/plan.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

namespace yirage::report {

nlohmann::ordered_json layout_json(const std::string& text) {
  nlohmann::ordered_json j;
  j["text"] = text;
  std::string head = text.substr(0, text.find(" | "));
  std::vector<std::pair<std::string, std::string>> items;
  if (!planner::layout_items(head, &items).empty())
    return j;  // every layout printed was made by str(): a text it cannot read stays text
  for (const auto& [key, value] : items) {
    bool whole = !value.empty() && value.size() < 19 &&
                 std::all_of(value.begin(), value.end(),
                             [](unsigned char c) { return std::isdigit(c) != 0; });
    j[key] = whole ? nlohmann::ordered_json(std::stoll(value)) : nlohmann::ordered_json(value);
  }
  return j;
}

}  // namespace yirage::report
