// The COMET model of one compound operation on one accelerator: a pure function from
// architecture x problem x mapping to latency (cycles), its breakdown into compulsory stalls
// (CS), optional stalls (OS) and compute windows (TMW) per memory group, op and collective,
// and energy by level.
// Source: COMET (arXiv 2509.00599), comet-model.md §2 (E1-E12), §2.8-§2.9 (report).
#pragma once

#include "costmodel/comet/arch.h"
#include "costmodel/comet/mapping.h"
#include "costmodel/comet/options.h"
#include "costmodel/comet/problem.h"

#include <cstdint>
#include <string>
#include <vector>

namespace yirage::costmodel::comet {

/// One row of the latency breakdown (cycles). A memory-group row ("DRAM-", "OB-IB-WB-") has
/// CS and OS, an operation row ("GEMM") TMW, a collective row ("ALLREDUCE-12") OS, a conflict
/// row ("CONFLICT-OB", E6: pipelined siblings contending for that memory's ports) OS.
struct BreakdownRow {
  std::string key;
  enum class Kind { kMemory, kOperation, kCollective, kConflict } kind = Kind::kMemory;
  std::int64_t cs = 0, os = 0, tmw = 0;

  std::int64_t total() const { return cs + os + tmw; }
};

struct EnergyRow {
  std::string key;
  double pj = 0;
};

/// Per node: its latency for one execution and its breakdown.
struct NodeResult {
  std::int64_t total = 0;  // L(node), cycles
  std::int64_t cs = 0, os = 0, tmw = 0;
  std::int64_t cf = 0;          // conflict stalls between its pipelined children (E6), cycles
  std::int64_t executions = 1;  // times the node runs per execution of the root
};

struct Report {
  std::int64_t latency = 0;          // L(root), cycles
  std::int64_t breakdown_total = 0;  // sum of the rows (equals `latency` without overlap)
  std::vector<BreakdownRow> rows;    // by key
  std::vector<EnergyRow> energy;     // by key
  double energy_total = 0;           // pJ
  std::vector<NodeResult> nodes;     // by mapping node
  double freq_ghz = 1.0;

  double seconds() const { return static_cast<double>(latency) / (freq_ghz * 1e9); }
};

/// Evaluates `mapping` of `problem` on `arch`.
Report evaluate(const ArchSpec& arch,
                const ProblemSpec& problem,
                const Mapping& mapping,
                const Options& opt = {});

}  // namespace yirage::costmodel::comet
