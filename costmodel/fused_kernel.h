// One graph-defined kernel (a µGraph block program) on a GPU, priced with the structure of
// gpu_kernel.h (comet-model.md §2.4: ramp-up + steady state + ramp-down, wave quantization
// over the compute units): its thread blocks run in waves, each block loops over its
// for-loop loading input tiles and computing on them; the steady state is the larger of the
// matrix-unit time, the vector time, the HBM time and the L2 time.
#pragma once

#include "costmodel/gpu_kernel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace yirage::costmodel {

/// One input of a fused kernel.
struct FusedInput {
  double tensor_bytes = 0;  // the whole device tensor
  double tile_bytes = 0;    // what one block loads per iteration
  bool replicated = false;  // several blocks load the same tiles (an imap with φ)
};

/// What one thread block of a fused kernel does, in totals over its for-loop.
struct FusedProgram {
  std::string name;
  std::int64_t blocks = 1;
  std::int64_t iterations = 1;
  std::vector<FusedInput> inputs;
  double output_bytes = 0;       // per block, written once after the loop
  double matrix_flops = 0;       // per block per iteration, on the matrix units
  std::int64_t matrix_rows = 0;  // the M of the block's matmuls (padded to the unit's m)
  double vector_flops = 0;       // per block per iteration, elementwise and reductions
  double epilogue_flops = 0;     // per block, after the loop
  double shared_bytes = 0;       // per block
  // The block's critical path as a generated block program runs it (codegen's generic GPU
  // path; 0 for kernels that stream instead): one thread's dependent steps and the
  // block-wide barriers, over the whole kernel. Priced with GpuEfficiency::block_*_cycles.
  double serial_steps = 0;  // a thread's scalar steps
  double mma_steps = 0;     // a warp's matrix-unit k-steps
  double barriers = 0;
};

/// Prices a fused kernel. Blocks per compute unit: as many as its shared memory holds (at
/// most 2, as gemm_kernel assumes). A replicated input whose tensor fits half of L2 is read
/// from HBM once and from L2 by every other block (as gemm_kernel treats operands); other
/// inputs are read from HBM by every block that loads them. Matmuls with fewer rows than the
/// matrix unit's m run the unit at rows/m of its rate (the rest is padding). The steady
/// state is at least the serial latency: the waves in turn, each as long as one block's
/// dependent steps and barriers (blocks sharing a compute unit overlap their latencies).
KernelEstimate fused_kernel(const devices::DeviceSpec& d,
                            devices::DType dtype,
                            const GpuEfficiency& eff,
                            const FusedProgram& p);

}  // namespace yirage::costmodel
