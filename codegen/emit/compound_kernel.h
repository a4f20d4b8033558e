// Kernels for a plan's fused compound operations (`yirage-plan --emit-kernels`): the
// operation's bundled tensor program at the plan's shape, superoptimized for the device type
// and generated for its backend. The compound operations yirage fuses work row by row of X
// (RMSNorm+Linear, gated MLP). Up to 16 rows of X the search runs at the plan's shape;
// beyond, on a tile of it (64 rows, K and N up to 1024: field tests at training shapes would
// take minutes), and the µGraph found is widened to the plan's shape with its tiles kept
// (`widen`). The widened graph is verified in full at twice the tile in each dim that grows
// (the widening itself is what is checked) and priced by the cost model at the plan's shape;
// where the library kernels are priced faster, they are what is emitted, and it says so.
#pragma once

#include "codegen/backend/backend.h"
#include "codegen/ir/ugraph.h"
#include "codegen/search/superoptimizer.h"
#include "costmodel/gpu_kernel.h"
#include "devices/device_spec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yirage::codegen {

/// "8192x4096x6144"
std::string dims_text(const std::vector<std::int64_t>& dims);

/// The code generator for a device type: CUDA for NVIDIA GPUs, HIP for AMD GPUs, CPU C++
/// for CPUs (the registry's `backend`); nullopt when yirage has none for it.
std::optional<Backend> backend_for(const devices::DeviceSpec& d);

/// The bundled program of compound operation `op` ("rmsnorm_linear", "gated_mlp") at the
/// costmodel's dims for it (M x K x N: X[M, K] and weights [K, N]), or nullopt with the
/// reason when no program is bundled for `op` or the dims do not fit it.
std::optional<KernelGraph> compound_program(const std::string& op,
                                            const std::vector<std::int64_t>& dims,
                                            std::string* why);

/// `g` over inputs of shapes `inputs` (each dim a whole multiple of `g`'s), its tiles kept:
/// the grid axis or for-loop over a grown dim grows with it; where a graph-defined op holds a
/// whole dim in one block, a free grid axis takes the new blocks (of X's rows, or of the
/// weights' columns), and its savers follow. Returns nullopt with the reason when no axis is
/// free or the result is not valid; whether it computes the program is for the verifier.
std::optional<KernelGraph> widen(const KernelGraph& g,
                                 const std::vector<Shape>& inputs,
                                 std::string* why);

/// widen() with `factor` times the rows of X (input 0).
std::optional<KernelGraph> widen_rows(const KernelGraph& g, std::int64_t factor, std::string* why);

struct CompoundKernel {
  std::string op;
  std::vector<std::int64_t> dims;      // the plan's (per device)
  std::vector<std::int64_t> searched;  // the shape searched (a tile of dims, or dims)
  KernelGraph graph;                   // the µGraph at the plan's shape
  double priced_s = 0;                 // the cost model's time for it at the plan's shape
  double library_s = 0;                // the same for the unfused program (library kernels)
  bool fused = false;                  // false: the library kernels (see `slower`)
  std::string slower;                  // why a µGraph found was not kept
  SuperoptimizeStats stats;
  std::optional<KernelSource> source;  // none when `why` says why not
  std::string why;
};

/// Searches, widens, checks, prices and generates the kernel of `op` at `dims` on `device`.
CompoundKernel compound_kernel(const std::string& op,
                               const std::vector<std::int64_t>& dims,
                               const devices::DeviceSpec& device,
                               const costmodel::GpuEfficiency& eff,
                               Backend backend,
                               const SuperoptimizeOptions& options);

}  // namespace yirage::codegen
