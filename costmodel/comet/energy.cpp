#include "costmodel/comet/energy.h"

#include "costmodel/comet/compute.h"

#include <algorithm>

namespace yirage::costmodel::comet {
namespace {

// Instances by tag and tensor, as the reference counts them (#12).
using SpMap = std::map<std::string, std::map<std::string, std::int64_t>>;

struct Walker {
  const ArchSpec& arch;
  const Mapping& m;
  const std::vector<NodeEnergy>& nodes;
  const Options& opt;
  std::map<std::string, double> out;

  // E11: N_sp x A x S x P_u x b / (8 w) x e (x2 for read-modify-write), pJ.
  double access_energy(const Access& a, std::int64_t sp, std::int64_t mult) const {
    const MemoryType& mem = arch.memory_of(a.level);
    double e = a.target_side ? (a.read_write ? mem.parent_write_energy : mem.parent_read_energy)
                             : (a.read_write ? mem.child_read_energy : mem.child_write_energy);
    std::int64_t pieces = a.target_side || opt.reference_energy_counts ? a.unique : a.children;
    double rows =
        static_cast<double>(a.tile * pieces * a.precision) / (static_cast<double>(mem.width) * 8.0);
    double energy = static_cast<double>(sp * a.count * mult) * rows * e;
    return a.rmw ? 2 * energy : energy;
  }

  double compute_energy(const ComputeAccess& c, std::int64_t sp, std::int64_t mult) const {
    const ComputeType& unit = arch.compute_of(c.level);
    double ops = static_cast<double>(sp * c.count * mult);
    double e = op_energy_pj(unit, c.op_type);
    if (unit.cls == ComputeClass::kMac && opt.reference_energy_counts) {
      // The reference keeps the energy of one primitive, and the product, in float.
      float per = static_cast<float>(static_cast<double>(c.volume) * e);
      return static_cast<float>(ops * per);
    }
    if (unit.cls == ComputeClass::kMac)
      return ops * static_cast<double>(c.volume) * e;
    double lanes = static_cast<double>(unit.width);
    return ops * e * lanes * (opt.reference_energy_counts ? 1.0 : c.instructions);
  }

  std::vector<std::string> tensors_left_of(int node) const {
    std::vector<std::string> out_tensors;
    int p = m.nodes[node].parent;
    for (int c : m.members(p)) {
      if (c == node)
        break;
      for (const TensorEntry& e : m.nodes[c].entries)
        out_tensors.push_back(e.tensor);
    }
    for (const TensorEntry& e : m.nodes[node].entries)
      out_tensors.push_back(e.tensor);
    return out_tensors;
  }

  std::int64_t ref_instances(int node,
                             const std::string& tag,
                             const std::string& tensor,
                             SpMap& sp,
                             bool root_child) const {
    auto by_tag = sp.find(tag);
    if (by_tag != sp.end()) {
      if (auto it = by_tag->second.find(tensor); it != by_tag->second.end())
        return it->second;
      std::int64_t best = 1;
      for (const TensorEntry& e : m.nodes[node].entries)
        if (auto it = by_tag->second.find(e.tensor); it != by_tag->second.end())
          best = std::max(best, it->second);
      by_tag->second[tensor] = best;
      return best;
    }
    if (root_child)
      return 1;
    std::int64_t best = 1;
    for (const std::string& t : tensors_left_of(node))
      for (const auto& [tg, per] : sp)
        if (auto it = per.find(t); it != per.end())
          best = std::max(best, it->second);
    return best;
  }

  void charge(int node, std::int64_t mult, std::int64_t sp, SpMap& sp_map) {
    const NodeEnergy& ne = nodes[node];
    int parent = m.nodes[node].parent;
    bool root_child = parent >= 0 && m.nodes[parent].parent < 0;
    auto instances = [&](const std::string& tag, const std::string& tensor) {
      return opt.instances_by_tag ? ref_instances(node, tag, tensor, sp_map, root_child) : sp;
    };
    for (const Access& a : ne.accesses) {
      out[arch.levels[a.level].name] += access_energy(a, instances(a.tag, a.tensor), mult);
      if (a.target_side || !opt.noc_energy || (opt.reference_energy_counts && root_child))
        continue;
      double scale = opt.reference_energy_counts ? 1.0 : static_cast<double>(sp);
      const std::string& name = arch.levels[a.level].name;
      out[name + "<->" + name] += a.noc * static_cast<double>(mult) * scale;
    }
    if (ne.compute) {
      const ComputeAccess& c = *ne.compute;
      std::string key = arch.levels[c.level].name + "-" + c.op_name;
      out[key] += compute_energy(c, instances(c.tag, c.tensor), mult);
    }
    if (!opt.instances_by_tag)
      return;
    for (const Access& a : ne.accesses) {
      if (!a.target_side)
        continue;
      auto [it, fresh] = sp_map[a.tag].try_emplace(a.tensor, ne.spatial);
      if (!fresh)
        it->second *= ne.spatial;
    }
  }

  void walk(int node, std::int64_t mult, std::int64_t sp, SpMap sp_map) {
    const MappingNode& n = m.nodes[node];
    if (n.kind == NodeKind::kCollective) {
      const NodeEnergy& ne = nodes[node];
      const std::string& name = arch.levels[n.collective.level].name;
      double times = static_cast<double>(ne.repeats * mult);
      out[name] += ne.collective_memory * times;
      if (opt.noc_energy)
        out[name + "<->" + name + "-" + collective_name(n.collective.type)] +=
            ne.collective_noc * times;
      return;
    }
    if (n.kind != NodeKind::kTile)
      return;
    bool charges = n.loop == LoopType::kSpatial || m.leaf(node);
    if (charges) {
      charge(node, mult, sp, sp_map);
      mult *= nodes[node].iterations;
      sp *= nodes[node].spatial;
    }
    for (int c : m.members(node))
      walk(c, mult, sp, sp_map);
  }
};

}  // namespace

std::map<std::string, double> energy_by_level(const ArchSpec& arch,
                                              const Mapping& m,
                                              const std::vector<NodeEnergy>& nodes,
                                              const Options& opt) {
  Walker w{arch, m, nodes, opt, {}};
  if (!m.nodes.empty())
    w.walk(0, 1, 1, {});
  return w.out;
}

}  // namespace yirage::costmodel::comet
