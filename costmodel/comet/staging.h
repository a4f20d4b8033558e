// Data staging at one tile node: ramp-up (first fills), steady state (each transfer overlaps
// the child's work on the previous tile and adds only its excess over that window) and
// ramp-down (last drain), with the windows shared by tensors that use the same memory port.
// Source: COMET (arXiv 2509.00599), comet-model.md §2.4 (E3, E4), §8 #7.
#pragma once

#include "costmodel/comet/binding.h"
#include "costmodel/comet/options.h"

#include <array>
#include <cstdint>
#include <map>
#include <vector>

namespace yirage::costmodel::comet {

/// One tensor's transfers at a node, by steady-state slot. A read tensor's tile i+1 is
/// prefetched during slot i; a written tensor's tile i drains during slot i+1.
struct TensorTiming {
  int target = -1;
  int child = -1;
  int port = 0;                        // 0: read (fill), 1: write (drain)
  bool hide = true;                    // false: a compulsory stall, never overlapped
  std::int64_t ramp_up = 0;            // t_0 of a read tensor, cycles
  std::int64_t ramp_down = 0;          // t_{I-r} of a written tensor, cycles
  std::int64_t cumulative = 0;         // sum of steady-state transfer cycles
  std::int64_t reuse = 1;              // r
  std::int64_t compute = 0;            // sum of windows over the node's iterations, cycles
  std::vector<std::int64_t> transfer;  // per slot: t_i (mem + net), cycles
  std::vector<std::int64_t> window;    // per unique slot: W x r, cycles
};

/// Cost of one (memory, port) of a node.
struct PortCost {
  std::int64_t ramp_up = 0, ramp_down = 0, compute = 0, cumulative = 0, reuse = 1;
  std::vector<std::int64_t> stall;       // optional stalls per iteration
  std::vector<std::int64_t> compulsory;  // compulsory stalls per iteration
};

/// Costs of one target memory of a node, by port.
struct GroupCost {
  int target = -1;
  std::array<PortCost, 2> port;
};

/// Cycles a child memory with shared parent/child ports is busy, per parent-side port.
using PortUsage = std::map<int, std::array<std::int64_t, 2>>;

/// L(node) = compute + RU + RD + sum_i stall_i (E4), and its breakdown.
struct NodeCost {
  std::int64_t compute = 0, ramp_up = 0, ramp_down = 0, stalls = 0;
  std::int64_t total = 0;
  std::int64_t cs = 0;            // compulsory: RU + RD per port, max over memories
  std::int64_t tmw = 0;           // total memory window (compute)
  std::vector<GroupCost> groups;  // by target level index
  /// Conflict stalls (E6) between the node's pipelined children, cycles per execution of the
  /// node; already part of `total` (through the window of a spatial node).
  std::vector<ConflictStall> conflicts;

  std::int64_t os() const { return total > cs + tmw ? total - cs - tmw : 0; }
};

/// Combines the tensors of one node (in processing order) over `iterations` iterations.
/// `usage` is subtracted from the windows of tensors moved into shared-port memories.
NodeCost stage(const std::vector<TensorTiming>& tensors,
               std::int64_t iterations,
               const PortUsage& usage,
               const std::vector<bool>& shared_port_levels,
               const Options& opt);

}  // namespace yirage::costmodel::comet
