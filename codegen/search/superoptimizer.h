// The superoptimizer's driver: runs the generator (enumerator.h) over its top-level branches
// on worker threads, prices every schedule of every complete candidate with the cost model,
// and walks the ranking from the cheapest: each candidate is checked on sampled thread blocks
// over finite fields (tier 1, once per generated graph), and the first that then passes the
// full checks (tier 2: several whole-output field tests with fresh inputs and roots, then a
// float check against double) is chosen. Tests run lazily because at full shapes they cost
// far more than generation (RMSNorm+Linear: ~100 s of tier-1 tests against ~15 s of search).
// Results do not depend on the number of threads.
#pragma once

#include "codegen/cost/ugraph_cost.h"
#include "codegen/ir/ugraph.h"
#include "codegen/search/enumerator.h"
#include "costmodel/gpu_kernel.h"

#include <cstdint>
#include <functional>
#include <string>

namespace yirage::codegen {

struct SuperoptimizeOptions {
  SearchLimits limits;
  int threads = 2;
  std::uint64_t seed = 20250707;
  int sampled_blocks = 2;  // tier 1
  int full_tests = 3;      // tier 2, each with fresh inputs and root
  int finalists = 8;       // candidates tried in cost order before falling back
  double float_tolerance = 1e-3;
  /// A wall-clock bound on the whole search (0: none). Past it, the branches stop where they
  /// are and no further finalist is tested: the result is the best µGraph verified so far,
  /// or the library kernels, and `SuperoptimizeStats::timed_out` says so.
  double time_limit_s = 0;
  /// Called after each top-level branch, from a worker thread (done, total).
  std::function<void(std::size_t, std::size_t)> progress;
};

struct SuperoptimizeStats {
  std::size_t branches = 0;
  std::int64_t generated = 0;   // prefixes built
  std::int64_t pruned = 0;      // cut by abstract expressions
  std::int64_t candidates = 0;  // complete graphs
  std::int64_t verified = 0;    // passed tier 1 (of those reached in cost order)
  std::int64_t rejected = 0;    // failed tier 1 (fingerprints differ)
  std::int64_t priced = 0;      // schedules priced
  int finalists_checked = 0;    // went through tier 2
  int finalists_rejected = 0;
  bool truncated = false;    // a branch hit the state limit
  bool timed_out = false;    // the search stopped at the time limit
  bool field_tested = true;  // false when the program has no finite-field meaning
  double float_error = 0;    // of the chosen µGraph
};

struct Ranked {
  KernelGraph graph;
  UgraphCost cost;
};

struct SuperoptimizeResult {
  Ranked best;
  Ranked reference;  // the program as library kernels, one per op
  bool best_is_reference = false;
  SuperoptimizeStats stats;
};

SuperoptimizeResult superoptimize(const KernelGraph& reference,
                                  const devices::DeviceSpec& device,
                                  const costmodel::GpuEfficiency& eff,
                                  const SuperoptimizeOptions& options);

/// The full checks of tier 2 on one µGraph: `tests` field tests with fresh inputs and roots
/// from `seed` (skipped when the program has no field meaning), then the float check, spread
/// over `threads` threads. Returns an empty string when it passes, else what failed (the
/// first in that order).
std::string verify_full(const KernelGraph& reference,
                        const KernelGraph& candidate,
                        std::uint64_t seed,
                        int tests,
                        double tolerance,
                        double* float_error,
                        int threads = 1);

}  // namespace yirage::codegen
