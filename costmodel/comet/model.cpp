#include "costmodel/comet/model.h"

#include "costmodel/comet/binding.h"
#include "costmodel/comet/collective.h"
#include "costmodel/comet/compute.h"
#include "costmodel/comet/energy.h"
#include "costmodel/comet/nest.h"
#include "costmodel/comet/report.h"
#include "costmodel/comet/staging.h"
#include "costmodel/comet/transfer.h"

#include <algorithm>
#include <functional>
#include <set>

namespace yirage::costmodel::comet {
namespace {

struct Evaluator {
  const ArchSpec& arch;
  const ProblemSpec& problem;
  const Mapping& m;
  const Options& opt;
  NestAnalysis nest;
  std::vector<NodeCost> costs;
  std::vector<NodeEnergy> energy;
  std::vector<bool> shared;  // per level: parent_child_ports_shared
  std::vector<int> depth;    // per level: depth in the hierarchy, the root 0 (E6's l)

  std::int64_t eval(int node);
  std::int64_t leaf(int node);
  std::int64_t spatial(int node);
  std::int64_t temporal(int node);
  std::int64_t collective(int node);
  std::int64_t pipelined_window(int node,
                                const std::vector<StageCost>& children,
                                std::int64_t iterations,
                                std::vector<ConflictStall>& cf) const;
  std::vector<ConflictStall> conflicts(int node, std::int64_t time_without_conflict) const;
  void add_demands(int node, int sibling, std::int64_t exec, std::vector<PortDemand>& out) const;

  std::int64_t iterations(int node, bool& uniform) const {
    std::set<std::int64_t> counts;
    for (const EntryNest& n : nest.entries[node])
      counts.insert(n.count);
    uniform = counts.size() <= 1;
    return counts.empty() ? 1 : *counts.rbegin();
  }

  // Cost of a child as its parent sees it: a collective under a temporal node runs once per
  // iteration of that node.
  std::int64_t seen_cost(int child) const {
    if (m.nodes[child].kind == NodeKind::kCollective)
      return costs[child].total * nest.collectives[child].repeats;
    return costs[child].total;
  }

  // Transfers of one entry: its unique tiles; the reference counts every iteration when the
  // node's entries iterate unequally often.
  std::int64_t transfers(const EntryNest& n, bool uniform) const {
    return uniform || !opt.parent_entry_quirk ? n.iterations() / n.reuse : n.iterations();
  }

  void record(int node,
              const TensorEntry& e,
              const EntryNest& n,
              bool child_side,
              double noc,
              std::int64_t count) {
    Access a;
    a.level = child_side ? e.child : e.target;
    a.tensor = e.tensor;
    a.tag = e.tag;
    a.target_side = !child_side;
    a.read_write = n.read_write;
    a.rmw = e.rmw;
    a.tile = n.tile;
    a.unique = std::max<std::int64_t>(1, n.moves.empty() ? 1 : n.moves.front().unique);
    a.children = n.moves.empty() ? 1 : n.moves.front().children;
    a.precision = e.precision;
    a.count = count;
    a.noc = noc;
    energy[node].accesses.push_back(a);
  }
};

std::int64_t Evaluator::eval(int node) {
  const MappingNode& n = m.nodes[node];
  std::int64_t total = 0;
  if (n.kind == NodeKind::kCollective)
    total = collective(node);
  else if (n.kind == NodeKind::kTile && m.leaf(node))
    total = leaf(node);
  else if (n.kind == NodeKind::kTile && n.loop == LoopType::kSpatial)
    total = spatial(node);
  else if (n.kind == NodeKind::kTile)
    total = temporal(node);
  costs[node].total = total;
  return total;
}

// A leaf moves its tensors between its buffers and the compute unit; the window of each
// iteration is one primitive's compute time (E9, E10), every transfer may hide behind it.
std::int64_t Evaluator::leaf(int node) {
  const MappingNode& n = m.nodes[node];
  const OperationInfo& op = m.nodes[n.children.front()].op;
  const int unit_level = n.entries.front().child;
  const ComputeType& unit = arch.compute_of(unit_level);
  WindowSpec w;
  w.per_iteration = primitive_cycles(unit, op, problem);
  w.node_iterations = iterations(node, w.uniform);
  std::vector<TensorTiming> timings;
  std::int64_t count = 0;
  for (std::size_t j = 0; j < n.entries.size(); ++j) {
    const EntryNest& en = nest.entries[node][j];
    double noc = 0;
    timings.push_back(time_entry(arch, n.entries[j], en, w, opt, noc));
    record(node, n.entries[j], en, false, 0, transfers(en, w.uniform));
    count = std::max(count, transfers(en, w.uniform));
  }
  ComputeAccess c;
  c.level = unit_level;
  c.op_type = op.type;
  c.op_name = op.name;
  c.tag = n.entries.front().tag;
  c.tensor = n.entries.front().tensor;
  c.count = count;
  c.volume = primitive_volume(op);
  c.instructions = unit.cls == ComputeClass::kSimd ? simd_instructions(unit, op) : 1;
  energy[node].compute = c;
  costs[node] = stage(timings, w.node_iterations, {}, shared, opt);
  return costs[node].total;
}

std::int64_t Evaluator::temporal(int node) {
  std::vector<StageCost> children;
  bool any_sequential = false;
  for (int c : m.members(node)) {
    eval(c);
    children.push_back({seen_cost(c), costs[c].ramp_up, costs[c].ramp_down});
  }
  for (Binding b : m.bindings(node))
    any_sequential = any_sequential || b == Binding::kSequential;
  if (children.size() == 1 || any_sequential)
    return sequential_cost(children);
  std::int64_t most = 1;
  for (const TensorEntry& e : m.nodes[node].entries)
    most = std::max(most, e.volume());
  const std::int64_t l_wo = pipeline_cost(children, most);  // E5, cycles
  costs[node].conflicts = conflicts(node, l_wo);
  return l_wo + total_conflict(costs[node].conflicts);  // E6: L = L_wo + CF, cycles
}

// The port demands of the pipelined children of `node` and their conflict stalls (E6).
std::vector<ConflictStall> Evaluator::conflicts(int node,
                                                std::int64_t time_without_conflict) const {
  if (!opt.conflict_stalls)
    return {};
  std::vector<PortDemand> demands;
  int sibling = 0;
  for (int c : m.members(node))
    add_demands(c, sibling++, 1, demands);
  return conflict_stalls(demands, time_without_conflict);
}

// E6 demand of one node of a sibling's subtree on each (memory, port) it moves data through:
// (steady-state mem + net cycles + RU on the read port or RD on the write port) x `exec`, the
// node's executions per execution of the sibling, in cycles. Below a spatial node (or a leaf)
// the children run once per iteration of it, as its window (E4) counts them.
void Evaluator::add_demands(int node,
                            int sibling,
                            std::int64_t exec,
                            std::vector<PortDemand>& out) const {
  const MappingNode& n = m.nodes[node];
  if (n.kind == NodeKind::kCollective)
    exec *= nest.collectives[node].repeats;
  else if (n.kind != NodeKind::kTile)
    return;
  for (const GroupCost& g : costs[node].groups)
    for (int p = 0; p < 2; ++p) {
      const PortCost& pc = g.port[p];
      std::int64_t busy = pc.cumulative + (p == 0 ? pc.ramp_up : pc.ramp_down);  // cycles
      out.push_back(PortDemand{sibling, g.target, depth[g.target], p, busy * exec});
    }
  if (n.kind != NodeKind::kTile)
    return;
  bool uniform = true;
  if (n.loop == LoopType::kSpatial || m.leaf(node))
    exec *= iterations(node, uniform);
  for (int c : m.members(node))
    add_demands(c, sibling, exec, out);
}

std::int64_t Evaluator::collective(int node) {
  const CollectiveInfo& c = m.nodes[node].collective;
  const CollectiveNest& cn = nest.collectives[node];
  CollectiveCost cc = collective_cost(arch, c, cn.in_tile, cn.out_tile, opt);
  NodeCost& nc = costs[node];
  GroupCost g;
  g.target = c.level;
  for (PortCost& p : g.port)
    p.cumulative = cc.total();
  nc.groups = {g};
  nc.total = cc.total();
  energy[node].collective_memory = cc.read_energy + cc.write_energy;
  energy[node].collective_noc = cc.noc_energy;
  energy[node].repeats = cn.repeats;
  return nc.total;
}

// Children of a spatial node claim the parent's entries by tag: a tile child the entries of
// the operations it serves, a collective child the entries tagged like it.
std::vector<std::pair<std::size_t, bool>> claimed_entries(const Mapping& m, int node) {
  std::vector<std::pair<std::size_t, bool>> out;  // entry index, claimed by a collective
  std::vector<bool> taken(m.nodes[node].entries.size(), false);
  for (int c : m.members(node)) {
    const MappingNode& child = m.nodes[c];
    for (std::size_t j = 0; j < taken.size(); ++j) {
      const std::string& tag = m.nodes[node].entries[j].tag;
      bool hit = child.kind == NodeKind::kCollective
                     ? child.collective.tag == tag
                     : std::any_of(child.entries.begin(), child.entries.end(),
                                   [&](const TensorEntry& e) { return e.tag == tag; });
      if (hit && !taken[j]) {
        taken[j] = true;
        out.emplace_back(j, child.kind == NodeKind::kCollective);
      }
    }
  }
  return out;
}

// Whether the node's siblings run sequentially (the binding left of it).
bool sequential_at_parent(const Mapping& m, int node) {
  int p = m.nodes[node].parent;
  if (p < 0)
    return false;
  const std::vector<int>& sib = m.nodes[p].children;
  auto it = std::find(sib.begin(), sib.end(), node);
  while (it != sib.begin()) {
    --it;
    if (m.nodes[*it].kind == NodeKind::kBinding)
      return m.nodes[*it].binding == Binding::kSequential;
  }
  return false;
}

// Cycles the children keep a shared-port memory busy, per parent-side port (§2.4).
PortUsage port_usage(const Mapping& m, const std::vector<NodeCost>& costs, int node) {
  PortUsage usage;
  auto add = [&](int c) {
    for (const GroupCost& g : costs[c].groups)
      for (int p = 0; p < 2; ++p)
        usage[g.target][1 - p] +=
            g.port[p].cumulative + (p == 0 ? g.port[p].ramp_up : g.port[p].ramp_down);
  };
  for (int c : m.members(node)) {
    if (costs[c].groups.empty())
      for (int cc : m.members(c))
        add(cc);
    else
      add(c);
  }
  return usage;
}

// A spatial node moves its entries to its children; the window of an iteration is the
// children's cost (summed when they run sequentially). Intermediate tensors and everything
// under a collective child pay compulsory stalls (§2.4).
std::int64_t Evaluator::spatial(int node) {
  const MappingNode& n = m.nodes[node];
  std::vector<StageCost> children;
  for (int c : m.members(node)) {
    eval(c);
    children.push_back({seen_cost(c), costs[c].ramp_up, costs[c].ramp_down});
  }
  std::vector<Binding> bindings = m.bindings(node);
  bool pipelined = std::any_of(bindings.begin(), bindings.end(),
                               [](Binding b) { return b != Binding::kSequential; });
  WindowSpec w;
  w.node_iterations = iterations(node, w.uniform);
  std::vector<ConflictStall> cf;
  w.per_iteration = pipelined ? pipelined_window(node, children, w.node_iterations, cf)
                              : sequential_cost(children);
  bool grouped = !bindings.empty();
  bool seq_parent = sequential_at_parent(m, node);
  PortUsage usage = port_usage(m, costs, node);
  std::vector<TensorTiming> timings;
  std::int64_t most = 1;
  for (auto [j, by_collective] : claimed_entries(m, node)) {
    const TensorEntry& e = n.entries[j];
    const EntryNest& en = nest.entries[node][j];
    w.hide = !by_collective && (grouped || seq_parent ? !en.dependent : true);
    double noc = 0;
    timings.push_back(time_entry(arch, e, en, w, opt, noc));
    record(node, e, en, false, 0, transfers(en, w.uniform));
    record(node, e, en, true, noc, transfers(en, w.uniform));
    most = std::max(most, en.iterations() / en.reuse);
  }
  for (const EntryNest& en : nest.entries[node])
    energy[node].spatial = std::max(energy[node].spatial, en.spatial);
  energy[node].iterations = most;
  if (timings.empty()) {  // nothing moves: the children still run every iteration
    costs[node].tmw = w.node_iterations * w.per_iteration;
    costs[node].conflicts = cf;
    return costs[node].tmw;
  }
  costs[node] = stage(timings, w.node_iterations, usage, shared, opt);
  costs[node].conflicts = cf;
  return costs[node].total;
}

// The window of one iteration of a spatial node whose children are pipelined: L_wo (E5) plus
// the conflict stalls of the children (E6), cycles; `cf` gets the conflict stalls per
// execution of the node, one window per iteration.
std::int64_t Evaluator::pipelined_window(int node,
                                         const std::vector<StageCost>& children,
                                         std::int64_t iterations,
                                         std::vector<ConflictStall>& cf) const {
  const std::int64_t l_wo = pipeline_cost(children, iterations);  // E5, cycles
  cf = conflicts(node, l_wo);
  const std::int64_t per_iteration = l_wo + total_conflict(cf);  // E6: L_wo + CF, cycles
  for (ConflictStall& s : cf)
    s.cycles *= iterations;  // cycles per iteration x iterations
  return per_iteration;
}

// Depth of each level in the architecture tree, the root 0.
std::vector<int> level_depths(const ArchSpec& arch) {
  std::vector<int> depth(arch.levels.size(), -1);
  std::function<int(int)> of = [&](int l) {
    if (depth[l] < 0) {
      const std::vector<int>& up = arch.levels[l].parents;
      depth[l] = up.empty() ? 0 : 1 + of(up.front());
    }
    return depth[l];
  };
  for (std::size_t l = 0; l < depth.size(); ++l)
    of(static_cast<int>(l));
  return depth;
}

}  // namespace

Report evaluate(const ArchSpec& arch,
                const ProblemSpec& problem,
                const Mapping& mapping,
                const Options& opt) {
  Evaluator ev{
      arch, problem, mapping, opt, analyze_nest(arch, problem, mapping, opt.parent_entry_quirk),
      {},   {},      {},      {}};
  ev.costs.resize(mapping.nodes.size());
  ev.energy.resize(mapping.nodes.size());
  for (const Level& l : arch.levels)
    ev.shared.push_back(l.memory >= 0 && arch.memories[l.memory].ports_shared);
  ev.depth = level_depths(arch);
  Report r;
  r.freq_ghz = opt.freq_ghz;
  if (mapping.nodes.empty())
    return r;
  r.latency = ev.eval(0);
  fill_report(ReportInputs{arch, mapping, ev.nest, ev.costs, ev.energy, opt}, r);
  return r;
}

}  // namespace yirage::costmodel::comet
