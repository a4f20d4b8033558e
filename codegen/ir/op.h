// The operators of a µGraph (Mirage, OSDI'25, Table 1), shared by the kernel level (library
// ops on device tensors) and the block level (ops on shared-memory tiles), and the shape
// rule of each.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yirage::codegen {

using Shape = std::vector<std::int64_t>;

enum class OpKind {
  kMatmul,  // batched over the leading dims: [.., m, k] x [.., k, n] -> [.., m, n]
  kExp,
  kSquare,
  kSqrt,
  kSilu,  // x / (1 + exp(-x))
  kAdd,
  kSub,
  kMul,
  kDiv,
  kSum,     // over one dim, kept with size 1
  kMean,    // over one dim, kept with size 1
  kRms,     // sqrt(mean(x^2)) over one dim, kept with size 1
  kMax,     // over one dim, kept with size 1 (no finite-field meaning: float checks only)
  kCustom,  // kernel level: a graph-defined op (a block graph)
  kAccum,   // block level: a for-loop accumulator
};

/// For-loop accumulators (Mirage's NO_RED, RED_LD_SUM, RED_LD_RMS and MAX): `kSum` adds the
/// iterations elementwise; the others also reduce the last dim, across the iterations.
enum class Accum { kSum, kSumLast, kRmsLast, kMaxLast };

/// "matmul", "exp", ...
std::string op_name(OpKind k);
std::optional<OpKind> op_from_name(const std::string& name);
std::string accum_name(Accum a);
std::optional<Accum> accum_from_name(const std::string& name);

bool is_unary(OpKind k);
bool is_binary(OpKind k);
bool is_reduction(OpKind k);
/// add and mul: their inputs are kept in ascending order (canonical form).
bool is_commutative(OpKind k);

/// The output shape of a library or block op (not kCustom or kAccum), or nullopt with the
/// reason in `why`. Binary ops broadcast dims of size 1; reductions take `dim`.
std::optional<Shape> infer_shape(OpKind k, const std::vector<Shape>& in, int dim, std::string* why);

/// The shape after an accumulator over `forloop` iterations: the last dim becomes 1 for the
/// reducing kinds.
Shape accum_shape(Accum a, const Shape& in);

std::int64_t elements(const Shape& s);
/// "[16, 4096]"
std::string shape_text(const Shape& s);

}  // namespace yirage::codegen
