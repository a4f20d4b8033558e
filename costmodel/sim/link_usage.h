// The load of every link over a simulated step, from the flows' routes and times: bytes,
// busy time, time saturated and time contended (internal to costmodel/sim).
#pragma once

#include "costmodel/sim/sim_platform.h"
#include "costmodel/sim/simulate.h"

#include <cstdint>
#include <vector>

namespace yirage::costmodel {

/// One simulated transfer: its ranks, size and the times it started and finished.
struct FlowTimes {
  std::int64_t src = 0;
  std::int64_t dst = 0;
  double bytes = 0;
  double start = 0;
  double end = 0;
};

/// Every link some flow crossed, by name. A flow occupies its links from the end of its
/// route's latency to its end, at its average rate, bytes / that time (SimGrid's rates change
/// only when flows start or finish; a flow's average is exact when its share never changed).
std::vector<SimLinkUsage> link_usage(const SimPlatform& platform,
                                     const std::vector<FlowTimes>& flows);

/// Up to `count` links with the longest contended time (then by name), contended only.
std::vector<SimLinkUsage> most_contended(const std::vector<SimLinkUsage>& links, std::size_t count);

}  // namespace yirage::costmodel
