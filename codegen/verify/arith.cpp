#include "codegen/verify/arith.h"

#include "devices/support/check.h"

#include <algorithm>
#include <vector>

namespace yirage::codegen {
namespace {

std::uint64_t mulmod(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
  return (a * b) % m;  // a, b < 2^29
}

std::uint64_t reciprocal(std::uint64_t m) {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(1) << 64) / m);
}

// A uniform draw in [0, m) from 64 random bits by multiply-high (Lemire 2019), no division;
// the bias is below m / 2^64.
std::uint32_t draw(std::uint64_t bits, std::uint64_t m) {
  return static_cast<std::uint32_t>((static_cast<unsigned __int128>(bits) * m) >> 64);
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

FieldArith::FieldArith(std::uint64_t seed)
    : p_(field_primes().p),
      q_(field_primes().q),
      rp_(reciprocal(field_primes().p)),
      rq_(reciprocal(field_primes().q)) {
  // The squares of Z_p* form its subgroup of order q = (p - 1) / 2: g^2 for a random g other
  // than +-1 has order exactly q.
  std::mt19937_64 rng(seed);
  std::uint64_t g = 2 + rng() % (p_ - 3);
  omega_ = mulmod(g, g, p_);
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

FieldValue FieldArith::random(SplitMix64& rng) const {
  std::uint64_t a = rng();
  return {draw(a, p_), draw(rng(), q_)};
}

void FieldArith::matmul(const Value* a,
                        const Value* b,
                        Value* c,
                        std::int64_t m,
                        std::int64_t k,
                        std::int64_t n) const {
  // Blocked so that each row of b is read once per block of kRows rows of a (not once per
  // row) while the block's sums stay in cache.
  constexpr std::int64_t kRows = 16;
  constexpr std::int64_t kCols = 128;
  std::int64_t col_blocks = (n + kCols - 1) / kCols;
  for (std::int64_t blk = 0; blk < (m + kRows - 1) / kRows * col_blocks; ++blk) {
    std::int64_t i0 = blk / col_blocks * kRows;
    std::int64_t j0 = blk % col_blocks * kCols;
    matmul_block(
        {a + i0 * k, b + j0, c + i0 * n + j0, std::min(kRows, m - i0), std::min(kCols, n - j0)}, k,
        n);
  }
}

void FieldArith::matmul_block(const MatmulBlock& blk, std::int64_t k, std::int64_t n) const {
  thread_local std::vector<std::uint64_t> acc;  // reused: block loops call this per tile
  std::int64_t cols = blk.cols;                 // row stride of the p sums, then the q sums
  acc.assign(static_cast<std::size_t>(2 * blk.rows * cols), 0);
  for (std::int64_t kk = 0; kk < k; ++kk) {
    const Value* row = blk.b + kk * n;
    for (std::int64_t i = 0; i < blk.rows; ++i) {
      std::uint64_t xp = blk.a[i * k + kk].p;
      std::uint64_t xq = blk.a[i * k + kk].q;
      std::uint64_t* ap = acc.data() + 2 * i * cols;
      std::uint64_t* aq = ap + cols;
      for (std::int64_t j = 0; j < cols; ++j) {
        ap[j] += xp * row[j].p;
        aq[j] += xq * row[j].q;
      }
    }
    if (kk % 32 == 31) {  // 32 products below 2^58 each, plus a residue: below 2^64
      for (std::size_t e = 0; e < acc.size(); ++e)
        acc[e] = reduce(acc[e], e / static_cast<std::size_t>(cols) % 2 ? q_ : p_,
                        e / static_cast<std::size_t>(cols) % 2 ? rq_ : rp_);
    }
  }
  for (std::int64_t i = 0; i < blk.rows; ++i) {
    const std::uint64_t* ap = acc.data() + 2 * i * cols;
    Value* out = blk.c + i * n;
    for (std::int64_t j = 0; j < cols; ++j)
      out[j] = {static_cast<std::uint32_t>(reduce(ap[j], p_, rp_)),
                static_cast<std::uint32_t>(reduce(ap[cols + j], q_, rq_))};
  }
}

}  // namespace yirage::codegen
