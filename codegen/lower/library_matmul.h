// How a library matmul runs where cuBLAS does it (the CUDA backend, codegen/backend/
// cublas_step.cpp), for the backend to emit and the cost model to price the same launches.
// cuBLAS multiplies operands of one type and gives fp32 products only in fp32: an fp16
// operand beside an fp32 one (the generated code holds intermediates in fp32) is widened
// first, and an fp32 product bound for an fp16 tensor is narrowed after. fp32 operands run in
// TF32, and a TF32 matmul over few output tiles splits K into slices multiplied as one batch
// and summed after in slice order.
#pragma once

#include "codegen/ir/ugraph.h"

#include <cstdint>
#include <vector>

namespace yirage::codegen {

/// The split of K: the most slices (a power of two dividing K) that keep the batch within
/// kSplitTiles 64 x 64 output tiles and each slice at least kMinSliceK long (GQA decode's
/// P V, 8 tiles of K = 4096: 16 slices of 256). fp16 matmuls are not split: cuBLAS's fp16
/// kernels split K themselves.
inline constexpr std::int64_t kSplitTiles = 132;
inline constexpr std::int64_t kMinSliceK = 256;

struct LibraryMatmul {
  std::int64_t batch = 1, m = 0, k = 0, n = 0;
  std::int64_t sa = 0, sb = 0;  // batch strides of A and B (0 for an operand without)
  bool fp32 = false;            // an operand is fp32: the product runs in TF32
  int widened = -1;             // the operand (0 or 1) widened from fp16 to fp32, or -1
  bool narrowed = false;        // an fp32 product narrowed into the fp16 output
  std::int64_t slices = 1;      // K slices (1: not split)
};

/// Whether kernel tensor t is one of the program's inputs or outputs (held in its own type;
/// every other tensor of the generated code is fp32).
bool program_tensor(const KernelGraph& g, int t);

/// The plan of library matmul `op` writing kernel tensor `out` (shapes: kernel_shapes(g)).
LibraryMatmul library_matmul(const KernelGraph& g,
                             const std::vector<Shape>& shapes,
                             const KernelOp& op,
                             int out);

}  // namespace yirage::codegen
