#include "codegen/search/abstract_expr.h"

#include <algorithm>
#include <cstdlib>

namespace yirage::codegen {
namespace {

int compare(const Expr& a, const Expr& b);

int compare(const Factor& a, const Factor& b) {
  if (a.kind != b.kind)
    return a.kind < b.kind ? -1 : 1;
  if (a.var != b.var)
    return a.var < b.var ? -1 : 1;
  if (int c = a.inner || b.inner ? compare(a.inner, b.inner) : 0)
    return c;
  return a.exponent == b.exponent ? 0 : (a.exponent < b.exponent ? -1 : 1);
}

// Factors compared without their exponents (the same base).
bool same_base(const Factor& a, const Factor& b) {
  return a.kind == b.kind && a.var == b.var &&
         (a.inner || b.inner ? compare(a.inner, b.inner) == 0 : true);
}

int compare(const Mono& a, const Mono& b) {
  if (a.reduction != b.reduction)
    return a.reduction < b.reduction ? -1 : 1;
  if (a.factors.size() != b.factors.size())
    return a.factors.size() < b.factors.size() ? -1 : 1;
  for (std::size_t i = 0; i < a.factors.size(); ++i) {
    if (int c = compare(a.factors[i], b.factors[i]))
      return c;
  }
  return 0;
}

int compare(const Expr& a, const Expr& b) {
  if (a == b)
    return 0;
  if (!a || !b)
    return a ? 1 : -1;
  if (a->hash != b->hash)
    return a->hash < b->hash ? -1 : 1;
  if (a->monos.size() != b->monos.size())
    return a->monos.size() < b->monos.size() ? -1 : 1;
  for (std::size_t i = 0; i < a->monos.size(); ++i) {
    if (int c = compare(a->monos[i], b->monos[i]))
      return c;
  }
  return 0;
}

std::size_t mix(std::size_t h, std::size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

Expr make(std::vector<Mono> monos) {
  std::sort(monos.begin(), monos.end(),
            [](const Mono& a, const Mono& b) { return compare(a, b) < 0; });
  auto p = std::make_shared<Poly>();
  std::size_t h = 1469598103934665603ULL;
  for (const Mono& m : monos) {
    h = mix(h, static_cast<std::size_t>(m.reduction));
    for (const Factor& f : m.factors) {
      h = mix(h, static_cast<std::size_t>(f.kind) * 31 + static_cast<std::size_t>(f.var));
      h = mix(h, static_cast<std::size_t>(f.exponent + 1000));
      h = mix(h, f.inner ? f.inner->hash : 7);
    }
    h = mix(h, 0xabcdef);
  }
  p->monos = std::move(monos);
  p->hash = h;
  return p;
}

Expr single(Factor f) {
  return make({Mono{1, {std::move(f)}}});
}

Mono multiply(const Mono& a, const Mono& b) {
  Mono m;
  constexpr std::int64_t kCap = std::int64_t{1} << 40;  // sizes beyond any program
  m.reduction = std::min(kCap, a.reduction * b.reduction);
  m.factors = a.factors;
  for (const Factor& f : b.factors) {
    auto it = std::find_if(m.factors.begin(), m.factors.end(),
                           [&](const Factor& g) { return same_base(f, g); });
    if (it == m.factors.end())
      m.factors.push_back(f);
    else
      it->exponent += f.exponent;
  }
  m.factors.erase(std::remove_if(m.factors.begin(), m.factors.end(),
                                 [](const Factor& f) { return f.exponent == 0; }),
                  m.factors.end());
  std::sort(m.factors.begin(), m.factors.end(),
            [](const Factor& x, const Factor& y) { return compare(x, y) < 0; });
  return m;
}

bool sub_mono(const Mono& c, const Mono& t) {
  if (t.reduction % c.reduction != 0)
    return false;
  return std::all_of(c.factors.begin(), c.factors.end(), [&](const Factor& f) {
    return std::any_of(t.factors.begin(), t.factors.end(), [&](const Factor& g) {
      return same_base(f, g) && std::abs(f.exponent) <= std::abs(g.exponent);
    });
  });
}

// Matches every monomial of `c` to a distinct monomial of `t` (backtracking).
bool match(const Poly& c, const Poly& t, std::size_t i, std::vector<bool>& used) {
  if (i == c.monos.size())
    return true;
  for (std::size_t j = 0; j < t.monos.size(); ++j) {
    if (used[j] || !sub_mono(c.monos[i], t.monos[j]))
      continue;
    used[j] = true;
    if (match(c, t, i + 1, used))
      return true;
    used[j] = false;
  }
  return false;
}

}  // namespace

namespace expr {

Expr var(int id) {
  return single(Factor{FactorKind::kVar, id, nullptr, 1});
}

Expr one() {
  return make({Mono{}});
}

Expr add(const Expr& a, const Expr& b) {
  std::vector<Mono> m = a->monos;
  m.insert(m.end(), b->monos.begin(), b->monos.end());
  return make(std::move(m));
}

Expr mul(const Expr& a, const Expr& b) {
  std::vector<Mono> m;
  for (const Mono& x : a->monos) {
    for (const Mono& y : b->monos)
      m.push_back(multiply(x, y));
  }
  return make(std::move(m));
}

Expr inv(const Expr& a) {
  if (a->monos.size() != 1 || a->monos[0].reduction != 1)
    return single(Factor{FactorKind::kInv, 0, a, 1});
  Expr r = one();
  for (const Factor& f : a->monos[0].factors) {
    if (f.kind == FactorKind::kInv && f.exponent > 0) {
      for (int i = 0; i < f.exponent; ++i)
        r = mul(r, f.inner);  // 1/(1/x) = x
    } else {
      Factor g = f;
      g.exponent = -f.exponent;
      r = mul(r, single(g));
    }
  }
  return r;
}

Expr div(const Expr& a, const Expr& b) {
  return mul(a, inv(b));
}

Expr sum(std::int64_t k, const Expr& a) {
  std::vector<Mono> m = a->monos;
  for (Mono& x : m)
    x.reduction *= k;
  return make(std::move(m));
}

Expr exp(const Expr& a) {
  return single(Factor{FactorKind::kExp, 0, a, 1});
}

Expr sqrt(const Expr& a) {
  bool even = a->monos.size() == 1 && a->monos[0].reduction == 1 &&
              std::all_of(a->monos[0].factors.begin(), a->monos[0].factors.end(),
                          [](const Factor& f) { return f.exponent % 2 == 0; });
  if (!even)
    return single(Factor{FactorKind::kSqrt, 0, a, 1});
  Mono m = a->monos[0];
  for (Factor& f : m.factors)
    f.exponent /= 2;
  return make({m});
}

Expr max(std::int64_t k, const Expr& a) {
  return single(Factor{FactorKind::kMax, 0, sum(k, a), 1});
}

Expr silu(const Expr& a) {
  return mul(a, inv(add(one(), exp(a))));
}

}  // namespace expr

bool same(const Expr& a, const Expr& b) {
  return compare(a, b) == 0;
}

bool is_subexpr(const Expr& c, const Expr& target) {
  if (same(c, target))
    return true;
  if (c->monos.size() <= target->monos.size()) {
    std::vector<bool> used(target->monos.size(), false);
    if (match(*c, *target, 0, used))
      return true;
  }
  for (const Mono& m : target->monos) {
    for (const Factor& f : m.factors) {
      if (f.inner && is_subexpr(c, f.inner))
        return true;
    }
  }
  return false;
}

}  // namespace yirage::codegen
