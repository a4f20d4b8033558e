// Energy of a COMET mapping: memory accesses per row width at both ends of every transfer
// (E11), compute (MAC and SIMD lane-ops), NoC energy of implicit transfers and explicit
// collectives, and the endpoint accesses of collectives, summed by level (E12).
// Source: COMET (arXiv 2509.00599), comet-model.md §2.10 (E11, E12), §8 #12, #13, #16.
#pragma once

#include "costmodel/comet/arch.h"
#include "costmodel/comet/mapping.h"
#include "costmodel/comet/options.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace yirage::costmodel::comet {

/// One side (target or child) of one tensor entry's transfers at a node.
struct Access {
  int level = -1;
  std::string tensor, tag;
  bool target_side = true;
  bool read_write = false;
  bool rmw = false;
  std::int64_t tile = 0;       // S, elements
  std::int64_t unique = 1;     // P_u, distinct tiles of the first iteration (>= 1)
  std::int64_t children = 1;   // n, children fed
  std::int64_t precision = 8;  // bits
  std::int64_t count = 0;      // A, transfers (iterations that move data)
  double noc = 0;              // pJ over all iterations (child side)
};

/// The compute unit's work at a leaf.
struct ComputeAccess {
  int level = -1;
  std::string op_type, op_name, tag, tensor;
  std::int64_t count = 0;         // primitives executed
  std::int64_t volume = 0;        // MACs or elements of one primitive
  std::int64_t instructions = 1;  // SIMD instructions of one primitive
};

/// Everything one node charges, before the instance and iteration multipliers.
struct NodeEnergy {
  std::vector<Access> accesses;
  std::optional<ComputeAccess> compute;
  double collective_memory = 0;  // pJ, one execution
  double collective_noc = 0;     // pJ, one execution
  std::int64_t repeats = 1;      // executions of a collective
  std::int64_t iterations = 1;   // executions of the children per execution of this node
  std::int64_t spatial = 1;      // spatial instances this node creates (spatial tiles)
};

/// Energy (pJ) by key: a memory level ("GB"), a compute level and op ("SE-EXP1"), a NoC
/// ("IB<->IB"), a collective's NoC ("GB<->GB-ALLREDUCE").
std::map<std::string, double> energy_by_level(const ArchSpec& arch,
                                              const Mapping& m,
                                              const std::vector<NodeEnergy>& nodes,
                                              const Options& opt);

}  // namespace yirage::costmodel::comet
