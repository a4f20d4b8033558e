#include "costmodel/comet/search.h"

#include "costmodel/comet/nest.h"

#include <map>
#include <tuple>
#include <utility>

namespace yirage::costmodel::comet {

// Each spatial node's tiles must fit the child memory that receives them: the sum over its
// entries of S x b / 8 bytes, twice over for a double-buffered memory when the node iterates
// (the next tile is prefetched into the second buffer; comet-model.md §9).
std::optional<Rejected> check_fit(const ArchSpec& arch,
                                  const ProblemSpec& problem,
                                  const Mapping& mapping,
                                  const Options& opt) {
  NestAnalysis nest = analyze_nest(arch, problem, mapping);
  for (std::size_t i = 0; i < mapping.nodes.size(); ++i) {
    const MappingNode& n = mapping.nodes[i];
    if (n.kind != NodeKind::kTile || n.loop != LoopType::kSpatial)
      continue;
    std::map<int, std::int64_t> bytes;  // per child memory level
    bool prefetch = false;              // a next tile arrives while this one is in use
    for (std::size_t j = 0; j < n.entries.size(); ++j) {
      const TensorEntry& e = n.entries[j];
      prefetch = prefetch || nest.entries[i][j].iterations() > 1;
      if (e.child >= 0 && !arch.levels[e.child].is_compute)
        bytes[e.child] += nest.entries[i][j].tile * e.precision / 8;
    }
    for (const auto& [level, b] : bytes) {
      const MemoryType& mem = arch.memory_of(level);
      bool twice = mem.double_buffered && prefetch && !opt.single_buffer_fit;
      std::int64_t need = twice ? 2 * b : b;
      if (mem.capacity() > 0 && need > mem.capacity())
        return Rejected{"node " + std::to_string(i) + ": " + std::to_string(need) +
                        " B of tiles in " + arch.levels[level].name + " (" +
                        std::to_string(mem.capacity()) + " B)"};
    }
  }
  return std::nullopt;
}

SearchResult search_space(const ArchSpec& arch,
                          const ProblemSpec& problem,
                          const std::string& mapping_path,
                          const std::string& mapping_text,
                          const std::vector<Candidate>& space,
                          const Options& opt) {
  SearchResult r;
  r.candidates = space.size();
  for (const Candidate& c : space) {
    Mapping m =
        parse_mapping(mapping_path, mapping_text, arch, problem, sweep_constants(c, problem));
    if (std::optional<Rejected> no = check_fit(arch, problem, m, opt)) {
      ++r.rejected;
      if (r.reasons.size() < 3)
        r.reasons.push_back(describe(c) + ": " + no->reason);
      continue;
    }
    Report rep = evaluate(arch, problem, m, opt);
    Priced p{c, rep.latency, rep.energy_total};
    if (!r.best_latency ||
        std::tie(p.latency, p.energy) < std::tie(r.best_latency->latency, r.best_latency->energy))
      r.best_latency = p;
    if (!r.best_energy ||
        std::tie(p.energy, p.latency) < std::tie(r.best_energy->energy, r.best_energy->latency))
      r.best_energy = p;
  }
  return r;
}

}  // namespace yirage::costmodel::comet
