// Abstract expressions for pruning (Mirage §4.3), as a canonical normal form of our own
// rather than an SMT query (Z3) or a saturated e-graph (egg). Why: the axioms Mirage uses
// (A_eq: commutativity and associativity of + and x, distributivity, sum through products
// and sums, nested sums multiplying their sizes, x/y as x·y^-1) all orient into a normal form
// that is cheap to build bottom-up, so each check is a walk over two small trees with no
// solver call, no saturation limit (Mirage's egg stops at 10 s / 100k nodes and then prunes
// falsely) and nothing to cache across threads. The cost: axioms that do not orient (exp(x)
// exp(y) = exp(x+y), sqrt(x)sqrt(y) = sqrt(xy) beyond monomials) are not applied, so a
// µGraph that needs them is pruned; as in Mirage, optimality holds relative to the axioms.
//
// Normal form: a polynomial is a multiset of monomials; a monomial is a reduction size (the
// product of the sizes of every sum it sits under: sum commutes with products in the
// abstraction, which forgets indices) and a product of factors with integer exponents; a
// factor is an input, or exp / sqrt / 1/(...) / max of a polynomial. Constants are dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace yirage::codegen {

struct Poly;
using Expr = std::shared_ptr<const Poly>;

enum class FactorKind { kVar, kExp, kSqrt, kInv, kMax };

struct Factor {
  FactorKind kind = FactorKind::kVar;
  int var = 0;  // kVar
  Expr inner;   // the others
  int exponent = 1;
};

struct Mono {
  std::int64_t reduction = 1;
  std::vector<Factor> factors;  // sorted, no zero exponents
};

struct Poly {
  std::vector<Mono> monos;  // sorted
  std::size_t hash = 0;
};

namespace expr {
Expr var(int id);
Expr one();
Expr add(const Expr& a, const Expr& b);
Expr mul(const Expr& a, const Expr& b);
Expr inv(const Expr& a);
Expr div(const Expr& a, const Expr& b);
Expr sum(std::int64_t k, const Expr& a);
Expr exp(const Expr& a);
Expr sqrt(const Expr& a);
Expr max(std::int64_t k, const Expr& a);
Expr silu(const Expr& a);
}  // namespace expr

/// Structural equality of normal forms.
bool same(const Expr& a, const Expr& b);

/// Whether `c` may be a subexpression of (an A_eq-equal form of) `target`: equal to it, to a
/// partial reduction of it (sizes dividing the target's), to a sub-multiset of its monomials
/// each a sub-product of one of the target's, or to such a part of a factor's inner
/// polynomial, recursively.
bool is_subexpr(const Expr& c, const Expr& target);

}  // namespace yirage::codegen
