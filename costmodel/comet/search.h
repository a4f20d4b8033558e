// Exhaustive search of the sweep space: every candidate of `enumerate_space` is checked for
// fit (tiles in their memories, double-buffered where the node prefetches), then priced by the
// model; the best by latency and the best by energy are kept. A candidate that does not fit
// is a value (Rejected), never an exception.
// Source: COMET (arXiv 2509.00599), comet-model.md §3.8 (the iterative mapper), §9 "search".
#pragma once

#include "costmodel/comet/arch.h"
#include "costmodel/comet/mapping.h"
#include "costmodel/comet/model.h"
#include "costmodel/comet/space.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yirage::costmodel::comet {

struct Rejected {
  std::string reason;
};

/// Why `mapping` does not fit `arch`, or nullopt when it fits.
std::optional<Rejected> check_fit(const ArchSpec& arch,
                                  const ProblemSpec& problem,
                                  const Mapping& mapping,
                                  const Options& opt = {});

struct Priced {
  Candidate candidate;
  std::int64_t latency = 0;  // cycles
  double energy = 0;         // pJ
};

struct SearchResult {
  std::size_t candidates = 0;
  std::size_t rejected = 0;
  std::vector<std::string> reasons;    // the first few rejections
  std::optional<Priced> best_latency;  // ties: lower energy, then earlier candidate
  std::optional<Priced> best_energy;   // ties: lower latency, then earlier candidate
};

/// Prices every candidate of `space` with the mapping template `mapping_text` (read as
/// `mapping_path`, its symbols from `sweep_constants`).
SearchResult search_space(const ArchSpec& arch,
                          const ProblemSpec& problem,
                          const std::string& mapping_path,
                          const std::string& mapping_text,
                          const std::vector<Candidate>& space,
                          const Options& opt);

}  // namespace yirage::costmodel::comet
