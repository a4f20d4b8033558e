#include "costmodel/comet/nest.h"

#include "devices/support/check.h"

#include <algorithm>
#include <set>

namespace yirage::costmodel::comet {
namespace {

std::set<std::string> projected_dims(const TensorUse* use) {
  std::set<std::string> dims;
  if (use != nullptr)
    for (const auto& rank : use->projection)
      dims.insert(rank.begin(), rank.end());
  return dims;
}

enum class Match { kExact, kTag, kTensor, kAnyOp };

struct Nester {
  const ProblemSpec& problem;
  const Mapping& m;
  NestAnalysis& out;
  bool reference = false;
  std::size_t last_parent_entry = 0;

  Factors ones() const {
    Factors f;
    for (const std::string& d : problem.dims)
      f[d] = 1;
    return f;
  }

  // Extent of everything below one iteration of `node` for entry `e` (§2.2: strides build up
  // bottom-up from the operation's tile primitive).
  Factors child_extent(int node, const TensorEntry& e) const {
    for (Match match : {Match::kExact, Match::kTag, Match::kTensor, Match::kAnyOp}) {
      for (int c : m.members(node)) {
        const MappingNode& child = m.nodes[c];
        if (child.kind == NodeKind::kOperation &&
            (match == Match::kAnyOp || (match != Match::kTensor && child.op.name == e.tag)))
          return child.op.primitive;
        if (child.kind != NodeKind::kTile || match == Match::kAnyOp)
          continue;
        for (const TensorEntry& ce : child.entries) {
          bool hit = match == Match::kExact ? ce.tensor == e.tensor && ce.tag == e.tag
                     : match == Match::kTag ? ce.tag == e.tag
                                            : ce.tensor == e.tensor;
          if (hit)
            return subtree_extent(c, ce);
        }
      }
    }
    return ones();
  }

  Factors subtree_extent(int node, const TensorEntry& e) const {
    Factors f = child_extent(node, e);
    for (auto& [d, x] : f)
      x *= e.factor(d);
    return f;
  }

  void temporal(const MappingNode& node,
                const TensorEntry& e,
                const std::set<std::string>& proj,
                EntryNest& n) const {
    std::vector<std::int64_t> radix;
    std::vector<bool> projected;
    for (const std::string& d : node.permutation) {
      radix.push_back(e.factor(d));
      projected.push_back(proj.count(d) > 0);
    }
    std::int64_t total = e.volume();
    std::vector<std::int64_t> digits(radix.size(), 0);
    for (std::int64_t idx = 0; idx < total; ++idx) {
      bool changed = idx == 0;
      for (std::size_t k = 0; idx > 0 && k < radix.size(); ++k) {  // inner loop first
        changed = changed || (projected[k] && radix[k] > 1);
        if (++digits[k] < radix[k])
          break;
        digits[k] = 0;
      }
      n.moves.push_back(Movement{.unique = changed ? 1 : 0, .children = 1});
    }
  }

  void spatial(int index, const TensorEntry& e, const std::set<std::string>& proj, EntryNest& n) {
    std::int64_t unique = 1;
    for (const std::string& d : proj)
      unique *= e.factor(d);
    n.spatial = e.volume();
    bool matched = false;
    EntryNest walk = parent_walk(index, e, proj, matched);
    std::int64_t iterations = std::max<std::int64_t>(1, walk.iterations());
    n.count = !matched && reference ? 1 : iterations;
    for (std::int64_t idx = 0; idx < iterations; ++idx) {
      bool reuse = idx > 0 && walk.moves[idx].unique == 0;
      n.moves.push_back(Movement{.unique = reuse ? 0 : unique, .children = n.spatial});
    }
  }

  // A spatial node moves one set of tiles per iteration of its parent tile node: the walk of
  // the parent's entry for the same tensor and operation. Without one, the corrected model
  // walks the parent's loop over this tensor's projection; the reference reads the entry of
  // the tensor before it (an uninitialised index in its code, in practice the previous one).
  EntryNest parent_walk(int index,
                        const TensorEntry& e,
                        const std::set<std::string>& proj,
                        bool& matched) {
    EntryNest walk;
    int p = m.nodes[index].parent;
    if (p < 0 || m.nodes[p].kind != NodeKind::kTile || m.nodes[p].entries.empty())
      return walk;
    const auto& pe = m.nodes[p].entries;
    for (std::size_t j = 0; j < pe.size(); ++j) {
      if (pe[j].tensor == e.tensor && pe[j].tag == e.tag) {
        last_parent_entry = j;
        matched = true;
        return out.entries[p][j];
      }
    }
    if (reference)
      return out.entries[p][std::min(last_parent_entry, pe.size() - 1)];
    std::size_t driver = 0;
    for (std::size_t j = 1; j < pe.size(); ++j)
      if (pe[j].volume() > pe[driver].volume())
        driver = j;
    temporal(m.nodes[p], pe[driver], proj, walk);
    return walk;
  }

  void tile(int index) {
    const MappingNode& node = m.nodes[index];
    last_parent_entry = 0;
    for (const TensorEntry& e : node.entries) {
      EntryNest n;
      const TensorUse* use = problem.tensor_use(e.tag, e.tensor);
      CHECK(use != nullptr) << "tensor " << e.tensor << " unchecked at load";
      n.extent = child_extent(index, e);
      n.tile = projected_volume(*use, n.extent);
      n.read_write = use->read_write;
      n.dependent = problem.intermediate(e.tensor);
      std::set<std::string> proj = projected_dims(use);
      if (node.loop == LoopType::kTemporal)
        temporal(node, e, proj, n);
      else
        spatial(index, e, proj, n);
      for (const Movement& mv : n.moves)
        n.actual += mv.unique != 0 ? 1 : 0;
      if (n.count == 0)
        n.count = n.iterations();
      n.reuse = std::max<std::int64_t>(1, n.count / std::max<std::int64_t>(1, n.actual));
      out.entries[index].push_back(std::move(n));
    }
  }

  void collective(int index) {
    const CollectiveInfo& c = m.nodes[index].collective;
    CollectiveNest& cn = out.collectives[index];
    int p = m.nodes[index].parent;
    const TensorUse* use = problem.tensor_use(c.tag, c.in_tensor);
    if (p < 0 || use == nullptr)
      return;
    for (const TensorEntry& e : m.nodes[p].entries) {
      cn.repeats = std::max(cn.repeats, e.volume());
      if (e.tensor == c.in_tensor && cn.in_tile == 0)
        cn.in_tile = projected_volume(*problem.tensor_use(e.tag, e.tensor), child_extent(p, e));
    }
    cn.out_tile = cn.in_tile;
  }
};

}  // namespace

std::int64_t projected_volume(const TensorUse& use, const Factors& extent) {
  std::int64_t v = 1;
  for (const auto& rank : use.projection) {
    std::int64_t r = 1 - static_cast<std::int64_t>(rank.size());
    for (const std::string& d : rank) {
      auto it = extent.find(d);
      r += it == extent.end() ? 1 : it->second;
    }
    v *= std::max<std::int64_t>(1, r);
  }
  return v;
}

NestAnalysis analyze_nest(const ArchSpec& arch,
                          const ProblemSpec& problem,
                          const Mapping& m,
                          bool reference) {
  NestAnalysis out;
  out.entries.resize(m.nodes.size());
  out.collectives.resize(m.nodes.size());
  Nester n{problem, m, out, reference};
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    if (m.nodes[i].kind == NodeKind::kTile)
      n.tile(static_cast<int>(i));
    else if (m.nodes[i].kind == NodeKind::kCollective)
      n.collective(static_cast<int>(i));
  }
  // Gather and all-gather grow the tensor along `dimension` by the source instances; scatter
  // splits it over the destinations (§2.1.3 size rules).
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    if (m.nodes[i].kind != NodeKind::kCollective)
      continue;
    const CollectiveInfo& c = m.nodes[i].collective;
    const TensorUse* use = problem.tensor_use(c.tag, c.in_tensor);
    bool along = use != nullptr && projected_dims(use).count(c.dimension) > 0;
    std::int64_t src = 1, dst = 1;
    for (int s : c.src)
      src *= arch.levels[s].instances;
    for (int d : c.dest)
      dst *= arch.levels[d].instances;
    CollectiveNest& cn = out.collectives[i];
    if (along && (c.type == CollectiveType::kGather || c.type == CollectiveType::kAllGather))
      cn.out_tile = cn.in_tile * src;
    else if (along && c.type == CollectiveType::kScatter)
      cn.out_tile = cn.in_tile / std::max<std::int64_t>(1, dst);
  }
  return out;
}

}  // namespace yirage::costmodel::comet
