// Scheduling of sibling subtrees by their inter-tile bindings: sequential siblings run one
// after another; pipelined (and parallel, sharing) siblings are skewed by one iteration each,
// and pay conflict stalls where together they ask more of one memory port than the pipeline
// leaves time for.
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
/// in its first slot, + RD_c in its last). Conflict stalls (E6) come on top: `conflict_stalls`.
std::int64_t pipeline_cost(const std::vector<StageCost>& children, std::int64_t iterations);

/// The cycles one pipelined sibling's subtree keeps one port of one memory busy, over the span
/// the pipeline gives that sibling: steady-state transfers plus ramp-up (read port) or
/// ramp-down (write port), times the executions of the node that moves them.
struct PortDemand {
  int sibling = 0;          // index among the pipelined siblings
  int memory = -1;          // the memory's level in the architecture
  int depth = 0;            // level l of E6: the memory's depth in the hierarchy (root 0)
  int port = 0;             // 0: read (fill), 1: write (drain)
  std::int64_t cycles = 0;  // cycles
};

/// The conflict stall at one depth l of the memory hierarchy (E6).
struct ConflictStall {
  int memory = -1;          // the (memory, port) with the largest demand M_l at that depth
  int port = 0;             // 0: read, 1: write
  std::int64_t cycles = 0;  // max(0, M_l - L_wo), cycles

  bool operator==(const ConflictStall&) const = default;
};

/// Conflict stalls (E6): per (memory, port) used by at least two siblings, the demand is the
/// sum of their cycles on it; M_l is the largest demand among the memories at depth l, and
/// CF = sum_l max(0, M_l - L_wo), so that L = L_wo + CF. Returns the depths with CF_l > 0, by
/// depth; ties in M_l go to the lower memory index, then the read port.
std::vector<ConflictStall> conflict_stalls(const std::vector<PortDemand>& demands,
                                           std::int64_t time_without_conflict);

/// Sum of the cycles of `stalls` (CF of E6).
std::int64_t total_conflict(const std::vector<ConflictStall>& stalls);

}  // namespace yirage::costmodel::comet
