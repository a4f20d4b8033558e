#include "costmodel/comet/mapping.h"

#include "costmodel/comet/yaml_util.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace yirage::costmodel::comet {
namespace {

using devices::Diagnostics;
using devices::MapReader;
using devices::YamlDoc;

constexpr std::array<std::string_view, 6> kCollectiveTypes = {
    "broadcast", "reduction", "gather", "scatter", "allgather", "allreduce"};
constexpr std::array<std::string_view, 4> kNodeKinds = {
    "DataMovement_Tile", "Operation", "CollectiveOperation", "inter_tile_binding"};

// The choices of a MapReader::choice from a constant table.
template <std::size_t N>
std::vector<std::string> choices(const std::array<std::string_view, N>& a) {
  return {a.begin(), a.end()};
}

struct Reader {
  const YamlDoc& doc;
  const ArchSpec& arch;
  const ProblemSpec& problem;
  const Constants& constants;
  Mapping& out;

  int node(const YAML::Node& n, int parent);
  void tile(MapReader& m, MappingNode& node);
  void operation(MapReader& m, MappingNode& node);
  void collective(MapReader& m, MappingNode& node);

  int level(MapReader& m, const YAML::Node& at, const std::string& name) const {
    int l = arch.find_level(name);
    if (l < 0)
      doc.error(at, "unknown architecture level '" + name + "'");
    (void)m;
    return l;
  }

  bool known_dim(const std::string& d) const {
    return std::find(problem.dims.begin(), problem.dims.end(), d) != problem.dims.end();
  }

  std::int64_t factor_value(const std::string& text, const YAML::Node& at) const {
    std::optional<std::int64_t> v = constants.number(text);
    if (!v || *v < 1) {
      doc.error(at, "factor '" + text + "' is not a positive number or a constant holding one");
      return 1;
    }
    return *v;
  }

  // One factor row: every dimension gets one value per tensor entry.
  std::vector<Factors> factor_row(const YAML::Node& n, std::size_t tensors);
  Factors primitive(const YAML::Node& n);
};

std::vector<Factors> Reader::factor_row(const YAML::Node& n, std::size_t tensors) {
  std::vector<Factors> per_tensor(tensors);
  std::string error;
  std::optional<std::vector<Assignment>> row =
      n.IsScalar() ? parse_assignments(n.Scalar(), error) : std::nullopt;
  if (!row) {
    doc.error(n, error.empty() ? "a factor row must be text such as \"M=[1,1] N=[2,2]\""
                               : "bad factor row: " + error);
    return per_tensor;
  }
  for (const Assignment& a : *row) {
    if (!known_dim(a.dim)) {
      doc.error(n, "unknown dimension '" + a.dim + "' in factors");
      continue;
    }
    if (a.values.size() != tensors) {
      doc.error(n, "'" + a.dim + "' has " + std::to_string(a.values.size()) + " factors for " +
                       std::to_string(tensors) + " tensors");
      continue;
    }
    for (std::size_t i = 0; i < tensors; ++i)
      per_tensor[i][a.dim] = factor_value(a.values[i], n);
  }
  return per_tensor;
}

Factors Reader::primitive(const YAML::Node& n) {
  Factors f;
  std::string error;
  std::optional<std::vector<Assignment>> row =
      n && n.IsScalar() ? parse_assignments(n.Scalar(), error) : std::nullopt;
  if (!row) {
    doc.error(n, "bad 'TilePrimitive': " + (error.empty() ? "expected \"M=a N=b K=c\"" : error));
    return f;
  }
  for (const Assignment& a : *row) {
    if (!known_dim(a.dim) || a.values.size() != 1)
      doc.error(n, "bad 'TilePrimitive' entry for '" + a.dim + "'");
    else
      f[a.dim] = factor_value(a.values[0], n);
  }
  for (const std::string& d : problem.dims)
    f.try_emplace(d, 1);
  return f;
}

template <class T>
std::vector<T> list_or_empty(MapReader& m, std::string_view key, std::size_t want) {
  std::vector<T> out;
  YAML::Node n = m.get(key);
  if (!n)
    return std::vector<T>(want);
  if (!n.IsSequence() || n.size() != want) {
    m.doc().error(n, "'" + std::string(key) + "' must be a list of " + std::to_string(want) +
                         " entries, one per tensor");
    return std::vector<T>(want);
  }
  for (const YAML::Node& item : n)
    out.push_back(item.as<T>(T{}));
  return out;
}

std::vector<bool> bool_list(MapReader& m, std::string_view key, std::size_t want) {
  std::vector<bool> out;
  for (const std::string& s : list_or_empty<std::string>(m, key, want))
    out.push_back(s == "true" || s == "True" || s == "TRUE");
  return out;
}

void Reader::tile(MapReader& m, MappingNode& node) {
  std::optional<std::string> type = m.choice("type", {"temporal", "spatial"}, true);
  node.loop = type == "spatial" ? LoopType::kSpatial : LoopType::kTemporal;
  std::vector<std::string> tensors = m.strings("tensors").value_or(std::vector<std::string>{});
  std::size_t k = tensors.size();
  auto targets = list_or_empty<std::string>(m, "target", k);
  auto childs = list_or_empty<std::string>(m, "child", k);
  auto tags = list_or_empty<std::string>(m, "tag", k);
  auto precision = list_or_empty<std::int64_t>(m, "precision", k);
  auto rmw = bool_list(m, "rmw", k);
  auto wb = bool_list(m, "wb_output", k);
  node.entries.resize(k);
  for (std::size_t i = 0; i < k; ++i) {
    TensorEntry& e = node.entries[i];
    e.tensor = tensors[i];
    e.tag = tags[i];
    e.precision = precision[i];
    e.target = level(m, m.get("target"), targets[i]);
    e.child = level(m, m.get("child"), childs[i]);
    e.rmw = rmw[i];
    e.wb_output = wb[i];
    if (e.target >= 0 && arch.levels[e.target].is_compute)
      doc.error(m.get("target"), "target '" + targets[i] + "' is a compute level, not a memory");
    else if (e.target >= 0 && e.child >= 0 && arch.network(e.target, e.child) == nullptr)
      doc.error(m.get("child"),
                "the architecture has no network from '" + targets[i] + "' to '" + childs[i] + "'");
    if (e.precision < 1)
      doc.error(m.get("precision"), "precision must be a positive number of bits");
    if (problem.tensor_use(e.tag, e.tensor) == nullptr)
      doc.error(m.get("tensors"), "tensor '" + e.tensor + "' is not used by any operation");
  }
  YAML::Node rows = m.require("factors");
  std::size_t want = node.loop == LoopType::kSpatial ? 2 : 1;
  if (rows && (!rows.IsSequence() || rows.size() != want)) {
    doc.error(rows, "'factors' must hold " + std::to_string(want) + " row(s) for a " +
                        (want == 2 ? "spatial (X then Y)" : "temporal") + " tile");
  } else if (rows) {
    for (const YAML::Node& r : rows) {
      std::vector<Factors> row = factor_row(r, k);
      for (std::size_t i = 0; i < k; ++i)
        node.entries[i].rows.push_back(row[i]);
    }
  }
  std::string perm = m.string("permutation").value_or("");
  for (char c : perm) {
    std::string d(1, c);
    if (!known_dim(d))
      doc.error(m.get("permutation"), "unknown dimension '" + d + "' in permutation");
    else
      node.permutation.push_back(d);
  }
  for (const std::string& d : problem.dims)
    if (std::find(node.permutation.begin(), node.permutation.end(), d) == node.permutation.end())
      node.permutation.push_back(d);
}

void Reader::operation(MapReader& m, MappingNode& node) {
  node.op.type =
      m.choice("type", {"GEMM", "rowmax", "add", "exp", "rowsum", "div", "mult", "sqrt", "max"},
               true)
          .value_or("GEMM");
  node.op.name = m.string("name", true).value_or("");
  if (!node.op.name.empty() && problem.op(node.op.name) == nullptr)
    doc.error(m.get("name"), "operation '" + node.op.name + "' is not in the problem");
  node.op.primitive = primitive(m.require("TilePrimitive"));
  m.get("tensors");
  m.get("TileSteps");
  m.get("Scale");
  if (YAML::Node attrs = m.get("compute_attributes")) {
    MapReader a(doc, attrs, "compute_attributes");
    if (a.valid()) {
      for (const std::string& d :
           a.strings("reduction_dimensions").value_or(std::vector<std::string>{}))
        node.op.reduction_dims.push_back(constants.name(d));
      for (const std::string& f :
           a.strings("reduction_factors").value_or(std::vector<std::string>{}))
        node.op.reduction_factors.push_back(factor_value(f, a.get("reduction_factors")));
      if (node.op.reduction_dims.size() != node.op.reduction_factors.size())
        doc.error(attrs, "'reduction_dimensions' and 'reduction_factors' differ in length");
      read_bool(a, "rmw");
      read_bool(a, "specd");
      a.finish();
    }
  }
}

void Reader::collective(MapReader& m, MappingNode& node) {
  CollectiveInfo& c = node.collective;
  std::string t = m.choice("type", choices(kCollectiveTypes), true).value_or("allreduce");
  c.type = static_cast<CollectiveType>(
      std::find(kCollectiveTypes.begin(), kCollectiveTypes.end(), t) - kCollectiveTypes.begin());
  std::string op = m.choice("reduction_op", {"add", "max", "mult"}).value_or("");
  c.op = op == "add"    ? ReduceOp::kAdd
         : op == "max"  ? ReduceOp::kMax
         : op == "mult" ? ReduceOp::kMult
                        : ReduceOp::kNone;
  c.dimension = m.string("dimension").value_or("");
  c.in_tensor = m.string("in_tensor", true).value_or("");
  c.out_tensor = m.string("out_tensor").value_or(c.in_tensor);
  c.tag = m.string("tag").value_or("");
  c.precision = read_int(m, "precision", false, 1).value_or(8);
  std::string target = m.string("target", true).value_or("");
  c.level = level(m, m.get("target"), target);
  if (c.level >= 0 && !arch.levels[c.level].link_network)
    doc.error(m.get("target"),
              "level '" + target + "' has no link network (link_transfers: true) for collectives");
  if (std::optional<std::string> child = m.string("child"); child && *child != target)
    doc.error(m.get("child"), "a collective's 'child' must equal its 'target'");
  for (const char* key : {"src", "dest"}) {
    std::vector<int>& levels = std::string(key) == "src" ? c.src : c.dest;
    for (const std::string& name : m.strings(key).value_or(std::vector<std::string>{}))
      levels.push_back(level(m, m.get(key), name));
    if (!m.has(key))
      levels.push_back(c.level);
  }
  c.spatial_factor = read_int(m, "spatial_factor").value_or(0);
  c.algorithm = m.choice("algorithm", {"mesh", "ring"}).value_or("mesh") == "ring"
                    ? CollectiveAlgorithm::kRing
                    : CollectiveAlgorithm::kMesh;
  read_bool(m, "wb_output");
}

int Reader::node(const YAML::Node& n, int parent) {
  MapReader m(doc, n, "mapping node");
  int index = static_cast<int>(out.nodes.size());
  MappingNode node;
  node.loc = doc.loc(n);
  node.parent = parent;
  out.nodes.push_back(node);
  if (!m.valid())
    return index;
  std::string kind = m.choice("node_type", choices(kNodeKinds), true).value_or("DataMovement_Tile");
  node.kind = static_cast<NodeKind>(std::find(kNodeKinds.begin(), kNodeKinds.end(), kind) -
                                    kNodeKinds.begin());
  if (node.kind == NodeKind::kTile) {
    tile(m, node);
  } else if (node.kind == NodeKind::kOperation) {
    operation(m, node);
  } else if (node.kind == NodeKind::kCollective) {
    collective(m, node);
  } else {
    std::string b =
        m.choice("binding", {"sequential", "pipeline", "parallel", "sharing"}, true).value_or("");
    node.binding = b == "pipeline"   ? Binding::kPipeline
                   : b == "parallel" ? Binding::kParallel
                   : b == "sharing"  ? Binding::kSharing
                                     : Binding::kSequential;
  }
  out.nodes[index] = node;
  if (YAML::Node sub = m.get("subtree")) {
    if (!sub.IsSequence()) {
      doc.error(sub, "'subtree' must be a list of nodes");
    } else {
      for (const YAML::Node& c : sub) {
        int child = this->node(c, index);
        out.nodes[index].children.push_back(child);
      }
    }
  }
  if (node.kind == NodeKind::kTile && out.nodes[index].children.empty())
    doc.error(n, "a DataMovement_Tile needs a 'subtree'");
  m.finish();
  return index;
}

}  // namespace

std::int64_t TensorEntry::factor(const std::string& dim) const {
  std::int64_t f = 1;
  for (const Factors& r : rows)
    if (auto it = r.find(dim); it != r.end())
      f *= it->second;
  return f;
}

std::int64_t TensorEntry::volume() const {
  std::int64_t v = 1;
  for (const Factors& r : rows)
    for (const auto& [d, f] : r)
      v *= f;
  return v;
}

bool Mapping::leaf(int node) const {
  const MappingNode& n = nodes[node];
  return n.kind == NodeKind::kTile && n.children.size() == 1 &&
         nodes[n.children[0]].kind == NodeKind::kOperation;
}

std::vector<int> Mapping::members(int node) const {
  std::vector<int> out;
  for (int c : nodes[node].children)
    if (nodes[c].kind != NodeKind::kBinding)
      out.push_back(c);
  return out;
}

std::vector<Binding> Mapping::bindings(int node) const {
  std::vector<Binding> out;
  for (int c : nodes[node].children)
    if (nodes[c].kind == NodeKind::kBinding)
      out.push_back(nodes[c].binding);
  return out;
}

std::string collective_name(CollectiveType t) {
  static const std::array<const char*, 6> names = {"BROADCAST", "REDUCTION", "GATHER",
                                                   "SCATTER",   "ALLGATHER", "ALLREDUCE"};
  return names[static_cast<std::size_t>(t)];
}

Mapping parse_mapping(const std::string& path,
                      const std::string& text,
                      const ArchSpec& arch,
                      const ProblemSpec& problem,
                      const Constants& constants) {
  Diagnostics diag;
  YamlDoc doc(path, text, diag);
  Mapping out;
  out.path = path;
  if (doc.root()) {
    MapReader top(doc, doc.root(), "mapping file");
    if (top.valid()) {
      YAML::Node root = top.require("mapping");
      if (root)
        Reader{doc, arch, problem, constants, out}.node(root, -1);
      top.finish();
    }
  }
  diag.throw_if_errors();
  return out;
}

Mapping load_mapping(const std::filesystem::path& path,
                     const ArchSpec& arch,
                     const ProblemSpec& problem,
                     const Constants& constants) {
  Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  return parse_mapping(path.string(), *text, arch, problem, constants);
}

}  // namespace yirage::costmodel::comet
