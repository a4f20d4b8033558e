#include "planner/node_groups.h"

#include <algorithm>
#include <tuple>

namespace yirage::planner {

std::vector<const devices::NodeGroup*> canonical_groups(const devices::ClusterSpec& cluster) {
  std::vector<const devices::NodeGroup*> groups;
  for (const devices::NodeGroup& g : cluster.groups)
    groups.push_back(&g);
  std::sort(groups.begin(), groups.end(), [](const auto* a, const auto* b) {
    return std::tie(a->device, a->name) < std::tie(b->device, b->name);
  });
  return groups;
}

devices::ClusterSpec sub_cluster(const devices::ClusterSpec& c,
                                 const std::vector<const devices::NodeGroup*>& groups,
                                 std::int64_t nodes) {
  devices::ClusterSpec s;
  s.name = c.name;
  for (const devices::NodeGroup* g : groups) {
    s.name += "/" + g->name;
    s.groups.push_back(*g);
    if (nodes > 0)
      s.groups.back().nodes = nodes;
    const devices::DeviceSpec& d = c.device(*g);
    auto known = std::find_if(s.device_types.begin(), s.device_types.end(),
                              [&](const devices::DeviceSpec& t) { return t.name == d.name; });
    if (known == s.device_types.end())
      s.device_types.push_back(d);
  }
  std::sort(s.device_types.begin(), s.device_types.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  s.network = c.network;
  s.loc = c.loc;
  return s;
}

}  // namespace yirage::planner
