#include "costmodel/comet/report.h"

#include <map>

namespace yirage::costmodel::comet {
namespace {

struct Rows {
  const ArchSpec& arch;
  const Mapping& m;
  const NestAnalysis& nest;
  const std::vector<NodeCost>& costs;
  const std::vector<NodeEnergy>& energy;
  const Options& opt;
  Report& r;
  std::map<std::string, BreakdownRow> rows;

  BreakdownRow& row(const std::string& key, BreakdownRow::Kind kind) {
    BreakdownRow& b = rows[key];
    b.key = key;
    b.kind = kind;
    return b;
  }

  // CS = (RU + RD) per port, OS = L - CS - TMW, TMW = compute, each times the executions of
  // the node; a collective is all OS (§2.9).
  void tile(int node, std::int64_t exec) {
    const NodeCost& c = costs[node];
    if (c.groups.empty())
      return;
    std::string key;
    for (const GroupCost& g : c.groups)
      key += arch.levels[g.target].name + "-";
    BreakdownRow& b = row(key, BreakdownRow::Kind::kMemory);
    b.cs += c.cs * exec;
    b.os += opt.ordered_port_windows ? c.os() : c.os() * exec;  // the reference omits exec
    if (!m.leaf(node))
      return;
    BreakdownRow& op =
        row(m.nodes[m.nodes[node].children.front()].op.name, BreakdownRow::Kind::kOperation);
    op.tmw = (opt.ordered_port_windows ? 0 : op.tmw) + c.tmw * exec;
  }

  // Conflict stalls between the node's pipelined children (E6), one row per memory, each
  // times the executions of the node.
  void conflicts(int node, std::int64_t exec) {
    NodeResult& nr = r.nodes[node];
    for (const ConflictStall& s : costs[node].conflicts) {
      nr.cf += s.cycles;
      row("CONFLICT-" + arch.levels[s.memory].name, BreakdownRow::Kind::kConflict).os +=
          s.cycles * exec;
    }
  }

  void walk(int node, std::int64_t exec) {
    const MappingNode& n = m.nodes[node];
    NodeResult& nr = r.nodes[node];
    nr.total = costs[node].total;
    nr.executions = exec;
    if (n.kind == NodeKind::kCollective) {
      nr.executions = exec * nest.collectives[node].repeats;
      nr.os = nr.total;
      row(collective_name(n.collective.type) + "-" + std::to_string(node),
          BreakdownRow::Kind::kCollective)
          .os += nr.total * nr.executions;
      return;
    }
    if (n.kind != NodeKind::kTile)
      return;
    conflicts(node, exec);
    if (n.loop == LoopType::kSpatial || m.leaf(node)) {
      nr.cs = costs[node].cs;
      nr.os = costs[node].os();
      nr.tmw = costs[node].tmw;
      tile(node, exec);
      exec *= energy[node].iterations;
    }
    for (int c : m.members(node))
      walk(c, exec);
  }
};

}  // namespace

void fill_report(const ReportInputs& in, Report& r) {
  r.nodes.assign(in.m.nodes.size(), NodeResult{});
  Rows rows{in.arch, in.m, in.nest, in.costs, in.energy, in.opt, r, {}};
  rows.walk(0, 1);
  r.rows.clear();
  r.breakdown_total = 0;
  for (const auto& [key, b] : rows.rows) {
    r.rows.push_back(b);
    r.breakdown_total += b.total();
  }
  r.energy.clear();
  r.energy_total = 0;
  for (const auto& [key, pj] : energy_by_level(in.arch, in.m, in.energy, in.opt)) {
    r.energy.push_back(EnergyRow{key, pj});
    r.energy_total += pj;
  }
}

}  // namespace yirage::costmodel::comet
