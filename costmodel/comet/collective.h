// Collectives on the 2-D mesh NoC of one accelerator: the latency and energy of the network
// part (E7), used both for the implicit collective that a parent-to-children transfer amounts
// to and for explicit CollectiveOperation nodes, and the endpoint memory time and energy of
// explicit collectives (E8).
// Source: COMET (arXiv 2509.00599), comet-model.md §2.6 (E7, E8), §2.10, §8 #3, #4.
#pragma once

#include "costmodel/comet/arch.h"
#include "costmodel/comet/mapping.h"
#include "costmodel/comet/options.h"

#include <cstdint>
#include <vector>

namespace yirage::costmodel::comet {

/// The part of a mesh that P participants use: the smallest square sub-mesh that holds them,
/// clipped to the physical mesh (`network.mesh_x` x `network.mesh_y`).
struct MeshShape {
  std::int64_t x = 1, y = 1;
};

MeshShape mesh_shape(const NetworkSpec& network, std::int64_t participants);

/// Hops H and data-moved multiplier Phi of one broadcast/reduce/scatter/gather phase on an
/// X x Y mesh, row then column: H = Phi = (X-1) + (Y-1) (= 2(sqrt(P)-1) for a square).
std::int64_t mesh_hops(const MeshShape& m);

/// What one network transfer moves.
struct NetTransfer {
  CollectiveType type = CollectiveType::kBroadcast;
  std::int64_t tile = 0;          // S: elements of one tile
  std::int64_t unique = 1;        // unique tiles (0: nothing moves)
  std::int64_t participants = 1;  // P: spatial factor
  double bits = 8;                // b: bits per element
  ReduceOp op = ReduceOp::kNone;
};

/// T_net = H t_hop + (Q b / W) t_q [+ Q P c_op / W_simd], all-reduce and all-gather twice
/// over (E7). Cycles.
std::int64_t network_latency(const NetworkSpec& net, const NetTransfer& t, std::int64_t simd_width);

/// ORION/HISIM energy of the same transfer plus the reduction arithmetic, pJ.
double network_energy(const NetworkSpec& net, const NetTransfer& t);

/// An explicit collective's cost: endpoint memory time + network time, fully exposed (E8).
struct CollectiveCost {
  std::int64_t memory = 0;   // cycles
  std::int64_t network = 0;  // cycles
  double read_energy = 0;    // pJ at the level's memories
  double write_energy = 0;   // pJ
  double noc_energy = 0;     // pJ

  std::int64_t total() const { return memory + network; }
};

/// Cost of one execution of collective `c`, with `in_tile` and `out_tile` elements per
/// instance. With `CollectiveAlgorithm::kRing`, an all-reduce or all-gather runs as a ring on
/// the mesh (E7-E8 ring variant, comet-model.md §6, §8 #3): P participants, S elements of b
/// bits each, h_r = ring_step_hops, chunk c = ceil(S / P) elements (all-reduce) or S
/// (all-gather) of s_c = c b / 8 bytes, n = 2(P-1) steps (all-reduce) or P-1 (all-gather):
///   T_net = n (h_r t_hop + (c b / W) t_q) [+ (P-1) c c_op / W_simd, all-reduce]   cycles
///   T_mem = ceil(n (s_c / B_r + s_c / B_w) [+ (P-1) c_red s_c / B_w, all-reduce])  cycles
/// and the total is fully exposed, T_mem + T_net, as in E8.
CollectiveCost collective_cost(const ArchSpec& arch,
                               const CollectiveInfo& c,
                               std::int64_t in_tile,
                               std::int64_t out_tile,
                               const Options& opt);

/// Hops between ring neighbours on the X x Y sub-mesh of P participants [I]: 1 where a cycle
/// of 1-hop links through them exists (P = 2, or P even on a sub-mesh of at least 2 x 2),
/// else 2 (a folded ring: a line of three or more, or an odd count).
std::int64_t ring_step_hops(const MeshShape& m, std::int64_t participants);

/// Width of the SIMD unit that runs collective reductions (lanes).
std::int64_t reduction_simd_width(const ArchSpec& arch, const Options& opt);

}  // namespace yirage::costmodel::comet
