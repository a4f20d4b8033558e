// The critical path of a generated block program (codegen's generic GPU path,
// backend/block_emitter.cpp): how many dependent steps one thread takes and how many
// block-wide barriers the block passes, over the whole kernel. The cost model prices them
// with the device's fitted cycles (costmodel::GpuEfficiency::block_*_cycles).
#pragma once

#include "codegen/ir/ugraph.h"

namespace yirage::codegen {

struct BlockLatency {
  double steps = 0;      // one thread's dependent scalar steps
  double mma_steps = 0;  // one warp's m16n8k16 k-steps (operands gathered from shared memory)
  double barriers = 0;   // block-wide barriers
};

/// The critical path of the block program emitted for `b` (tile shapes `tiles`, as
/// block_shapes gives them). `mma`: the backend runs block matmuls of whole m16n8k16 tiles on
/// the matrix units (CUDA), a warp's tiles one k-step of 16 after another; otherwise a matmul
/// output element is k scalar steps of one multiply-add.
BlockLatency block_latency(const BlockGraph& b, const std::vector<Shape>& tiles, bool mma);

}  // namespace yirage::codegen
