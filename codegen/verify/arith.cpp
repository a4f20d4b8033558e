#include "codegen/verify/arith.h"

#include "devices/support/check.h"

#include <vector>

namespace yirage::codegen {
namespace {

std::uint64_t mulmod(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
  return (a * b) % m;  // a, b < 2^29
}

std::uint64_t powmod(std::uint64_t b, std::uint64_t e, std::uint64_t m) {
  std::uint64_t r = 1 % m;
  b %= m;
  for (; e > 0; e >>= 1) {
    if (e & 1)
      r = mulmod(r, b, m);
    b = mulmod(b, b, m);
  }
  return r;
}

bool is_prime(std::uint64_t n) {
  if (n < 2)
    return false;
  for (std::uint64_t d = 2; d * d <= n; ++d) {
    if (n % d == 0)
      return false;
  }
  return true;
}

FieldPrimes find_primes() {
  for (std::uint64_t q = (std::uint64_t{1} << 28) - 1; q > 3; q -= 4) {
    if (q % 4 == 3 && is_prime(q) && is_prime(2 * q + 1))
      return {2 * q + 1, q};
  }
  CHECK(false) << "no prime pair found";
  return {};
}

}  // namespace

const FieldPrimes& field_primes() {
  static const FieldPrimes primes = find_primes();
  return primes;
}

FieldArith::FieldArith(std::uint64_t seed) : p_(field_primes().p), q_(field_primes().q) {
  // The squares of Z_p* form its subgroup of order q = (p - 1) / 2: g^2 for a random g other
  // than +-1 has order exactly q.
  std::mt19937_64 rng(seed);
  std::uint64_t g = 2 + rng() % (p_ - 3);
  omega_ = mulmod(g, g, p_);
}

FieldValue FieldArith::add(Value a, Value b) const {
  return {static_cast<std::uint32_t>((a.p + b.p) % p_),
          static_cast<std::uint32_t>((a.q + b.q) % q_)};
}

FieldValue FieldArith::sub(Value a, Value b) const {
  return {static_cast<std::uint32_t>((a.p + p_ - b.p) % p_),
          static_cast<std::uint32_t>((a.q + q_ - b.q) % q_)};
}

FieldValue FieldArith::mul(Value a, Value b) const {
  return {static_cast<std::uint32_t>(mulmod(a.p, b.p, p_)),
          static_cast<std::uint32_t>(mulmod(a.q, b.q, q_))};
}

FieldValue FieldArith::div(Value a, Value b) const {
  Value inv{static_cast<std::uint32_t>(powmod(b.p, p_ - 2, p_)),
            static_cast<std::uint32_t>(powmod(b.q, q_ - 2, q_))};
  return mul(a, inv);
}

FieldValue FieldArith::exp(Value a) const {
  return {static_cast<std::uint32_t>(powmod(omega_, a.q, p_)), 0};
}

FieldValue FieldArith::sqrt(Value a) const {
  return {static_cast<std::uint32_t>(powmod(a.p, (p_ + 1) / 4, p_)),
          static_cast<std::uint32_t>(powmod(a.q, (q_ + 1) / 4, q_))};
}

FieldValue FieldArith::silu(Value a) const {
  // exp(-a) = ω^(q - a_q)
  Value e{static_cast<std::uint32_t>(powmod(omega_, (q_ - a.q) % q_, p_)), 0};
  return div(a, add(count(1), e));
}

FieldValue FieldArith::count(std::int64_t n) const {
  auto u = static_cast<std::uint64_t>(n);
  return {static_cast<std::uint32_t>(u % p_), static_cast<std::uint32_t>(u % q_)};
}

FieldValue FieldArith::random(std::mt19937_64& rng) const {
  return {static_cast<std::uint32_t>(rng() % p_), static_cast<std::uint32_t>(rng() % q_)};
}

void FieldArith::matmul(const Value* a,
                        const Value* b,
                        Value* c,
                        std::int64_t m,
                        std::int64_t k,
                        std::int64_t n) const {
  std::vector<std::uint64_t> ap(static_cast<std::size_t>(n));
  std::vector<std::uint64_t> aq(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < m; ++i) {
    std::fill(ap.begin(), ap.end(), 0);
    std::fill(aq.begin(), aq.end(), 0);
    for (std::int64_t kk = 0; kk < k; ++kk) {
      std::uint64_t xp = a[i * k + kk].p;
      std::uint64_t xq = a[i * k + kk].q;
      const Value* row = b + kk * n;
      for (std::int64_t j = 0; j < n; ++j) {
        ap[static_cast<std::size_t>(j)] += xp * row[j].p;
        aq[static_cast<std::size_t>(j)] += xq * row[j].q;
      }
      if (kk % 32 == 31) {  // 32 products below 2^58 each, plus a residue: below 2^64
        for (std::size_t j = 0; j < ap.size(); ++j) {
          ap[j] %= p_;
          aq[j] %= q_;
        }
      }
    }
    for (std::int64_t j = 0; j < n; ++j)
      c[i * n + j] = {static_cast<std::uint32_t>(ap[static_cast<std::size_t>(j)] % p_),
                      static_cast<std::uint32_t>(aq[static_cast<std::size_t>(j)] % q_)};
  }
}

}  // namespace yirage::codegen
