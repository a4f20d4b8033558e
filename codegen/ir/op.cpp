#include "codegen/ir/op.h"

#include <algorithm>

namespace yirage::codegen {
namespace {

struct OpName {
  OpKind kind;
  const char* name;
};

constexpr std::array<OpName, 15> kOpNames = {{{OpKind::kMatmul, "matmul"},
                                              {OpKind::kExp, "exp"},
                                              {OpKind::kSquare, "square"},
                                              {OpKind::kSqrt, "sqrt"},
                                              {OpKind::kSilu, "silu"},
                                              {OpKind::kAdd, "add"},
                                              {OpKind::kSub, "sub"},
                                              {OpKind::kMul, "mul"},
                                              {OpKind::kDiv, "div"},
                                              {OpKind::kSum, "sum"},
                                              {OpKind::kMean, "mean"},
                                              {OpKind::kRms, "rms"},
                                              {OpKind::kMax, "max"},
                                              {OpKind::kCustom, "custom"},
                                              {OpKind::kAccum, "accum"}}};

constexpr std::array<const char*, 4> kAccumNames = {"sum", "sum_last", "rms_last", "max_last"};

std::optional<Shape> fail(std::string* why, std::string msg) {
  if (why != nullptr)
    *why = std::move(msg);
  return std::nullopt;
}

std::optional<Shape> matmul_shape(const Shape& a, const Shape& b, std::string* why) {
  if (a.size() < 2 || a.size() != b.size())
    return why == nullptr ? std::nullopt
                          : fail(why, "matmul needs two tensors of the same rank >= 2");
  std::size_t r = a.size();
  if (!std::equal(a.begin(), a.end() - 2, b.begin()))
    return why == nullptr
               ? std::nullopt
               : fail(why, "matmul batch dims differ: " + shape_text(a) + " x " + shape_text(b));
  if (a[r - 1] != b[r - 2])
    return why == nullptr
               ? std::nullopt
               : fail(why, "matmul inner dims differ: " + shape_text(a) + " x " + shape_text(b));
  Shape out = a;
  out[r - 1] = b[r - 1];
  return out;
}

std::optional<Shape> broadcast_shape(const Shape& a, const Shape& b, std::string* why) {
  if (a.size() != b.size())
    return why == nullptr ? std::nullopt
                          : fail(why, "operands of different rank: " + shape_text(a) + " and " +
                                          shape_text(b));
  Shape out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1)
      return why == nullptr
                 ? std::nullopt
                 : fail(why, "shapes do not broadcast: " + shape_text(a) + " and " + shape_text(b));
    out[i] = std::max(a[i], b[i]);
  }
  return out;
}

}  // namespace

std::string op_name(OpKind k) {
  for (const OpName& o : kOpNames) {
    if (o.kind == k)
      return o.name;
  }
  return "?";
}

std::optional<OpKind> op_from_name(const std::string& name) {
  for (const OpName& o : kOpNames) {
    if (name == o.name)
      return o.kind;
  }
  return std::nullopt;
}

std::string accum_name(Accum a) {
  return kAccumNames.at(static_cast<std::size_t>(a));
}

std::optional<Accum> accum_from_name(const std::string& name) {
  for (std::size_t i = 0; i < kAccumNames.size(); ++i) {
    if (name == kAccumNames[i])
      return static_cast<Accum>(i);
  }
  return std::nullopt;
}

bool is_unary(OpKind k) {
  return k == OpKind::kExp || k == OpKind::kSquare || k == OpKind::kSqrt || k == OpKind::kSilu;
}

bool is_binary(OpKind k) {
  return k == OpKind::kAdd || k == OpKind::kSub || k == OpKind::kMul || k == OpKind::kDiv;
}

bool is_reduction(OpKind k) {
  return k == OpKind::kSum || k == OpKind::kMean || k == OpKind::kRms || k == OpKind::kMax;
}

bool is_commutative(OpKind k) {
  return k == OpKind::kAdd || k == OpKind::kMul;
}

std::optional<Shape> infer_shape(OpKind k,
                                 const std::vector<Shape>& in,
                                 int dim,
                                 std::string* why) {
  if (k == OpKind::kMatmul && in.size() == 2)
    return matmul_shape(in[0], in[1], why);
  if (is_unary(k) && in.size() == 1)
    return in[0];
  if (is_binary(k) && in.size() == 2)
    return broadcast_shape(in[0], in[1], why);
  if (is_reduction(k) && in.size() == 1) {
    if (dim < 0 || dim >= static_cast<int>(in[0].size()))
      return why == nullptr
                 ? std::nullopt
                 : fail(why, op_name(k) + " over dim " + std::to_string(dim) + " of a rank-" +
                                 std::to_string(in[0].size()) + " tensor");
    Shape out = in[0];
    out[static_cast<std::size_t>(dim)] = 1;
    return out;
  }
  return why == nullptr ? std::nullopt
                        : fail(why, op_name(k) + " with " + std::to_string(in.size()) + " inputs");
}

Shape accum_shape(Accum a, const Shape& in) {
  Shape out = in;
  if (a != Accum::kSum && !out.empty())
    out.back() = 1;
  return out;
}

std::int64_t elements(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s)
    n *= d;
  return n;
}

std::string shape_text(const Shape& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i)
    t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

}  // namespace yirage::codegen
