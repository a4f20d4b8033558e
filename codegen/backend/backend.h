// Code generation from lowered µGraphs (codegen/lower/block_program.h): one emitter per
// target sharing the block-body emitter and the helper prelude. Each generated file is named
// after its µGraph, carries its schedule in a comment, and exports C entry points:
//   CPU:  void NAME(const float* const* inputs, float* const* outputs)    (OpenMP over blocks)
//   CUDA/HIP: long NAME_workspace_bytes(); int NAME_launch(const void* const* inputs,
//             void* const* outputs, void* workspace, stream)  (fp16 tensors; workspace zeroed
//             once before the first launch)
#pragma once

#include "codegen/backend/code_writer.h"
#include "codegen/lower/block_program.h"

#include <string>
#include <vector>

namespace yirage::codegen {

enum class Backend { kCpu, kCuda, kHip };

/// "cpu", "cuda", "hip"
std::string backend_name(Backend b);

struct KernelSource {
  std::string file_name;  // NAME.cpp, NAME.cu or NAME.hip
  std::string entry;      // NAME: a C identifier derived from the µGraph's name
  std::string text;
};

/// The generated file for `p` on `b`. GPU backends take the GEMV path when p.gemv is set.
KernelSource emit_kernels(const BlockProgram& p, Backend b);

// --- shared by the emitters (not for callers) ---

/// A C identifier: letters, digits and '_' of `name`, other characters as '_'.
std::string c_identifier(const std::string& name);
std::string prelude_common();
std::string prelude_cpu();
std::string prelude_gpu(Backend b);

/// The C type of kernel tensor `t` in the generated code (inputs, outputs, intermediates).
std::string tensor_type(const BlockProgram& p, int t);
/// Whether kernel tensor t is an fp32 intermediate that some step writes (the workspace holds
/// those; a row chain's fused tensors are written by none).
bool is_intermediate(const BlockProgram& p, int t);

// Library matmuls on CUDA call cuBLAS (cublas_step.cpp).
bool uses_cublas(const LoweredStep& s, Backend b);
std::string cublas_prelude();
/// Blocks for one thread an element of a grid-wide loop: at most 4096 (the threads then loop).
std::int64_t grid_blocks(std::int64_t threads);
/// The K slices of a cuBLAS matmul step (codegen/lower/library_matmul.h; 1: not split).
std::int64_t cublas_slices(const BlockProgram& p, const LoweredStep& s, Backend b);

/// A cuBLAS matmul's fp32 buffers in the workspace (byte offsets, -1 if none): its widened
/// operand, its result before narrowing, or its K slices' products.
struct CublasBuffers {
  std::int64_t operand = -1, result = -1, parts = -1;
};

/// The buffers of step s, taken from the workspace at `at` (advanced, 256-byte aligned).
CublasBuffers cublas_buffers(const BlockProgram& p,
                             const LoweredStep& s,
                             Backend b,
                             std::int64_t& at);
/// The launcher's lines for library matmul step i: the widened operand, the call (split or
/// not), the narrowed result or the slices' sum.
void emit_cublas_step(
    CodeWriter& w, const BlockProgram& p, std::size_t i, CublasBuffers at, Backend b);

/// The body of one thread block of `step` (its grid coordinates in bx, by, bz; the kernel
/// tensors in variables k0, k1, ...; shared memory in `smem`).
void emit_block_body(CodeWriter& w, const BlockProgram& p, const LoweredStep& step, Backend b);

/// A library op over whole kernel tensors, run by the block's threads (or one CPU thread).
/// `grid`: on a GPU, over the whole grid (one output element a thread, or one warp a row of
/// a reduction over the last dim); else the helpers' own loop (a CPU).
void emit_library_op(CodeWriter& w, const BlockProgram& p, const LoweredStep& step, bool grid);
/// Whether a library op is a reduction over the last dim (a warp a row on a GPU).
bool library_reduces_rows(const BlockProgram& p, const LoweredStep& step);
/// Rows at least this long run a row chain one block a row on a GPU (shorter: a warp a row).
inline constexpr std::int64_t kRowChainBlockLen = 512;
/// Whether a GPU runs the row chain `step` one block a row.
bool library_row_blocks(const LoweredStep& step);

/// The schedule comment of `p` ("// launch 0: grid ...").
void emit_schedule_comment(CodeWriter& w, const BlockProgram& p, const std::string& extra);

/// The GEMV kernel and its launcher for p.gemv (CUDA or HIP): on CUDA with one weight and
/// M <= 16, weights read straight into tensor-core fragments (gemv_direct_emitter.cpp);
/// else on CUDA with 4 < M <= 16, a shared-memory ring read by ldmatrix (gemv_mma_emitter.cpp);
/// else fp32 FMAs (gemv_emitter.cpp).
void emit_gemv(CodeWriter& w, const BlockProgram& p, Backend b);
/// The GEMV paths' workspace size and launcher: a grid of (N / NB, KS) blocks of `threads`;
/// with `pdl` (CUDA), a programmatic dependent launch on sm_90 devices unless YR_PDL is 0;
/// with `tma`, NAME_launch_tma first (gemv_tma_emitter.cpp), the grid only where it declines.
void emit_gemv_launcher(CodeWriter& w,
                        const GemvForm& f,
                        const std::string& name,
                        Backend b,
                        const std::string& threads,
                        bool pdl = false,
                        bool tma = false);

/// The tensor-core variant of the GEMV path (CUDA, 4 < M <= 16): whether it applies, its
/// constants, its per-k16-step helper and its kernel body up to the partial tiles in `red`.
bool gemv_uses_mma(const GemvForm& f, Backend b);
/// Whether the CUDA GEMV path reads the weights straight into tensor-core fragments
/// (gemv_direct_emitter.cpp), and its parts.
bool gemv_uses_direct(const GemvForm& f, Backend b);
void emit_gemv_direct_constants(CodeWriter& w, const GemvForm& f);
/// The direct path's estimated streaming time for its chosen tiling (no start or end).
double gemv_direct_seconds(const GemvForm& f);
/// The Hopper variant of the direct path (gemv_tma_emitter.cpp): its estimated streaming time
/// (-1 where it does not apply), whether the emitted code takes it on sm_90 (applies and is
/// estimated no slower), and its constants, kernel and launcher NAME_launch_tma (-1: not taken).
double gemv_tma_seconds(const GemvForm& f);
bool gemv_uses_tma(const GemvForm& f, Backend b);
void emit_gemv_tma(CodeWriter& w, const GemvForm& f, const std::string& name);
/// Replaces every `from` in s with `to` (the backends' code templates).
void replace_all(std::string& s, const std::string& from, const std::string& to);
void emit_gemv_direct_helpers(CodeWriter& w);
/// yr_arrive: a K slice's acq_rel count at its tile's counter (CUDA or HIP).
void emit_gemv_arrive_helper(CodeWriter& w, Backend b);
void emit_gemv_direct_kernel(CodeWriter& w, const GemvForm& f, const std::string& name);
/// yr_grid_wait and yr_launch_dependents: Hopper's programmatic dependent launch (CUDA).
void emit_pdl_helpers(CodeWriter& w);
void emit_gemv_mma_constants(CodeWriter& w, const GemvForm& f);
void emit_gemv_mma_step(CodeWriter& w);
void emit_gemv_mma_body(CodeWriter& w, const GemvForm& f);

}  // namespace yirage::codegen
