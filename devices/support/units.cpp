#include "devices/support/units.h"

#include <array>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace yirage::devices {
namespace {

enum class Prefixes { kNone, kLarge, kLargeBinary, kSmall, kAll };

struct BaseUnit {
  std::string_view symbol;
  Dim dim;
  double factor;  // base unit value of one symbol
  Prefixes prefixes;
};

// Longest symbols first, so that "B/s" is tried before "s" and "FLOPS" before "s".
constexpr std::array kBaseUnits = {
    BaseUnit{"tokens/s", Dim::kPerSec, 1, Prefixes::kNone},
    BaseUnit{"USD/hour", Dim::kUsdPerHour, 1, Prefixes::kNone},
    BaseUnit{"FLOP/s", Dim::kFlopsPerSec, 1, Prefixes::kLarge},
    BaseUnit{"USD/h", Dim::kUsdPerHour, 1, Prefixes::kNone},
    BaseUnit{"FLOPS", Dim::kFlopsPerSec, 1, Prefixes::kLarge},
    BaseUnit{"req/s", Dim::kPerSec, 1, Prefixes::kNone},
    BaseUnit{"tok/s", Dim::kPerSec, 1, Prefixes::kNone},
    BaseUnit{"FLOP", Dim::kFlops, 1, Prefixes::kLarge},
    BaseUnit{"OP/s", Dim::kFlopsPerSec, 1, Prefixes::kLarge},
    BaseUnit{"B/s", Dim::kBytesPerSec, 1, Prefixes::kLargeBinary},
    BaseUnit{"b/s", Dim::kBytesPerSec, 0.125, Prefixes::kLargeBinary},
    BaseUnit{"bps", Dim::kBytesPerSec, 0.125, Prefixes::kLarge},
    BaseUnit{"OPS", Dim::kFlopsPerSec, 1, Prefixes::kLarge},
    BaseUnit{"min", Dim::kSeconds, 60, Prefixes::kNone},
    BaseUnit{"Hz", Dim::kHertz, 1, Prefixes::kLarge},
    BaseUnit{"/s", Dim::kPerSec, 1, Prefixes::kNone},
    BaseUnit{"B", Dim::kBytes, 1, Prefixes::kLargeBinary},
    BaseUnit{"b", Dim::kBytes, 0.125, Prefixes::kLargeBinary},
    BaseUnit{"s", Dim::kSeconds, 1, Prefixes::kSmall},
    BaseUnit{"h", Dim::kSeconds, 3600, Prefixes::kNone},
    BaseUnit{"W", Dim::kWatts, 1, Prefixes::kAll},
    BaseUnit{"J", Dim::kJoules, 1, Prefixes::kAll},
};

struct Prefix {
  std::string_view symbol;
  double factor;
};

constexpr std::array kLargePrefixes = {
    Prefix{"k", 1e3},  Prefix{"M", 1e6},  Prefix{"G", 1e9},
    Prefix{"T", 1e12}, Prefix{"P", 1e15}, Prefix{"E", 1e18},
};
constexpr std::array kBinaryPrefixes = {
    Prefix{"Ki", 1024.0},
    Prefix{"Mi", 1024.0 * 1024},
    Prefix{"Gi", 1024.0 * 1024 * 1024},
    Prefix{"Ti", 1024.0 * 1024 * 1024 * 1024},
    Prefix{"Pi", 1024.0 * 1024 * 1024 * 1024 * 1024},
};
constexpr std::array kSmallPrefixes = {
    Prefix{"m", 1e-3}, Prefix{"u", 1e-6},  Prefix{"\xC2\xB5", 1e-6},  // µ in UTF-8
    Prefix{"n", 1e-9}, Prefix{"p", 1e-12},
};

template <std::size_t N>
bool find_prefix(const std::array<Prefix, N>& table, std::string_view p, double* factor) {
  for (const Prefix& e : table) {
    if (e.symbol == p) {
      *factor = e.factor;
      return true;
    }
  }
  return false;
}

bool prefix_factor(Prefixes allowed, std::string_view p, double* factor) {
  if (p.empty()) {
    *factor = 1;
    return true;
  }
  bool large =
      allowed == Prefixes::kLarge || allowed == Prefixes::kLargeBinary || allowed == Prefixes::kAll;
  bool small = allowed == Prefixes::kSmall || allowed == Prefixes::kAll;
  return (large && find_prefix(kLargePrefixes, p, factor)) ||
         (allowed == Prefixes::kLargeBinary && find_prefix(kBinaryPrefixes, p, factor)) ||
         (small && find_prefix(kSmallPrefixes, p, factor));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

ParsedQuantity fail(std::string msg) {
  return {0, Dim::kBytes, std::move(msg)};
}

// Interprets a unit symbol; `out` receives the dimension and the factor to the base unit.
std::string parse_unit(std::string_view unit, ParsedQuantity* out) {
  if (unit.size() >= 2 && unit.front() == 'K' && unit[1] != 'i') {
    return "ambiguous prefix 'K' in '" + std::string(unit) + "': write 'k' (1000) or 'Ki' (1024)";
  }
  if (unit.ends_with("FLOPs")) {
    return "'" + std::string(unit) + "' is ambiguous: write '" +
           std::string(unit.substr(0, unit.size() - 5)) + "FLOPS' for a rate or '" +
           std::string(unit.substr(0, unit.size() - 5)) + "FLOP' for a count";
  }
  for (const BaseUnit& base : kBaseUnits) {
    if (!unit.ends_with(base.symbol))
      continue;
    double factor = 1;
    if (!prefix_factor(base.prefixes, unit.substr(0, unit.size() - base.symbol.size()), &factor)) {
      continue;
    }
    out->value *= factor * base.factor;
    out->dim = base.dim;
    return {};
  }
  return "unknown unit '" + std::string(unit) + "'";
}

}  // namespace

namespace {

// What each dimension may be, in its base unit: far beyond any machine in both directions,
// yet narrow enough that the products and quotients of a plan (a size over a bandwidth times
// a power, summed over a million devices and steps) stay finite doubles.
struct Bounds {
  double smallest;  // the smallest magnitude other than zero
  double largest;
};

Bounds bounds(Dim d) {
  switch (d) {
    case Dim::kBytes:
      return {0.125, 1e24};  // a bit; a yottabyte
    case Dim::kSeconds:
      return {1e-15, 1e12};  // a femtosecond; 30,000 years
    case Dim::kBytesPerSec:
      return {1e-3, 1e18};
    case Dim::kFlops:
      return {1e-3, 1e32};
    case Dim::kFlopsPerSec:
      return {1e-3, 1e24};
    case Dim::kHertz:
      return {1e-3, 1e15};
    case Dim::kWatts:
      return {1e-6, 1e12};
    case Dim::kJoules:
      return {1e-15, 1e24};
    case Dim::kUsdPerHour:
      return {1e-9, 1e12};
    case Dim::kPerSec:
      return {1e-9, 1e15};
  }
  return {0, 0};
}

}  // namespace

std::string out_of_bounds(double value, Dim d) {
  Bounds b = bounds(d);
  double m = std::fabs(value);
  if (!std::isfinite(value) || m > b.largest)
    return "is too large: " + std::string(dim_noun(d)) + " is at most " + format_number(b.largest) +
           " " + std::string(dim_unit(d));
  if (m != 0 && m < b.smallest)
    return "is too small: " + std::string(dim_noun(d)) + " other than 0 is at least " +
           format_number(b.smallest) + " " + std::string(dim_unit(d));
  return {};
}

ParsedQuantity parse_quantity(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty())
    return fail("empty quantity");
  const char* begin = s.data();
  if (*begin == '+')
    ++begin;
  double value = 0;
  auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), value);
  if (ec != std::errc() || ptr == begin) {
    return fail("'" + std::string(s) + "' does not start with a number");
  }
  if (!std::isfinite(value))
    return fail("'" + std::string(s) + "' is not a finite number");
  std::string_view unit = trim(std::string_view(ptr, s.data() + s.size() - ptr));
  if (unit.empty())
    return fail("missing unit in '" + std::string(s) + "'");
  ParsedQuantity out{value, Dim::kBytes, {}};
  std::string err = parse_unit(unit, &out);
  if (!err.empty())
    return fail(std::move(err));
  if (std::string why = out_of_bounds(out.value, out.dim); !why.empty())
    return fail("'" + std::string(s) + "' " + why);
  return out;
}

ParsedQuantity parse_quantity(std::string_view text, Dim want) {
  ParsedQuantity q = parse_quantity(text);
  std::string example = "; write " + std::string(dim_noun(want)) + " such as '" +
                        std::string(dim_example(want)) + "'";
  if (!q.error.empty())
    return fail(q.error + example);
  if (q.dim != want) {
    return fail("'" + std::string(trim(text)) + "' is " + std::string(dim_noun(q.dim)) + example);
  }
  return q;
}

std::string_view dim_noun(Dim d) {
  switch (d) {
    case Dim::kBytes:
      return "a size";
    case Dim::kSeconds:
      return "a time";
    case Dim::kBytesPerSec:
      return "a bandwidth";
    case Dim::kFlops:
      return "an operation count";
    case Dim::kFlopsPerSec:
      return "a compute rate";
    case Dim::kHertz:
      return "a frequency";
    case Dim::kWatts:
      return "a power";
    case Dim::kJoules:
      return "an energy";
    case Dim::kUsdPerHour:
      return "a price per hour";
    case Dim::kPerSec:
      return "a rate";
  }
  return "a quantity";
}

std::string_view dim_example(Dim d) {
  switch (d) {
    case Dim::kBytes:
      return "80 GiB";
    case Dim::kSeconds:
      return "2 us";
    case Dim::kBytesPerSec:
      return "900 GB/s";
    case Dim::kFlops:
      return "1.2 TFLOP";
    case Dim::kFlopsPerSec:
      return "989 TFLOPS";
    case Dim::kHertz:
      return "1.98 GHz";
    case Dim::kWatts:
      return "700 W";
    case Dim::kJoules:
      return "12 pJ";
    case Dim::kUsdPerHour:
      return "2.50 USD/h";
    case Dim::kPerSec:
      return "20 req/s";
  }
  return "1";
}

std::string_view dim_unit(Dim d) {
  switch (d) {
    case Dim::kBytes:
      return "B";
    case Dim::kSeconds:
      return "s";
    case Dim::kBytesPerSec:
      return "B/s";
    case Dim::kFlops:
      return "FLOP";
    case Dim::kFlopsPerSec:
      return "FLOPS";
    case Dim::kHertz:
      return "Hz";
    case Dim::kWatts:
      return "W";
    case Dim::kJoules:
      return "J";
    case Dim::kUsdPerHour:
      return "USD/h";
    case Dim::kPerSec:
      return "/s";
  }
  return "";
}

namespace {

std::atomic<std::uint64_t> g_non_finite{0};

}  // namespace

std::uint64_t non_finite_formatted() {
  return g_non_finite.load();
}

std::string format_number(double value, int digits) {
  if (value == 0)
    return "0";
  if (!std::isfinite(value)) {
    ++g_non_finite;
    return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  }
  double mag = std::floor(std::log10(std::fabs(value)));
  if (mag < -4 || mag >= 15) {
    std::array<char, 32> buf{};
    std::snprintf(buf.data(), buf.size(), "%.*e", digits - 1, value);
    return buf.data();
  }
  int decimals = std::max(0, digits - 1 - static_cast<int>(mag));
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.*f", decimals, value);
  std::string s = buf.data();
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0')
      s.pop_back();
    if (s.back() == '.')
      s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

namespace {

// Binary prefixes are used when the value is round in the largest binary unit it reaches
// (228 KiB, 1.5 MiB, 32 GiB); 80 GB is not (74.51 GiB) and is written with SI prefixes.
std::string format_binary_bytes(double value) {
  for (int i = static_cast<int>(kBinaryPrefixes.size()) - 1; i >= 0; --i) {
    double f = kBinaryPrefixes[i].factor;
    if (value < f)
      continue;
    double q = value / f;
    if (std::fmod(q * 1000, 1.0) != 0)
      return {};
    return format_number(q, 6) + " " + std::string(kBinaryPrefixes[i].symbol) + "B";
  }
  return {};
}

}  // namespace

std::string format_bit_rate(BytesPerSec rate) {
  double bits = rate.value * 8;
  for (int i = static_cast<int>(kLargePrefixes.size()) - 1; i >= 0; --i) {
    if (bits >= kLargePrefixes[i].factor) {
      return format_number(bits / kLargePrefixes[i].factor) + " " +
             std::string(kLargePrefixes[i].symbol) + "b/s";
    }
  }
  return format_number(bits) + " b/s";
}

std::string format_quantity(double value, Dim d) {
  std::string unit(dim_unit(d));
  double mag = std::fabs(value);
  if (d == Dim::kBytes && mag >= 1024) {
    std::string binary = format_binary_bytes(mag);
    if (!binary.empty())
      return (value < 0 ? "-" : "") + binary;
  }
  if (d == Dim::kSeconds || d == Dim::kJoules) {
    if (mag != 0 && mag < 1) {
      for (const Prefix& p :
           {Prefix{"m", 1e-3}, Prefix{"us", 1e-6}, Prefix{"n", 1e-9}, Prefix{"p", 1e-12}}) {
        if (mag >= p.factor || p.factor == 1e-12) {
          std::string sym = p.symbol == "us" ? "u" : std::string(p.symbol);
          return format_number(value / p.factor) + " " + sym + unit;
        }
      }
    }
    if (d == Dim::kSeconds)
      return format_number(value) + " " + unit;
  }
  if (d == Dim::kUsdPerHour || d == Dim::kPerSec)
    return format_number(value) + " " + unit;
  for (int i = static_cast<int>(kLargePrefixes.size()) - 1; i >= 0; --i) {
    if (mag >= kLargePrefixes[i].factor) {
      return format_number(value / kLargePrefixes[i].factor) + " " +
             std::string(kLargePrefixes[i].symbol) + unit;
    }
  }
  return format_number(value) + " " + unit;
}

}  // namespace yirage::devices
