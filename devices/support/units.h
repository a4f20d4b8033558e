// Physical quantities with their units in the type, and the parser for quantities written
// as text in input files ("3.35 TB/s", "80 GiB", "400 Gb/s", "989 TFLOPS", "2 us").
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace yirage::devices {

/// The dimension of a quantity. Every value is stored in the SI base unit of its dimension:
/// bytes, seconds, bytes per second, floating-point operations, and so on.
enum class Dim {
  kBytes,        // B (bits are converted: 1 b = 1/8 B)
  kSeconds,      // s
  kBytesPerSec,  // B/s (bit rates are converted)
  kFlops,        // FLOP (an operation count)
  kFlopsPerSec,  // FLOP/s (TOPS for integer types share this dimension)
  kHertz,        // Hz
  kWatts,        // W
  kJoules,       // J
  kUsdPerHour,   // USD/h
  kPerSec,       // events per second (requests, tokens)
};

/// A value of dimension `D`, in the SI base unit of `D`.
template <Dim D>
struct Quantity {
  double value = 0;

  constexpr auto operator<=>(const Quantity&) const = default;

  constexpr Quantity operator+(Quantity o) const { return {value + o.value}; }

  constexpr Quantity operator-(Quantity o) const { return {value - o.value}; }

  constexpr Quantity operator*(double k) const { return {value * k}; }

  constexpr Quantity operator/(double k) const { return {value / k}; }

  constexpr double operator/(Quantity o) const { return value / o.value; }

  constexpr Quantity& operator+=(Quantity o) {
    value += o.value;
    return *this;
  }
};

template <Dim D>
constexpr Quantity<D> operator*(double k, Quantity<D> q) {
  return {k * q.value};
}

using Bytes = Quantity<Dim::kBytes>;
using Seconds = Quantity<Dim::kSeconds>;
using BytesPerSec = Quantity<Dim::kBytesPerSec>;
using Flops = Quantity<Dim::kFlops>;
using FlopsPerSec = Quantity<Dim::kFlopsPerSec>;
using Hertz = Quantity<Dim::kHertz>;
using Watts = Quantity<Dim::kWatts>;
using Joules = Quantity<Dim::kJoules>;
using UsdPerHour = Quantity<Dim::kUsdPerHour>;
using PerSec = Quantity<Dim::kPerSec>;

constexpr Seconds operator/(Bytes b, BytesPerSec r) {
  return {b.value / r.value};
}

constexpr Seconds operator/(Flops f, FlopsPerSec r) {
  return {f.value / r.value};
}

constexpr Bytes operator*(BytesPerSec r, Seconds t) {
  return {r.value * t.value};
}

constexpr Flops operator*(FlopsPerSec r, Seconds t) {
  return {r.value * t.value};
}

constexpr Joules operator*(Watts p, Seconds t) {
  return {p.value * t.value};
}

/// A quantity parsed from text, or the reason it could not be parsed.
struct ParsedQuantity {
  double value = 0;  // in the SI base unit of `dim`
  Dim dim = Dim::kBytes;
  std::string error;  // empty on success
};

/// Parses "NUMBER UNIT" (the space is optional). Accepted units, with SI prefixes
/// k M G T P E (powers of 1000) and m u µ n p for small units, and binary prefixes
/// Ki Mi Gi Ti Pi (powers of 1024) for bytes and bits:
/// B, b (bytes, bits); B/s, b/s, bps (rates); FLOP; FLOPS, FLOP/s, OPS, TOPS...;
/// s, ms, us, ns, min, h; Hz; W; J; USD/h; /s, req/s, tok/s.
/// An uppercase `K` is refused as ambiguous: write `k` (1000) or `Ki` (1024).
ParsedQuantity parse_quantity(std::string_view text);

/// Why `value` (in the base unit of `d`) is beyond what a quantity of `d` may be, or empty:
/// every quantity read is finite and within physical bounds (a bit to a yottabyte, a
/// femtosecond to 30,000 years, ...), so that no plan's arithmetic overflows.
std::string out_of_bounds(double value, Dim d);

/// Like `parse_quantity`, and also fails when the unit is not of dimension `want`.
ParsedQuantity parse_quantity(std::string_view text, Dim want);

/// "a bandwidth", "a byte size", ...: the noun used in error messages.
std::string_view dim_noun(Dim d);

/// An example of a well-formed quantity of `d`, e.g. "900 GB/s".
std::string_view dim_example(Dim d);

/// The base unit symbol of `d`: "B", "s", "B/s", "FLOPS", ...
std::string_view dim_unit(Dim d);

/// Formats a value of dimension `d` with an SI prefix and up to four significant digits:
/// "3.35 TB/s", "989.4 TFLOPS", "2 us". Byte sizes that are exact multiples of a power of
/// 1024 are written with binary prefixes ("228 KiB", "50 MiB"); others with SI ones
/// ("80 GB"). The output is deterministic.
std::string format_quantity(double value, Dim d);

/// A bandwidth as a bit rate, the way network links are sold: 50e9 B/s -> "400 Gb/s".
std::string format_bit_rate(BytesPerSec rate);

template <Dim D>
std::string format(Quantity<D> q) {
  return format_quantity(q.value, D);
}

/// Formats a plain number with up to `digits` significant digits, no exponent for
/// magnitudes in [1e-4, 1e15), trailing zeros removed: 70553706496 -> "70553706496",
/// 0.12345 -> "0.1235".
std::string format_number(double value, int digits = 4);

/// How many non-finite values `format_number` has formatted ("inf", "nan") in this process.
/// Every printed result must be finite: the CLI compares this count before and after a
/// command and prints nothing but an internal error when it grew.
std::uint64_t non_finite_formatted();

}  // namespace yirage::devices
