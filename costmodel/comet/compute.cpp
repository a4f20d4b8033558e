#include "costmodel/comet/compute.h"

#include "devices/support/check.h"

#include <cmath>

namespace yirage::costmodel::comet {
namespace {

// ceil(log2(W)) cycles (or lane-ops) of a W-lane tree reduction.
std::int64_t tree_levels(std::int64_t w) {
  return static_cast<std::int64_t>(std::ceil(std::log2(static_cast<double>(w))));
}

// Cycles of one SIMD instruction (Synopsys DesignWare figures, §2.7).
std::int64_t simd_op_cycles(const std::string& type, std::int64_t w) {
  if (type == "exp")
    return 3;
  if (type == "rowsum" || type == "rowmax")
    return tree_levels(w);
  return 1;  // div, add (also sub), mult, max, sqrt
}

std::int64_t gemm_cycles(const ComputeType& u, const OperationInfo& op, const ProblemSpec& p) {
  CHECK(!op.reduction_dims.empty()) << "GEMM without a streaming (reduction) dimension";
  const std::string& stream = op.reduction_dims.back();
  const std::int64_t t = op.reduction_factors.back();
  std::int64_t scale = 1;
  int k = 0;
  bool skipped = false;
  for (const std::string& d : p.dims) {
    auto it = op.primitive.find(d);
    std::int64_t extent = it == op.primitive.end() ? 1 : it->second;
    if (!skipped && d == stream) {
      skipped = true;
      continue;
    }
    std::int64_t span = k == 0 ? u.array_rows * u.num_sa_rows : u.array_cols * u.num_sa_cols;
    if (k < 2)
      scale *= (extent + span - 1) / span;
    ++k;
  }
  return scale * (2 * u.array_rows + u.array_cols + t - 2);  // ScaleSim, E9
}

}  // namespace

std::int64_t primitive_volume(const OperationInfo& op) {
  std::int64_t v = 1;
  for (const auto& [d, e] : op.primitive)
    v *= e;
  return v;
}

std::int64_t simd_instructions(const ComputeType& unit, const OperationInfo& op) {
  std::int64_t red = 1;
  for (std::int64_t f : op.reduction_factors)
    red *= f;
  const std::int64_t per = unit.width * red;
  return (primitive_volume(op) + per - 1) / per;
}

std::int64_t primitive_cycles(const ComputeType& unit,
                              const OperationInfo& op,
                              const ProblemSpec& problem) {
  if (unit.cls == ComputeClass::kMac)
    return gemm_cycles(unit, op, problem);
  return simd_op_cycles(op.type, unit.width) * simd_instructions(unit, op);  // E10
}

// Per-op energies: MAC 0.2296 pJ (IEEE doc 10714410); SIMD lane-ops from §2.10.
double op_energy_pj(const ComputeType& unit, const std::string& type) {
  if (unit.cls == ComputeClass::kMac)
    return 0.2296;
  const double levels = static_cast<double>(tree_levels(unit.width));
  if (type == "div")
    return 0.8f;
  if (type == "exp")
    return 3.86f;
  if (type == "add")
    return 0.11f;
  if (type == "mult")
    return 0.64f;
  if (type == "max")
    return 0.0025f;
  if (type == "sqrt")
    return 2.84f;
  if (type == "rowsum")
    return static_cast<float>(0.11 * levels);
  if (type == "rowmax")
    return static_cast<float>(0.0025 * levels);
  return 0;
}

}  // namespace yirage::costmodel::comet
