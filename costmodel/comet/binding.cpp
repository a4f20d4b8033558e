#include "costmodel/comet/binding.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace yirage::costmodel::comet {

std::int64_t sequential_cost(const std::vector<StageCost>& children) {
  std::int64_t sum = 0;
  for (const StageCost& c : children)
    sum += c.total;
  return sum;
}

std::int64_t pipeline_cost(const std::vector<StageCost>& children, std::int64_t iterations) {
  if (children.empty())
    return 0;
  const std::int64_t n = std::max<std::int64_t>(1, iterations);
  const std::int64_t k = static_cast<std::int64_t>(children.size());
  std::int64_t star = 0;
  for (std::int64_t c = 1; c < k; ++c)
    if (children[c].total > children[star].total)
      star = c;
  std::int64_t extra = 0;
  for (std::int64_t s = 0; s < n + k - 1; ++s) {
    if (s >= star && s < star + n)
      continue;  // inside c*'s span, covered by L*
    std::int64_t slot = 0;
    for (std::int64_t c = 0; c < k; ++c) {
      if (c == star || s < c || s >= c + n)
        continue;
      std::int64_t tau = children[c].total / n;
      if (s == c)
        tau += children[c].ramp_up;
      if (s == c + n - 1)
        tau += children[c].ramp_down;
      slot = std::max(slot, tau);
    }
    extra += slot;
  }
  return children[star].total + extra;  // E5
}

}  // namespace yirage::costmodel::comet

namespace yirage::costmodel::comet {
namespace {

struct PortLoad {
  int depth = 0;
  std::int64_t cycles = 0;  // sum over the siblings, cycles
  std::set<int> users;      // siblings with a non-zero demand
};

}  // namespace

std::vector<ConflictStall> conflict_stalls(const std::vector<PortDemand>& demands,
                                           std::int64_t time_without_conflict) {
  std::map<std::pair<int, int>, PortLoad> ports;  // (memory, port)
  for (const PortDemand& d : demands) {
    if (d.cycles <= 0)
      continue;
    PortLoad& p = ports[{d.memory, d.port}];
    p.depth = d.depth;
    p.cycles += d.cycles;  // E6: sum_c demand_c(m, port), cycles
    p.users.insert(d.sibling);
  }
  std::map<int, ConflictStall> by_depth;  // M_l and where it is
  for (const auto& [key, p] : ports) {
    if (p.users.size() < 2)
      continue;  // one sibling alone: its own staging (E3, E4) already covers the port
    auto [it, fresh] = by_depth.try_emplace(p.depth, ConflictStall{key.first, key.second, 0});
    if (fresh || p.cycles > it->second.cycles)  // M_l = max over (m, port) at depth l, cycles
      it->second = ConflictStall{key.first, key.second, p.cycles};
  }
  std::vector<ConflictStall> out;
  for (const auto& [depth, m] : by_depth)
    if (m.cycles > time_without_conflict)  // CF_l = max(0, M_l - L_wo), cycles
      out.push_back(ConflictStall{m.memory, m.port, m.cycles - time_without_conflict});
  return out;
}

std::int64_t total_conflict(const std::vector<ConflictStall>& stalls) {
  std::int64_t sum = 0;
  for (const ConflictStall& s : stalls)
    sum += s.cycles;  // CF = sum_l CF_l (E6), cycles
  return sum;
}

}  // namespace yirage::costmodel::comet
