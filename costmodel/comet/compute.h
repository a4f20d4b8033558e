// Latency and energy of one compute primitive: the systolic GEMM engine (ScaleSim-style, E9)
// and the SIMD vector unit (E10).
// Source: COMET (arXiv 2509.00599), comet-model.md §2.7 (E9, E10), §2.10 (compute energy).
#pragma once

#include "costmodel/comet/arch.h"
#include "costmodel/comet/mapping.h"
#include "costmodel/comet/problem.h"

#include <cstdint>
#include <string>

namespace yirage::costmodel::comet {

/// Cycles of one invocation of `op`'s tile primitive on compute type `unit`.
///   mac:  (2R + C + T - 2) * ceil(d1 / (R n_r)) * ceil(d2 / (C n_c))   (E9)
///   simd: c_op * ceil(elements / (W * T_red))                          (E10)
std::int64_t primitive_cycles(const ComputeType& unit,
                              const OperationInfo& op,
                              const ProblemSpec& problem);

/// SIMD instructions (of W lanes) one primitive takes: ceil(elements / (W * T_red)).
std::int64_t simd_instructions(const ComputeType& unit, const OperationInfo& op);

/// Energy of one lane-op (pJ) for a SIMD op type, or of one MAC for GEMM.
double op_energy_pj(const ComputeType& unit, const std::string& op_type);

/// Multiply-accumulates (GEMM) or elements (SIMD) of one primitive.
std::int64_t primitive_volume(const OperationInfo& op);

}  // namespace yirage::costmodel::comet
