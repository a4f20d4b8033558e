// Lowering of a µGraph to block programs (codegen's "plan memory" and "schedule" steps):
// every kernel op becomes one launch; a graph-defined op gets an operator schedule (the ops
// inside the for-loop, then those after it), a shared-memory plan (an offset per tile, tiles
// whose lifetimes do not overlap share space), a pipelining depth for its input tiles, and a
// storage class per accumulator (registers when each thread holds only a few elements,
// shared memory otherwise). Every tile is row-major in its data dims; device tensors are
// row-major and contiguous. Library ops lower to steps of their own: the CUDA backend calls
// cuBLAS for matmuls, every other op and backend gets a generated kernel; a row chain
// (row_chain.h) of library ops is one step.
#pragma once

#include "codegen/ir/ugraph.h"
#include "codegen/lower/row_chain.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yirage::codegen {

/// Threads per block of the generic GPU kernels (a multiple of 64: four HIP wavefronts or
/// eight CUDA warps); the CPU backend runs a block on one thread.
inline constexpr int kBlockThreads = 256;
/// An accumulator stays in registers when each thread holds at most this many elements.
inline constexpr std::int64_t kMaxRegistersPerThread = 8;

enum class Storage { kShared, kRegisters };

/// One graph-defined op, lowered.
struct LoweredBlock {
  BlockGraph graph;
  std::vector<Shape> inputs;          // the custom op's device input shapes
  std::vector<Shape> tiles;           // every block tensor's shape
  std::vector<bool> post;             // computed after the for-loop
  std::vector<int> in_loop;           // op indices run every iteration, in order
  std::vector<int> after;             // op indices run once after the loop, in order
  std::vector<Storage> storage;       // per block tensor
  std::vector<std::int64_t> offset;   // per block tensor: shared-memory offset in elements
  std::vector<std::int64_t> offset2;  // input tiles: the second pipeline buffer (or -1)
  std::int64_t shared_elems = 0;      // the plan's size in elements (fp32 slots)
  int pipeline_depth = 1;             // input tile buffers: 2 overlaps load and compute
  std::vector<Shape> outputs;         // the saved device tensors
};

/// One launch: a library op, a chain of library ops fused row-wise (row_chain.h: `op` is its
/// combine, reading only the chain's input), or a lowered graph-defined op.
struct LoweredStep {
  KernelOp op;
  std::vector<int> out;  // kernel tensor ids written
  std::optional<LoweredBlock> block;
  std::optional<RowChain> row;
};

/// The small-M form that the GPU backends run as a streaming GEMV: one graph-defined op
/// whose loop multiplies X[M, K] (M <= 16, replicated over the grid) by one or more
/// weights W[K, N] split along N, optionally accumulating rms(X) over K, with only
/// elementwise ops after the loop (the epilogue).
struct GemvForm {
  std::int64_t m = 0, k = 0, n = 0;
  int x_input = 0;                 // kernel input id of X
  std::vector<int> weight_inputs;  // kernel input ids of the weights, in accumulator order
  std::vector<int> matmul_accums;  // block tensor ids of the matmul accumulators
  int rms_accum = -1;              // block tensor id of the rms accumulator, or -1
  // The target's SMs (compute units) that the GEMV grid is sized for: the H100's unless the
  // caller knows the device (emitting for a plan's device type sets it).
  std::int64_t compute_units = 132;
};

struct BlockProgram {
  std::string name;
  KernelGraph graph;
  std::vector<Shape> shapes;  // every kernel tensor
  std::vector<LoweredStep> steps;
  std::optional<GemvForm> gemv;
};

/// Lowers a valid µGraph. Throws InternalError on an invalid one.
BlockProgram lower(const KernelGraph& g);

/// The GEMV form of a lowered graph, or nullopt (with the reason in `why`).
std::optional<GemvForm> match_gemv(const BlockProgram& p, std::string* why);

/// The schedule as comment lines ("grid [96, 1, 1] x for-loop 16; smem ...").
std::vector<std::string> describe(const BlockProgram& p);

}  // namespace yirage::codegen
