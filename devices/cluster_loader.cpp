#include "devices/cluster_loader.h"

#include "devices/device_loader.h"
#include "devices/support/text.h"
#include "devices/support/yaml_reader.h"

#include <algorithm>
#include <set>

namespace yirage::devices {
namespace {

const std::vector<std::string> kFabricNames = {"nvswitch", "nvlink", "xgmi",     "pcie",
                                               "hccs",     "ici",    "ethernet", "none"};

// The device link a fabric kind is built from, to default its bandwidth and latency.
const LinkSpec* fabric_link(const DeviceSpec& d, FabricKind kind) {
  if (kind == FabricKind::kPcie)
    return d.host_link ? &*d.host_link : nullptr;
  std::string want = fabric_name(kind == FabricKind::kNvswitch ? FabricKind::kNvlink : kind);
  for (const LinkSpec& l : d.links) {
    if (l.kind == want || (kind == FabricKind::kXgmi && l.kind == "infinity-fabric"))
      return &l;
  }
  return nullptr;
}

Fabric read_fabric(const YamlDoc& doc, const YAML::Node& n, const DeviceSpec* device) {
  MapReader m(doc, n, "fabric");
  Fabric f;
  f.loc = doc.loc(n);
  if (!m.valid())
    return f;
  std::optional<std::string> kind = m.choice("kind", kFabricNames, true);
  if (kind) {
    f.kind = static_cast<FabricKind>(std::find(kFabricNames.begin(), kFabricNames.end(), *kind) -
                                     kFabricNames.begin());
  }
  auto bw = m.quantity<Dim::kBytesPerSec>("bandwidth");
  auto lat = m.quantity<Dim::kSeconds>("latency", false, Sign::kNonNegative);
  const LinkSpec* link = (device != nullptr && kind) ? fabric_link(*device, f.kind) : nullptr;
  std::string from = device != nullptr ? device->name : "the device";
  if (bw) {
    f.bandwidth = *bw;
  } else if (link != nullptr) {
    f.bandwidth = link->bandwidth.value;
  } else if (kind && !m.has("bandwidth") && device != nullptr) {
    doc.error(n, "fabric 'bandwidth' not given, and " + from + " has no " + *kind +
                     " link to take it from");
  }
  if (lat) {
    f.latency = *lat;
  } else if (link != nullptr && link->latency) {
    f.latency = link->latency->value;
  } else if (kind && !m.has("latency") && device != nullptr) {
    doc.error(n, "fabric 'latency' not given, and " + from + "'s " + *kind +
                     " link has no latency to take it from");
  }
  f.nvls = m.boolean("nvls").value_or(false);
  if (f.nvls && kind && f.kind != FabricKind::kNvswitch) {
    doc.error(m.get("nvls"), "'nvls' (NVLink SHARP) needs an nvswitch fabric, not " + *kind);
  }
  m.finish();
  return f;
}

struct Context {
  const YamlDoc& doc;
  DeviceRegistry& registry;
  std::set<std::string> broken_devices;  // defined inline with errors (already reported)
  std::set<std::string> used_devices;
  std::set<std::string> group_names;
};

// host_cpu: {device: Xeon-8480+, sockets: 2}
std::optional<HostCpu> read_host_cpu(Context& cx, const YAML::Node& n) {
  const YamlDoc& doc = cx.doc;
  MapReader m(doc, n, "host_cpu");
  if (!m.valid())
    return std::nullopt;
  HostCpu h;
  h.loc = doc.loc(n);
  std::optional<std::string> name = m.string("device", true);
  h.sockets = m.integer("sockets").value_or(1);
  if (m.has("sockets") && h.sockets < 1)
    doc.error(m.get("sockets"), "'sockets' must be at least 1, got " + std::to_string(h.sockets));
  m.finish();
  if (!name)
    return std::nullopt;
  const DeviceSpec* cpu = cx.registry.find(*name);
  if (cpu == nullptr) {
    doc.error(n["device"], "unknown device type '" + *name + "'" +
                               did_you_mean(*name, cx.registry.all_names()) +
                               " (`yirage-plan devices` lists them)");
    return std::nullopt;
  }
  if (cpu->kind != DeviceKind::kCpu) {
    doc.error(n["device"],
              "host_cpu '" + cpu->name + "' is a " + kind_name(cpu->kind) + ", not a CPU");
    return std::nullopt;
  }
  h.device = cpu->name;
  h.memory_bandwidth = cpu->memory_bandwidth.value;
  return h;
}

std::optional<NodeGroup> read_group(Context& cx, const YAML::Node& n, std::size_t index) {
  const YamlDoc& doc = cx.doc;
  MapReader m(doc, n, "node group " + std::to_string(index + 1));
  if (!m.valid())
    return std::nullopt;
  NodeGroup g;
  g.loc = doc.loc(n);
  const DeviceSpec* device = nullptr;
  if (std::optional<std::string> name = m.string("device", true)) {
    device = cx.registry.find(*name);
    if (device == nullptr) {
      // A device defined inline with errors was reported already.
      if (cx.broken_devices.count(to_lower(*name)) == 0) {
        doc.error(m.get("device"), "unknown device type '" + *name + "'" +
                                       did_you_mean(*name, cx.registry.all_names()) +
                                       " (`yirage-plan devices` lists them)");
      }
    } else {
      g.device = device->name;
      cx.used_devices.insert(device->name);
    }
  }
  g.name = m.string("name").value_or(g.device);
  if (!g.name.empty() && !cx.group_names.insert(g.name).second) {
    doc.error(m.has("name") ? m.get("name") : n,
              "two node groups are named '" + g.name + "'; give each a distinct 'name'");
  }
  g.nodes = m.integer("nodes", true).value_or(0);
  g.devices_per_node = m.integer("devices_per_node", true).value_or(0);
  if (YAML::Node f = m.get("fabric")) {
    g.fabric = read_fabric(doc, f, device);
  } else if (g.devices_per_node > 1) {
    doc.error(n, "node group '" + g.name + "' has " + std::to_string(g.devices_per_node) +
                     " devices per node but no 'fabric' linking them");
  }
  g.nic_bandwidth = m.quantity<Dim::kBytesPerSec>("nic_bandwidth");
  g.host_memory = m.quantity<Dim::kBytes>("host_memory");
  g.price = m.quantity<Dim::kUsdPerHour>("price");
  if (YAML::Node h = m.get("host_cpu"))
    g.host_cpu = read_host_cpu(cx, h);
  m.finish();
  return g;
}

std::optional<Network> read_network(const YamlDoc& doc, const YAML::Node& n) {
  MapReader m(doc, n, "network");
  if (!m.valid())
    return std::nullopt;
  Network net;
  net.loc = doc.loc(n);
  std::optional<std::string> topo = m.choice("topology", {"fat-tree", "rail-optimized"}, true);
  net.topology = topo == "rail-optimized" ? Topology::kRailOptimized : Topology::kFatTree;
  net.nic_bandwidth = m.quantity<Dim::kBytesPerSec>("nic_bandwidth", true).value_or(BytesPerSec{});
  net.latency = m.quantity<Dim::kSeconds>("latency", true, Sign::kNonNegative).value_or(Seconds{});
  net.oversubscription = m.number("oversubscription").value_or(1);
  if (m.has("oversubscription") && net.oversubscription < 1) {
    doc.error(m.get("oversubscription"),
              "'oversubscription' must be at least 1 (1 is a non-blocking network), got " +
                  format_number(net.oversubscription));
  }
  m.finish();
  return net;
}

// `over`'s keys laid over a copy of `base`: mappings merge key by key, anything else is
// replaced whole.
YAML::Node overlay(const YAML::Node& base, const YAML::Node& over) {
  if (!base.IsMap() || !over.IsMap())
    return over;
  YAML::Node out = YAML::Clone(base);
  for (const auto& kv : over) {
    std::string key = kv.first.Scalar();
    out[key] = out[key] ? overlay(out[key], kv.second) : kv.second;
  }
  return out;
}

// An inline device with `base: NAME`: the registry device's own file with the given fields
// laid over it (a new `name` required), keeping the base's calibration (DeviceSpec::base).
std::optional<DeviceSpec> read_derived_device(Context& cx, const YAML::Node& item) {
  const YamlDoc& doc = cx.doc;
  YAML::Node b = item["base"];
  const DeviceSpec* base = b.IsScalar() ? cx.registry.find(b.Scalar()) : nullptr;
  if (base == nullptr || base->loc.file == doc.loc(item).file || !base->base.empty()) {
    doc.error(b, "'base' must name a device of the registry" +
                     (b.IsScalar() ? did_you_mean(b.Scalar(), cx.registry.all_names()) : "") +
                     " (`yirage-plan devices` lists them)");
    return std::nullopt;
  }
  if (!item["name"]) {
    doc.error(item, "a device derived from '" + base->name + "' needs a 'name' of its own");
    return std::nullopt;
  }
  YAML::Node over = YAML::Clone(item);
  over.remove("base");
  YAML::Node whole = YAML::LoadFile(base->loc.file);
  whole.remove("aliases");  // the base's names stay the base's
  std::optional<DeviceSpec> d = read_device(doc, overlay(whole, over));
  if (d)
    d->base = base->name;
  return d;
}

void read_inline_devices(Context& cx, MapReader& top) {
  YAML::Node n = top.get("devices");
  if (!n) {
    return;
  }
  if (!n.IsSequence()) {
    cx.doc.error(n, "'devices' must be a list of device definitions");
    return;
  }
  for (const YAML::Node& item : n) {
    bool derived = item.IsMap() && item["base"];
    if (auto spec = derived ? read_derived_device(cx, item) : read_device(cx.doc, item)) {
      cx.registry.add(std::move(*spec), cx.doc.diag());
    } else if (item.IsMap() && item["name"] && item["name"].IsScalar()) {
      cx.broken_devices.insert(to_lower(item["name"].Scalar()));
    }
  }
}

void read_groups(Context& cx, MapReader& top, ClusterSpec& c) {
  YAML::Node groups = top.require("node_groups");
  if (!groups)
    return;
  if (!groups.IsSequence() || groups.size() == 0) {
    cx.doc.error(groups, "'node_groups' must be a non-empty list of node groups");
    return;
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (auto g = read_group(cx, groups[i], i))
      c.groups.push_back(std::move(*g));
  }
}

}  // namespace

ClusterSpec parse_cluster(const std::string& path,
                          const std::string& text,
                          const DeviceRegistry& registry) {
  Diagnostics diag;
  YamlDoc doc(path, text, diag);
  ClusterSpec c;
  if (!doc.root() || doc.root().IsNull()) {
    if (diag.empty())
      diag.error(SourceLoc{path, 1, 1}, "the file is empty; expected a cluster");
    diag.throw_if_errors();
  }
  MapReader top(doc, doc.root(), "cluster");
  if (!top.valid())
    diag.throw_if_errors();
  c.loc = doc.loc(doc.root());
  c.name = top.string("name", true).value_or("");
  DeviceRegistry local = registry;
  Context cx{doc, local, {}, {}, {}};
  read_inline_devices(cx, top);
  read_groups(cx, top, c);
  if (YAML::Node n = top.get("network"))
    c.network = read_network(doc, n);
  if (diag.empty() && c.total_devices() > kMaxWholeNumber) {
    doc.error(top.key_node("node_groups"), "the cluster has " + std::to_string(c.total_devices()) +
                                               " devices; yirage plans clusters of at most " +
                                               std::to_string(kMaxWholeNumber));
  }
  if (diag.empty() && c.total_nodes() > 1 && !c.network) {
    doc.error(top.key_node("node_groups"), "the cluster has " + std::to_string(c.total_nodes()) +
                                               " nodes but no 'network' between them");
  }
  top.finish();
  diag.throw_if_errors();
  for (const std::string& name : cx.used_devices)
    c.device_types.push_back(*local.find(name));
  return c;
}

ClusterSpec load_cluster(const std::filesystem::path& path, const DeviceRegistry& registry) {
  Diagnostics diag;
  std::optional<std::string> text = read_file_text(path, diag);
  diag.throw_if_errors();
  return parse_cluster(path.string(), *text, registry);
}

std::optional<Fabric> device_fabric(const DeviceSpec& d,
                                    std::int64_t devices_per_node,
                                    Seconds latency,
                                    bool* latency_assumed) {
  *latency_assumed = false;
  for (FabricKind kind : {FabricKind::kNvswitch, FabricKind::kXgmi, FabricKind::kIci,
                          FabricKind::kHccs, FabricKind::kEthernet}) {
    const LinkSpec* link = fabric_link(d, kind);
    if (link == nullptr)
      continue;
    Fabric f;
    f.kind = kind == FabricKind::kNvswitch && devices_per_node <= 2 ? FabricKind::kNvlink : kind;
    f.bandwidth = link->bandwidth.value;
    if (link->latency) {
      f.latency = link->latency->value;
    } else {
      f.latency = latency;
      *latency_assumed = true;
    }
    return f;
  }
  return std::nullopt;
}

}  // namespace yirage::devices
