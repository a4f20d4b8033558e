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
    double per = opt.reference_energy_counts ? 1.0 : static_cast<double>(c.instructions);
    return ops * e * lanes * per;
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

  // What a walk carries down the tree (by value: siblings do not see each other's updates).
  struct State {
    std::int64_t mult = 1;  // executions of the node
    std::int64_t sp = 1;    // spatial instances above the node
    SpMap sp_map;           // reference: instances by tag and tensor
    SpMap iters;            // reference: transfers by tag and tensor
  };

  std::map<int, std::int64_t> node_mult;  // the multiplier each charged node used

  static std::int64_t max_count(const SpMap& map,
                                const std::vector<std::string>& tensors,
                                bool& found) {
    std::int64_t best = 1;
    for (const std::string& t : tensors)
      for (const auto& [tag, per] : map)
        if (auto it = per.find(t); it != per.end()) {
          best = std::max(best, it->second);
          found = true;
        }
    return best;
  }

  // The reference multiplies a node's transfers by the largest count recorded, under any
  // tag, for the tensors of its left siblings and its own; its compute by the counts of the
  // compute's tag.
  std::int64_t ref_mult(int node, bool root_child, const SpMap& iters) const {
    bool found = false;
    return root_child ? 1 : max_count(iters, tensors_left_of(node), found);
  }

  std::int64_t ref_compute_mult(int node, const std::string& tag, const SpMap& iters) const {
    std::vector<std::string> own;
    for (const TensorEntry& e : m.nodes[node].entries)
      own.push_back(e.tensor);
    if (auto it = iters.find(tag); it != iters.end()) {
      std::int64_t best = 1;
      for (const std::string& t : own)
        if (auto c = it->second.find(t); c != it->second.end())
          best = std::max(best, c->second);
      return best;
    }
    bool found = false;
    std::int64_t best = max_count(iters, own, found);
    return found ? best : max_count(iters, tensors_left_of(node), found);
  }

  void charge(int node, State& st) {
    const NodeEnergy& ne = nodes[node];
    int parent = m.nodes[node].parent;
    bool root_child = parent >= 0 && m.nodes[parent].parent < 0;
    const bool ref = opt.reference_energy_counts;
    const std::int64_t mult = ref ? ref_mult(node, root_child, st.iters) : st.mult;
    node_mult[node] = mult;
    auto instances = [&](const std::string& tag, const std::string& tensor) {
      return opt.instances_by_tag ? ref_instances(node, tag, tensor, st.sp_map, root_child) : st.sp;
    };
    for (const Access& a : ne.accesses) {
      if (ref && !root_child)
        st.iters[a.tag][a.tensor] = mult;
      out[arch.levels[a.level].name] += access_energy(a, instances(a.tag, a.tensor), mult);
      if (a.target_side || !opt.noc_energy || (ref && root_child))
        continue;
      double scale = ref ? 1.0 : static_cast<double>(st.sp);
      const std::string& name = arch.levels[a.level].name;
      std::string key = name;
      key += "<->";
      key += name;
      out[key] += a.noc * static_cast<double>(mult) * scale;
    }
    if (ne.compute) {
      const ComputeAccess& c = *ne.compute;
      std::int64_t cm = ref ? ref_compute_mult(node, c.tag, st.iters) : mult;
      out[arch.levels[c.level].name + "-" + c.op_name] +=
          compute_energy(c, instances(c.tag, c.tensor), cm);
    }
    for (const Access& a : ne.accesses) {
      if (!a.target_side)
        continue;
      if (opt.instances_by_tag) {
        auto [it, fresh] = st.sp_map[a.tag].try_emplace(a.tensor, ne.spatial);
        if (!fresh)
          it->second *= ne.spatial;
      }
      if (ref && !ne.compute) {
        auto [it, fresh] = st.iters[a.tag].try_emplace(a.tensor, a.count);
        if (!fresh)
          it->second *= a.count;
      }
    }
  }

  // Executions of a collective: the corrected model runs it once per iteration of its
  // temporal parent; the reference takes the transfers of its input tensor in the nearest
  // tile sibling on its left, under the last operation that moved it there.
  std::int64_t collective_times(int node, const State& st) const {
    if (!opt.reference_energy_counts)
      return nodes[node].repeats * st.mult;
    const CollectiveInfo& c = m.nodes[node].collective;
    std::string tag;
    int left = -1;
    for (int s : m.members(m.nodes[node].parent)) {
      if (s == node)
        break;
      if (m.nodes[s].kind != NodeKind::kTile)
        continue;
      left = s;
      for (const TensorEntry& e : m.nodes[s].entries)
        if (e.tensor == c.in_tensor)
          tag = e.tag;
    }
    if (left < 0 || !node_mult.count(left))
      return 0;
    for (const Access& a : nodes[left].accesses)
      if (a.target_side && a.tag == tag && a.tensor == c.in_tensor)
        return a.count * node_mult.at(left);
    return 0;
  }

  void walk(int node, State st) {
    const MappingNode& n = m.nodes[node];
    if (n.kind == NodeKind::kCollective) {
      const NodeEnergy& ne = nodes[node];
      const std::string& name = arch.levels[n.collective.level].name;
      double times = static_cast<double>(collective_times(node, st));
      out[name] += ne.collective_memory * times;
      if (opt.noc_energy)
        out[name + "<->" + name + "-" + collective_name(n.collective.type)] +=
            ne.collective_noc * times;
      return;
    }
    if (n.kind != NodeKind::kTile)
      return;
    if (n.loop == LoopType::kSpatial || m.leaf(node)) {
      charge(node, st);
      st.mult *= nodes[node].iterations;
      st.sp *= nodes[node].spatial;
    }
    for (int c : m.members(node))
      walk(c, st);
  }
};

}  // namespace

std::map<std::string, double> energy_by_level(const ArchSpec& arch,
                                              const Mapping& m,
                                              const std::vector<NodeEnergy>& nodes,
                                              const Options& opt) {
  Walker w{arch, m, nodes, opt, {}, {}};
  if (!m.nodes.empty())
    w.walk(0, {});
  return w.out;
}

}  // namespace yirage::costmodel::comet
