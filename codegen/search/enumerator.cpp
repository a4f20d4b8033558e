#include "codegen/search/enumerator.h"

#include "codegen/search/enumerator_state.h"

#include <algorithm>
#include <set>

namespace yirage::codegen {

Expr op_expr(OpKind k, const std::vector<Expr>& in, const std::vector<Shape>& shapes) {
  std::int64_t last = shapes[0].empty() ? 1 : shapes[0].back();
  switch (k) {
    case OpKind::kMatmul:
      return expr::sum(last, expr::mul(in[0], in[1]));
    case OpKind::kExp:
      return expr::exp(in[0]);
    case OpKind::kSquare:
      return expr::mul(in[0], in[0]);
    case OpKind::kSqrt:
      return expr::sqrt(in[0]);
    case OpKind::kSilu:
      return expr::silu(in[0]);
    case OpKind::kAdd:
    case OpKind::kSub:
      return expr::add(in[0], in[1]);
    case OpKind::kMul:
      return expr::mul(in[0], in[1]);
    case OpKind::kDiv:
      return expr::div(in[0], in[1]);
    default:
      return nullptr;
  }
}

namespace {

Expr reduce_expr(OpKind k, const Expr& x, std::int64_t len) {
  if (k == OpKind::kRms)
    return expr::sqrt(expr::sum(len, expr::mul(x, x)));
  if (k == OpKind::kMax)
    return expr::max(len, x);
  return expr::sum(len, x);
}

Expr any_expr(OpKind k, int dim, const std::vector<Expr>& in, const std::vector<Shape>& shapes) {
  if (is_reduction(k))
    return reduce_expr(k, in[0], shapes[0][static_cast<std::size_t>(dim)]);
  return op_expr(k, in, shapes);
}

}  // namespace

Expr accum_expr(Accum a, const Expr& in, const Shape& shape, std::int64_t forloop) {
  std::int64_t n = shape.back() * forloop;
  switch (a) {
    case Accum::kSum:
      return expr::sum(forloop, in);
    case Accum::kSumLast:
      return expr::sum(n, in);
    case Accum::kRmsLast:
      return expr::sqrt(expr::sum(n, expr::mul(in, in)));
    case Accum::kMaxLast:
      return expr::max(n, in);
  }
  return nullptr;
}

std::vector<Expr> program_exprs(const KernelGraph& g) {
  std::vector<Expr> e;
  std::string why;
  std::vector<Shape> shapes = kernel_shapes(g, &why);
  for (std::size_t i = 0; i < g.inputs.size(); ++i)
    e.push_back(expr::var(static_cast<int>(i)));
  for (const KernelOp& op : g.ops) {
    std::vector<Expr> in;
    std::vector<Shape> s;
    for (int t : op.in) {
      in.push_back(e[static_cast<std::size_t>(t)]);
      s.push_back(shapes[static_cast<std::size_t>(t)]);
    }
    e.push_back(any_expr(op.kind, op.dim, in, s));
  }
  return e;
}

Enumerator::Enumerator(const KernelGraph& reference,
                       const SearchLimits& limits,
                       const devices::DeviceSpec& device)
    : reference_(reference), limits_(limits), device_(device) {
  std::vector<Expr> e = program_exprs(reference);
  std::string why;
  std::vector<Shape> shapes = kernel_shapes(reference, &why);
  for (int t : reference.outputs) {
    target_.push_back(e[static_cast<std::size_t>(t)]);
    target_shapes_.push_back(shapes[static_cast<std::size_t>(t)]);
  }
  std::set<OpKind> kinds;
  std::set<std::pair<OpKind, int>> reds;
  for (const KernelOp& op : reference.ops) {
    kinds.insert(op.kind);
    if (is_reduction(op.kind))
      reds.insert({op.kind, op.dim});
  }
  kernel_menu_.assign(kinds.begin(), kinds.end());
  reductions_.assign(reds.begin(), reds.end());
  for (OpKind k : kinds) {
    if (!is_reduction(k))
      block_menu_.push_back(k);
  }
  accums_.push_back(Accum::kSum);
  if (kinds.count(OpKind::kSum) || kinds.count(OpKind::kMean))
    accums_.push_back(Accum::kSumLast);
  if (kinds.count(OpKind::kRms))
    accums_.push_back(Accum::kRmsLast);
  if (kinds.count(OpKind::kMax))
    accums_.push_back(Accum::kMaxLast);
}

bool Enumerator::useful(const Expr& e) const {
  return std::any_of(target_.begin(), target_.end(),
                     [&](const Expr& t) { return is_subexpr(e, t); });
}

bool Enumerator::complete(const KState& s, std::vector<int>* outputs) const {
  std::vector<int> dangling;
  for (std::size_t t = 0; t < s.uses.size(); ++t) {
    if (s.uses[t] == 0)
      dangling.push_back(static_cast<int>(t));
  }
  if (dangling.size() != target_.size() || s.g.ops.empty())
    return false;
  outputs->clear();
  for (std::size_t i = 0; i < target_.size(); ++i) {
    auto it = std::find_if(dangling.begin(), dangling.end(), [&](int t) {
      auto u = static_cast<std::size_t>(t);
      return t >= 0 && s.shapes[u] == target_shapes_[i] && same(s.exprs[u], target_[i]);
    });
    if (it == dangling.end())
      return false;
    outputs->push_back(*it);
    *it = -1;
  }
  return true;
}

std::vector<WorkItem> Enumerator::work_items() const {
  KState s;
  s.g.inputs = reference_.inputs;
  std::vector<WorkItem> items;
  int n = static_cast<int>(reference_.inputs.size());
  // Library ops on the inputs, then graph-defined ops on every subset of them.
  for (OpKind k : kernel_menu_) {
    for (int a = 0; a < n; ++a) {
      if (is_unary(k))
        items.push_back({{k, {a}, -1, -1}, -1});
      for (const auto& [rk, dim] : reductions_) {
        if (rk == k)
          items.push_back({{k, {a}, dim, -1}, -1});
      }
      for (int b = 0; b < n && (is_binary(k) || k == OpKind::kMatmul); ++b) {
        if (a != b && !(is_commutative(k) && b < a))
          items.push_back({{k, {a, b}, -1, -1}, -1});
      }
    }
  }
  for (unsigned mask = 1; mask < (1U << n); ++mask) {
    std::vector<int> in;
    std::vector<Shape> shapes;
    for (int i = 0; i < n; ++i) {
      if (mask & (1U << i)) {
        in.push_back(i);
        shapes.push_back(reference_.inputs[static_cast<std::size_t>(i)].shape);
      }
    }
    if (static_cast<int>(in.size()) > limits_.block_inputs)
      continue;
    std::size_t maps = map_choices(shapes).size();
    for (std::size_t m = 0; m < maps; ++m)
      items.push_back({{OpKind::kCustom, in, -1, -1}, static_cast<int>(m)});
  }
  return items;
}

void Enumerator::run(const WorkItem& item,
                     const std::function<void(const Found&)>& sink,
                     EnumStats& st) const {
  KState s;
  s.g.name = reference_.name;
  s.g.dtype = reference_.dtype;
  s.g.inputs = reference_.inputs;
  for (std::size_t i = 0; i < reference_.inputs.size(); ++i) {
    s.shapes.push_back(reference_.inputs[i].shape);
    s.exprs.push_back(expr::var(static_cast<int>(i)));
    s.uses.push_back(0);
  }
  if (item.op.kind == OpKind::kCustom) {
    std::vector<Shape> shapes;
    for (int t : item.op.in)
      shapes.push_back(s.shapes[static_cast<std::size_t>(t)]);
    try_custom(s, item.op.in, item.map, map_choices(shapes)[static_cast<std::size_t>(item.map)],
               sink, st);
  } else {
    try_library(s, item.op, sink, st);
  }
}

}  // namespace yirage::codegen
