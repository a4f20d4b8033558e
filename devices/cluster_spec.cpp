#include "devices/cluster_spec.h"

#include "devices/support/check.h"

#include <algorithm>
#include <tuple>

namespace yirage::devices {

std::string fabric_name(FabricKind k) {
  switch (k) {
    case FabricKind::kNvswitch:
      return "nvswitch";
    case FabricKind::kNvlink:
      return "nvlink";
    case FabricKind::kXgmi:
      return "xgmi";
    case FabricKind::kPcie:
      return "pcie";
    case FabricKind::kHccs:
      return "hccs";
    case FabricKind::kIci:
      return "ici";
    case FabricKind::kEthernet:
      return "ethernet";
    case FabricKind::kNone:
      return "none";
  }
  return "?";
}

std::string topology_name(Topology t) {
  return t == Topology::kFatTree ? "fat-tree" : "rail-optimized";
}

std::int64_t ClusterSpec::total_devices() const {
  std::int64_t n = 0;
  for (const NodeGroup& g : groups)
    n += g.devices();
  return n;
}

std::int64_t ClusterSpec::total_nodes() const {
  std::int64_t n = 0;
  for (const NodeGroup& g : groups)
    n += g.nodes;
  return n;
}

std::optional<double> ClusterSpec::price_per_hour(const NodeGroup& g) const {
  if (g.price)
    return g.price->value;
  const DeviceSpec& d = device(g);
  return d.price ? std::optional<double>(d.price->value.value) : std::nullopt;
}

std::vector<const NodeGroup*> groups_by_device(const ClusterSpec& c) {
  std::vector<const NodeGroup*> out;
  for (const NodeGroup& g : c.groups)
    out.push_back(&g);
  std::sort(out.begin(), out.end(), [](const NodeGroup* x, const NodeGroup* y) {
    return std::tie(x->device, x->name) < std::tie(y->device, y->name);
  });
  return out;
}

ClusterSpec with_group_alone(const ClusterSpec& c, const NodeGroup& g) {
  ClusterSpec s = c;
  s.groups = {g};
  s.device_types = {c.device(g)};
  return s;
}

std::optional<double> ClusterSpec::usd_per_hour() const {
  double usd = 0;
  for (const NodeGroup& g : groups) {
    std::optional<double> p = price_per_hour(g);
    if (!p)
      return std::nullopt;
    usd += *p * static_cast<double>(g.devices());
  }
  return usd;
}

const DeviceSpec& ClusterSpec::device(const NodeGroup& g) const {
  for (const DeviceSpec& d : device_types) {
    if (d.name == g.device)
      return d;
  }
  CHECK(false) << "node group '" << g.name << "' names unknown device '" << g.device << "'";
  return device_types.front();
}

BytesPerSec ClusterSpec::nic_bandwidth(const NodeGroup& g) const {
  if (g.nic_bandwidth)
    return *g.nic_bandwidth;
  return network ? network->nic_bandwidth : BytesPerSec{0};
}

}  // namespace yirage::devices
