#include "costmodel/comet/binding.h"

#include <algorithm>

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
