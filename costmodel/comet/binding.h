// Scheduling of sibling subtrees by their inter-tile bindings: sequential siblings run one
// after another; pipelined (and parallel, sharing) siblings are skewed by one iteration each.
// Source: COMET (arXiv 2509.00599), comet-model.md §2.5 (E5, E6), §8 #6.
#pragma once

#include <cstdint>
#include <vector>

namespace yirage::costmodel::comet {

/// One sibling's cost as the pipeline sees it (cycles).
struct StageCost {
  std::int64_t total = 0;      // L_c
  std::int64_t ramp_up = 0;    // RU_c, paid in its first slot
  std::int64_t ramp_down = 0;  // RD_c, paid in its last slot
};

/// Sequential: L = sum_c L_c.
std::int64_t sequential_cost(const std::vector<StageCost>& children);

/// Pipeline (E5): the k children are skewed by one of the parent's I iterations; the slots
/// outside the longest child's span add the largest per-slot time of the others:
/// L_wo = L* + sum_{s outside c*} max_{c != c*, active at s} tau_c(s), tau_c = L_c / I (+ RU_c
/// in its first slot, + RD_c in its last). Conflict stalls (E6) are not added.
std::int64_t pipeline_cost(const std::vector<StageCost>& children, std::int64_t iterations);

}  // namespace yirage::costmodel::comet
