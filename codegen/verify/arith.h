// The number systems a µGraph is evaluated in: pairs over two finite fields for the
// fingerprint check (Mirage §5; primes p and q with q | p - 1, exp through a random q-th root
// of unity), and float / double for the floating-point check.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace yirage::codegen {

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

  Value add(Value a, Value b) const;
  Value sub(Value a, Value b) const;
  Value mul(Value a, Value b) const;
  Value div(Value a, Value b) const;
  Value exp(Value a) const;
  Value sqrt(Value a) const;
  Value silu(Value a) const;
  Value count(std::int64_t n) const;  // the integer n as a value

  Value zero() const { return {}; }

  bool has_max() const { return false; }

  Value max(Value a, Value) const { return a; }

  Value random(std::mt19937_64& rng) const;

  /// c[i][j] = sum_k a[i][k] b[k][j], with delayed reduction.
  void matmul(const Value* a,
              const Value* b,
              Value* c,
              std::int64_t m,
              std::int64_t k,
              std::int64_t n) const;

  std::uint64_t omega() const { return omega_; }

 private:
  std::uint64_t p_;
  std::uint64_t q_;
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
  Value random(std::mt19937_64& rng) const {
    return static_cast<T>(std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
  }

  void matmul(const Value* a,
              const Value* b,
              Value* c,
              std::int64_t m,
              std::int64_t k,
              std::int64_t n) const {
    for (std::int64_t i = 0; i < m; ++i) {
      Value* row = c + i * n;
      for (std::int64_t j = 0; j < n; ++j)
        row[j] = T(0);
      for (std::int64_t kk = 0; kk < k; ++kk) {
        Value x = a[i * k + kk];
        const Value* brow = b + kk * n;
        for (std::int64_t j = 0; j < n; ++j)
          row[j] += x * brow[j];
      }
    }
  }
};

}  // namespace yirage::codegen
