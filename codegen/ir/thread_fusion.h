// The thread level of a µGraph, made by rules rather than searched (Mirage §4.2): which block
// tensors stay in registers (fused into the op that produces or consumes them) and which
// live in shared memory, and how many synchronisation levels one iteration needs. Shared
// memory of a block graph and the limit of a device follow from it.
#pragma once

#include "codegen/ir/ugraph.h"
#include "devices/device_spec.h"

#include <cstdint>
#include <vector>

namespace yirage::codegen {

struct ThreadPlan {
  std::vector<bool> in_registers;  // per block tensor
  std::vector<int> fused_into;     // per block tensor: the tensor it is fused into, or itself
  int loop_levels = 0;             // __syncthreads levels per for-loop iteration
  int epilogue_levels = 0;         // levels after the loop
};

/// The rules: (1) an elementwise unary op whose input has no other consumer runs in the
/// producer's registers; (2) a matmul consumed only by a `sum` accumulator accumulates in
/// registers (the accumulator is the matmul's register tile); (3) elementwise ops after the
/// loop whose results are only saved, or only feed such ops, run in the saver's epilogue.
/// Iterator tiles always go through shared memory.
ThreadPlan fuse_threads(const BlockGraph& g);

/// Bytes of shared memory one block needs: iterator tiles double-buffered (one tile loading
/// while the other is used), accumulators at 4 bytes per element, other tensors at the
/// graph's data type, tensors in registers excluded. `shapes` from block_shapes().
std::int64_t shared_memory_bytes(const BlockGraph& g,
                                 const std::vector<Shape>& shapes,
                                 devices::DType dtype);

/// The most shared memory one block may use: the scratchpad per compute unit less the 1 KiB
/// that CUDA reserves per block (CUDA C++ Programming Guide, "Shared Memory", compute
/// capability 8.x/9.x); 0 when the device publishes no scratchpad.
std::int64_t shared_memory_limit(const devices::DeviceSpec& d);

}  // namespace yirage::codegen
