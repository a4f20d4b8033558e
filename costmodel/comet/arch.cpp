#include "costmodel/comet/arch.h"

#include "costmodel/comet/yaml_util.h"
#include "devices/support/check.h"
#include "devices/support/yaml_reader.h"

#include <algorithm>

namespace yirage::costmodel::comet {
namespace {

using devices::Diagnostics;
using devices::MapReader;
using devices::YamlDoc;

void read_memory_attributes(MapReader& a, MemoryType& t) {
  t.width = read_int(a, "width").value_or(0);
  t.depth = read_int(a, "depth").value_or(0);
  t.ports = read_int(a, "ports", false, 1).value_or(1);
  t.double_buffered = read_bool(a, "doublebuffered").value_or(false);
  t.reduction = read_bool(a, "reduction").value_or(false);
  t.ports_shared = read_bool(a, "parent_child_ports_shared").value_or(false);
  t.dma_contiguous = read_bool(a, "dma_contiguous").value_or(false);
  t.reduction_cost = read_number(a, "reduction_cost").value_or(1);
  t.parent_read_bw = read_number(a, "parent_read_bw").value_or(0);
  t.parent_write_bw = read_number(a, "parent_write_bw").value_or(0);
  t.child_read_bw = read_number(a, "child_read_bw").value_or(0);
  t.child_write_bw = read_number(a, "child_write_bw").value_or(0);
  t.link_read_bw = read_number(a, "link_read_bw").value_or(0);
  t.link_write_bw = read_number(a, "link_write_bw").value_or(0);
  // A generic `bw` sets all six bandwidths (bytes/cycle).
  if (std::optional<double> bw = read_number(a, "bw")) {
    t.parent_read_bw = t.parent_write_bw = t.child_read_bw = t.child_write_bw = *bw;
    t.link_read_bw = t.link_write_bw = *bw;
  }
  t.parent_read_energy = read_number(a, "parent_read_energy").value_or(0);
  t.parent_write_energy = read_number(a, "parent_write_energy").value_or(0);
  t.child_read_energy = read_number(a, "child_read_energy").value_or(0);
  t.child_write_energy = read_number(a, "child_write_energy").value_or(0);
}

void read_compute_attributes(MapReader& a, ComputeType& t) {
  read_int(a, "datawidth");
  t.capacity = read_int(a, "capacity").value_or(0);
  t.width = read_int(a, "computeWidth", true, 1).value_or(1);
  t.op_count = read_int(a, "computeOpC").value_or(0);
  t.latency = read_int(a, "computeLatency").value_or(1);
  t.startup = read_int(a, "startupLatency").value_or(0);
  t.compute_energy = read_number(a, "compute_energy").value_or(1);
  t.array_rows = read_int(a, "array_rows", false, 1).value_or(1);
  t.array_cols = read_int(a, "array_cols", false, 1).value_or(1);
  t.num_sa_rows = read_int(a, "num_sa_rows", false, 1).value_or(1);
  t.num_sa_cols = read_int(a, "num_sa_cols", false, 1).value_or(1);
}

template <class T, class Fill>
void read_types(
    const YamlDoc& doc, const YAML::Node& list, const char* what, Fill fill, std::vector<T>& out) {
  if (!list)
    return;
  if (!list.IsSequence()) {
    doc.error(list, std::string("'") + what + "' must be a list");
    return;
  }
  for (const YAML::Node& n : list) {
    MapReader m(doc, n, what);
    if (!m.valid())
      continue;
    T t;
    t.loc = doc.loc(n);
    t.name = m.string("name", true).value_or("");
    fill(m, t);
    m.finish();
    out.push_back(std::move(t));
  }
}

NetworkSpec read_network(MapReader& a, bool& link_transfers) {
  NetworkSpec s;
  s.loc = a.loc();
  if (std::optional<std::int64_t> x = read_int(a, "meshX", false, 1)) {
    s.mesh_x = *x;
    s.has_mesh = true;
    s.mesh_y = read_int(a, "meshY", false, 1).value_or(1);
  } else if (a.has("meshY")) {
    a.doc().error(a.key_node("meshY"), "'meshY' given without 'meshX'");
  }
  s.port_bw = read_int(a, "bw", true, 1).value_or(1);
  s.hop_latency = read_int(a, "hop_latency").value_or(1);
  s.queuing_delay = read_int(a, "queuing_delay").value_or(0);
  s.channel_width = read_int(a, "channel_width", false, 1).value_or(32);
  s.reduction_latency = read_int(a, "reduction_latency").value_or(0);
  s.broadcast = read_bool(a, "broadcast_support").value_or(false);
  s.reduction = read_bool(a, "reduction_support").value_or(false);
  link_transfers = read_bool(a, "link_transfers").value_or(false);
  a.choice("connection_type", {"MeshNetwork", "HXbarNetwork"});
  read_int(a, "efficiency");
  a.get("hierarchy_levels");
  return s;
}

struct Builder {
  const YamlDoc& doc;
  ArchSpec& arch;

  int type_index(const std::string& type, bool compute, const YAML::Node& at) {
    if (compute) {
      for (std::size_t i = 0; i < arch.computes.size(); ++i)
        if (arch.computes[i].name == type)
          return static_cast<int>(i);
    } else {
      for (std::size_t i = 0; i < arch.memories.size(); ++i)
        if (arch.memories[i].name == type)
          return static_cast<int>(i);
    }
    doc.error(at,
              "unknown " + std::string(compute ? "compute" : "memory") + " type '" + type + "'");
    return -1;
  }

  void children(MapReader& m, const char* key, EdgeKind kind, int parent);
  int level(const YAML::Node& n, int parent, EdgeKind kind);
};

void Builder::children(MapReader& m, const char* key, EdgeKind kind, int parent) {
  YAML::Node list = m.get(key);
  if (!list)
    return;
  if (!list.IsSequence()) {
    doc.error(list, std::string("'") + key + "' must be a list of levels");
    return;
  }
  for (const YAML::Node& c : list)
    level(c, parent, kind);
}

int Builder::level(const YAML::Node& n, int parent, EdgeKind kind) {
  MapReader m(doc, n, "level");
  if (!m.valid())
    return -1;
  std::string raw = m.string("name", true).value_or("?");
  auto parsed = parse_instance_name(raw);
  if (!parsed)
    doc.error(m.get("name"), "bad instance range in level name '" + raw + "'");
  std::string name = parsed ? parsed->first : raw;
  bool is_compute = read_bool(m, "is_compute").value_or(false);
  std::string type = m.string("type", true).value_or("");
  NetworkSpec net;
  bool link = false;
  if (YAML::Node attrs = m.get("attributes")) {
    MapReader a(doc, attrs, "level attributes");
    if (a.valid()) {
      net = read_network(a, link);
      a.finish();
    }
  } else if (parent >= 0) {
    doc.error(n, "level '" + name + "' needs 'attributes' with its network");
  }
  int index = arch.find_level(name);
  bool fresh = index < 0;
  if (fresh) {
    Level l;
    l.name = name;
    l.loc = doc.loc(n);
    l.type = type;
    l.is_compute = is_compute;
    l.instances = parsed ? parsed->second : 1;
    (is_compute ? l.compute : l.memory) = type_index(type, is_compute, m.get("type"));
    if (link)
      l.link_network = net;
    arch.levels.push_back(std::move(l));
    index = static_cast<int>(arch.levels.size()) - 1;
  } else if (!is_compute) {
    doc.error(m.get("name"), "level '" + name + "' is defined twice");
  }
  if (parent >= 0) {
    arch.levels[index].parents.push_back(parent);
    Edge e;
    e.parent = parent;
    e.child = index;
    e.kind = kind;
    e.network = net;
    arch.edges.push_back(e);
  }
  if (fresh) {
    children(m, "connects", EdgeKind::kConnect, index);
    children(m, "drains", EdgeKind::kDrain, index);
    children(m, "fills", EdgeKind::kFill, index);
  }
  m.finish();
  return index;
}

ArchSpec build(const YamlDoc& doc) {
  ArchSpec arch;
  arch.path = doc.path();
  MapReader top(doc, doc.root(), "architecture");
  if (!top.valid())
    return arch;
  read_types<ComputeType>(
      doc, top.get("ComputeTiles"), "compute type",
      [&](MapReader& m, ComputeType& t) {
        std::optional<std::string> cls = m.choice("class", {"mac", "simd"}, true);
        t.cls = cls == "simd" ? ComputeClass::kSimd : ComputeClass::kMac;
        MapReader a(doc, m.require("attributes"), "compute attributes");
        if (a.valid()) {
          read_compute_attributes(a, t);
          a.finish();
        }
      },
      arch.computes);
  read_types<MemoryType>(
      doc, top.get("MemoryTypes"), "memory type",
      [&](MapReader& m, MemoryType& t) {
        m.choice("class", {"SRAM", "DRAM"}, true);
        MapReader a(doc, m.require("attributes"), "memory attributes");
        if (a.valid()) {
          read_memory_attributes(a, t);
          a.finish();
        }
      },
      arch.memories);
  YAML::Node h = top.require("Hierarchy");
  if (h && (!h.IsSequence() || h.size() != 1))
    doc.error(h, "'Hierarchy' must be a list holding the root level (DRAM)");
  else if (h)
    Builder{doc, arch}.level(h[0], -1, EdgeKind::kConnect);
  top.finish();
  return arch;
}

}  // namespace

int ArchSpec::find_level(const std::string& name) const {
  for (std::size_t i = 0; i < levels.size(); ++i)
    if (levels[i].name == name)
      return static_cast<int>(i);
  return -1;
}

const NetworkSpec* ArchSpec::network(int parent, int child) const {
  for (const Edge& e : edges)
    if (e.parent == parent && e.child == child)
      return &e.network;
  return nullptr;
}

const MemoryType& ArchSpec::memory_of(int level) const {
  CHECK(level >= 0 && levels[level].memory >= 0) << "level is not a memory";
  return memories[levels[level].memory];
}

const ComputeType& ArchSpec::compute_of(int level) const {
  CHECK(level >= 0 && levels[level].compute >= 0) << "level is not a compute unit";
  return computes[levels[level].compute];
}

std::int64_t ArchSpec::total_instances(int level) const {
  std::int64_t n = levels[level].instances;
  while (!levels[level].parents.empty()) {
    int widest = levels[level].parents.front();
    for (int p : levels[level].parents)
      if (levels[p].instances > levels[widest].instances)
        widest = p;
    n *= levels[widest].instances;
    level = widest;
  }
  return n;
}

ArchSpec parse_arch(const std::string& path, const std::string& text) {
  Diagnostics diag;
  YamlDoc doc(path, text, diag);
  ArchSpec arch;
  if (doc.root())
    arch = build(doc);
  diag.throw_if_errors();
  return arch;
}

ArchSpec load_arch(const std::filesystem::path& path) {
  Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  return parse_arch(path.string(), *text);
}

}  // namespace yirage::costmodel::comet
