// Memory-transaction latency of moving one tensor's tiles from a target memory to its child
// level: memory time limited by the memory, port and network bandwidths (E1), plus the NoC
// time of the implicit broadcast / scatter / gather to the spatial children (E2).
// Source: COMET (arXiv 2509.00599), comet-model.md §2.3 (E1, E2).
#pragma once

#include "costmodel/comet/arch.h"
#include "costmodel/comet/mapping.h"
#include "costmodel/comet/nest.h"
#include "costmodel/comet/options.h"
#include "costmodel/comet/staging.h"

#include <cstdint>

namespace yirage::costmodel::comet {

/// Latency of one iteration's transfer.
struct TransferTime {
  std::int64_t memory = 0;   // t_mem, cycles (E1)
  std::int64_t network = 0;  // t_net, cycles (E2)
  double noc_energy = 0;     // pJ
};

TransferTime transfer_time(const ArchSpec& arch,
                           const TensorEntry& e,
                           const EntryNest& n,
                           const Movement& mv,
                           const Options& opt);

/// What the node offers a tensor to hide behind, and whether it may.
struct WindowSpec {
  std::int64_t per_iteration = 0;    // W: the child's busy time per iteration, cycles
  std::int64_t node_iterations = 1;  // the node's largest iteration count
  bool uniform = true;               // all entries of the node iterate equally often
  bool hide = true;                  // false: compulsory stall
};

/// The timing of all iterations of one entry (ramp-up, steady-state slots, ramp-down), and
/// the sum of its NoC energy over the iterations.
TensorTiming time_entry(const ArchSpec& arch,
                        const TensorEntry& e,
                        const EntryNest& n,
                        const WindowSpec& w,
                        const Options& opt,
                        double& noc_energy);

}  // namespace yirage::costmodel::comet
