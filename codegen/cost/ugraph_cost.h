// Ranking: a µGraph priced on a target device by the cost model (costmodel/): library
// matmuls as costmodel::gemm_kernel, other library ops as costmodel::stream_kernel (a row
// chain of them, codegen/lower/row_chain.h, as one), graph-defined ops as
// costmodel::fused_kernel, each tensor at the width the generated code holds it in. No formula
// lives here: this file only measures a µGraph (bytes, flops, blocks, iterations) and hands the
// numbers over.
#pragma once

#include "codegen/ir/ugraph.h"
#include "costmodel/gpu_kernel.h"
#include "devices/device_spec.h"

#include <vector>

namespace yirage::codegen {

struct UgraphCost {
  std::vector<costmodel::KernelEstimate> kernels;  // one per launch, in order
  devices::Seconds time;                           // their sum (kernels run one after another)
};

UgraphCost price_ugraph(const KernelGraph& g,
                        const devices::DeviceSpec& d,
                        const costmodel::GpuEfficiency& eff);

}  // namespace yirage::codegen
