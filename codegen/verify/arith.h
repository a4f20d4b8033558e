// The number systems a µGraph is evaluated in: pairs over two finite fields for the
// fingerprint check (Mirage §5; primes p and q with q | p - 1, exp through a random q-th root
// of unity), and float / double for the floating-point check.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace yirage::codegen {

/// The random bits behind test inputs: SplitMix64 (Steele, Lea and Flood, OOPSLA 2014), a
/// UniformRandomBitGenerator several times faster than mt19937_64, which matters at the
/// programs' full shapes (two W[4096, 14336] are 117 M values per test).
class SplitMix64 {
 public:
  using result_type = std::uint64_t;

  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  static constexpr result_type min() { return 0; }

  static constexpr result_type max() { return ~result_type{0}; }

  result_type operator()() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

/// A value of Z_p x Z_q.
struct FieldValue {
  std::uint32_t p = 0;
  std::uint32_t q = 0;

  bool operator==(const FieldValue&) const = default;
};

/// The primes: q prime with q = 3 (mod 4), p = 2q + 1 prime (so q | p - 1 and p = 3 mod 4,
/// which makes x^((m+1)/4) a square root mod m), both below 2^29 so that 32 products of two
/// residues add up in 64 bits before one reduction. Found once by a search down from 2^28.
struct FieldPrimes {
  std::uint64_t p = 0;
  std::uint64_t q = 0;
};

const FieldPrimes& field_primes();

/// Arithmetic in Z_p x Z_q with one random root of unity ω of order q in Z_p (drawn per
/// test). exp(x) = (ω^(x_q) mod p, 0): the exponent lives in Z_q, the result in Z_p, so that
/// exp(a + b) = exp(a) exp(b). Division uses inverses (1/0 taken as 0); sqrt is
/// x^((m+1)/4), multiplicative like the real square root; silu(x) = x / (1 + exp(-x)).
class FieldArith {
 public:
  using Value = FieldValue;
  explicit FieldArith(std::uint64_t seed);

  // add, sub and mul are inline: the evaluator calls them once per element.
  Value add(Value a, Value b) const {
    std::uint32_t x = a.p + b.p;  // residues below 2^29: no overflow
    std::uint32_t y = a.q + b.q;
    return {x >= p_ ? static_cast<std::uint32_t>(x - p_) : x,
            y >= q_ ? static_cast<std::uint32_t>(y - q_) : y};
  }

  Value sub(Value a, Value b) const {
    return add(a, {static_cast<std::uint32_t>(b.p == 0 ? 0 : p_ - b.p),
                   static_cast<std::uint32_t>(b.q == 0 ? 0 : q_ - b.q)});
  }

  Value mul(Value a, Value b) const {
    return {static_cast<std::uint32_t>(reduce(std::uint64_t{a.p} * b.p, p_, rp_)),
            static_cast<std::uint32_t>(reduce(std::uint64_t{a.q} * b.q, q_, rq_))};
  }

  /// x mod m for any 64-bit x, by Barrett reduction with r = floor(2^64 / m), m < 2^32
  /// (Barrett 1986; Hacker's Delight §10-15): x - floor(x r / 2^64) m lies in [0, 2m), so one
  /// conditional subtraction finishes it, with no division.
  static std::uint64_t reduce(std::uint64_t x, std::uint64_t m, std::uint64_t r) {
    auto est = static_cast<std::uint64_t>((static_cast<unsigned __int128>(x) * r) >> 64);
    std::uint64_t y = x - est * m;
    return y >= m ? y - m : y;
  }

  Value div(Value a, Value b) const;
  Value exp(Value a) const;
  Value sqrt(Value a) const;
  Value silu(Value a) const;
  Value count(std::int64_t n) const;  // the integer n as a value

  Value zero() const { return {}; }

  bool has_max() const { return false; }

  Value max(Value a, Value) const { return a; }

  Value random(SplitMix64& rng) const;

  /// c[i][j] = sum_k a[i][k] b[k][j], with delayed reduction.
  void matmul(const Value* a,
              const Value* b,
              Value* c,
              std::int64_t m,
              std::int64_t k,
              std::int64_t n) const;

  std::uint64_t omega() const { return omega_; }

 private:
  // A block of matmul's output: `rows` x `cols` of c from the same rows of a and columns of b.
  struct MatmulBlock {
    const Value* a;
    const Value* b;
    Value* c;
    std::int64_t rows;
    std::int64_t cols;
  };

  void matmul_block(const MatmulBlock& blk, std::int64_t k, std::int64_t n) const;

  std::uint64_t p_;
  std::uint64_t q_;
  std::uint64_t rp_;  // floor(2^64 / p), for Barrett reduction
  std::uint64_t rq_;
  std::uint64_t omega_;
};

/// Real arithmetic at precision T (float for candidates, double for the reference).
template <class T>
class RealArith {
 public:
  using Value = T;

  Value add(Value a, Value b) const { return a + b; }

  Value sub(Value a, Value b) const { return a - b; }

  Value mul(Value a, Value b) const { return a * b; }

  Value div(Value a, Value b) const { return a / b; }

  Value exp(Value a) const { return std::exp(a); }

  Value sqrt(Value a) const { return std::sqrt(a); }

  Value silu(Value a) const { return a / (T(1) + std::exp(-a)); }

  Value count(std::int64_t n) const { return static_cast<T>(n); }

  Value zero() const { return T(0); }

  bool has_max() const { return true; }

  Value max(Value a, Value b) const { return a > b ? a : b; }

  /// Uniform in [-1, 1): small enough that exp of a dot product stays finite.
  Value random(SplitMix64& rng) const {
    return static_cast<T>(static_cast<double>(rng() >> 11) * 0x1p-52 - 1.0);  // 53 bits
  }

  /// Blocked like FieldArith::matmul: each row of b is read once per block of rows of a.
  void matmul(const Value* a,
              const Value* b,
              Value* c,
              std::int64_t m,
              std::int64_t k,
              std::int64_t n) const {
    constexpr std::int64_t kRows = 16;
    constexpr std::int64_t kCols = 256;
    for (std::int64_t i = 0; i < m * n; ++i)
      c[i] = T(0);
    std::int64_t col_blocks = (n + kCols - 1) / kCols;
    for (std::int64_t blk = 0; blk < (m + kRows - 1) / kRows * col_blocks; ++blk) {
      std::int64_t i0 = blk / col_blocks * kRows;
      std::int64_t j0 = blk % col_blocks * kCols;
      std::int64_t mb = std::min(kRows, m - i0);
      std::int64_t nb = std::min(kCols, n - j0);
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const Value* brow = b + kk * n + j0;
        for (std::int64_t i = i0; i < i0 + mb; ++i) {
          Value x = a[i * k + kk];
          Value* row = c + i * n + j0;
          for (std::int64_t j = 0; j < nb; ++j)
            row[j] += x * brow[j];
        }
      }
    }
  }
};

}  // namespace yirage::codegen
