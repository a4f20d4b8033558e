#include "devices/support/units.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace yirage::devices {
namespace {

double parse_ok(const char* text, Dim want) {
  ParsedQuantity q = parse_quantity(text, want);
  EXPECT_EQ(q.error, "") << text;
  return q.value;
}

TEST(Units, BytesAndBitsWithSiAndBinaryPrefixes) {
  EXPECT_DOUBLE_EQ(parse_ok("80 GB", Dim::kBytes), 80e9);
  EXPECT_DOUBLE_EQ(parse_ok("80 GiB", Dim::kBytes), 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(parse_ok("228 KiB", Dim::kBytes), 228.0 * 1024);
  EXPECT_DOUBLE_EQ(parse_ok("8 Gb", Dim::kBytes), 1e9);
  EXPECT_DOUBLE_EQ(parse_ok("1 kB", Dim::kBytes), 1000);
}

TEST(Units, BandwidthsInBytesAndBits) {
  EXPECT_DOUBLE_EQ(parse_ok("3.35 TB/s", Dim::kBytesPerSec), 3.35e12);
  EXPECT_DOUBLE_EQ(parse_ok("900 GB/s", Dim::kBytesPerSec), 900e9);
  EXPECT_DOUBLE_EQ(parse_ok("400 Gb/s", Dim::kBytesPerSec), 50e9);
  EXPECT_DOUBLE_EQ(parse_ok("400 Gbps", Dim::kBytesPerSec), 50e9);
  EXPECT_DOUBLE_EQ(parse_ok("1 GiB/s", Dim::kBytesPerSec), 1024.0 * 1024 * 1024);
}

TEST(Units, RatesTimesPowerMoney) {
  EXPECT_DOUBLE_EQ(parse_ok("989 TFLOPS", Dim::kFlopsPerSec), 989e12);
  EXPECT_DOUBLE_EQ(parse_ok("1979 TOPS", Dim::kFlopsPerSec), 1979e12);
  EXPECT_DOUBLE_EQ(parse_ok("1.5 PFLOP/s", Dim::kFlopsPerSec), 1.5e15);
  EXPECT_DOUBLE_EQ(parse_ok("2 us", Dim::kSeconds), 2e-6);
  EXPECT_DOUBLE_EQ(parse_ok("2 µs", Dim::kSeconds), 2e-6);
  EXPECT_DOUBLE_EQ(parse_ok("500 ns", Dim::kSeconds), 500e-9);
  EXPECT_DOUBLE_EQ(parse_ok("3 h", Dim::kSeconds), 10800);
  EXPECT_DOUBLE_EQ(parse_ok("700 W", Dim::kWatts), 700);
  EXPECT_DOUBLE_EQ(parse_ok("2.50 USD/h", Dim::kUsdPerHour), 2.5);
  EXPECT_DOUBLE_EQ(parse_ok("1.98 GHz", Dim::kHertz), 1.98e9);
  EXPECT_DOUBLE_EQ(parse_ok("12 pJ", Dim::kJoules), 12e-12);
  EXPECT_DOUBLE_EQ(parse_ok("20 req/s", Dim::kPerSec), 20);
  EXPECT_DOUBLE_EQ(parse_ok("1e3 GB", Dim::kBytes), 1e12);
  EXPECT_DOUBLE_EQ(parse_ok("80GB", Dim::kBytes), 80e9);
}

TEST(Units, ErrorsNameTheProblemAndAnExample) {
  EXPECT_EQ(parse_quantity("900 GBs", Dim::kBytesPerSec).error,
            "unknown unit 'GBs'; write a bandwidth such as '900 GB/s'");
  EXPECT_EQ(parse_quantity("80 GB", Dim::kBytesPerSec).error,
            "'80 GB' is a size; write a bandwidth such as '900 GB/s'");
  EXPECT_EQ(parse_quantity("80", Dim::kBytes).error,
            "missing unit in '80'; write a size such as '80 GiB'");
  EXPECT_EQ(parse_quantity("fast", Dim::kBytesPerSec).error,
            "'fast' does not start with a number; write a bandwidth such as '900 GB/s'");
  EXPECT_EQ(parse_quantity("64 KB").error,
            "ambiguous prefix 'K' in 'KB': write 'k' (1000) or 'Ki' (1024)");
  EXPECT_EQ(parse_quantity("989 TFLOPs").error,
            "'TFLOPs' is ambiguous: write 'TFLOPS' for a rate or 'TFLOP' for a count");
  EXPECT_EQ(parse_quantity("").error, "empty quantity");
}

TEST(Units, FormattingIsReadableAndRoundTrips) {
  EXPECT_EQ(format(BytesPerSec{3.35e12}), "3.35 TB/s");
  EXPECT_EQ(format(FlopsPerSec{989.4e12}), "989.4 TFLOPS");
  EXPECT_EQ(format(Bytes{80e9}), "80 GB");
  EXPECT_EQ(format(Bytes{228.0 * 1024}), "228 KiB");
  EXPECT_EQ(format(Bytes{50.0 * 1024 * 1024}), "50 MiB");
  EXPECT_EQ(format(Seconds{2e-6}), "2 us");
  EXPECT_EQ(format(Seconds{0.6e-6}), "600 ns");
  EXPECT_EQ(format(Seconds{1.5}), "1.5 s");
  EXPECT_EQ(format(Watts{700}), "700 W");
  EXPECT_EQ(format(UsdPerHour{2.49}), "2.49 USD/h");
  for (const char* text : {"3.35 TB/s", "989.4 TFLOPS", "80 GB", "228 KiB", "2 us"}) {
    ParsedQuantity q = parse_quantity(text);
    EXPECT_EQ(format_quantity(q.value, q.dim), text);
  }
}

TEST(Units, TypedArithmetic) {
  Seconds t = Bytes{1e9} / BytesPerSec{100e9};
  EXPECT_DOUBLE_EQ(t.value, 0.01);
  Joules e = Watts{700} * Seconds{2};
  EXPECT_DOUBLE_EQ(e.value, 1400);
  EXPECT_DOUBLE_EQ((Flops{2e12} / FlopsPerSec{1e12}).value, 2);
}

TEST(Units, FormatNumber) {
  EXPECT_EQ(format_number(70553706496), "70553706496");
  EXPECT_EQ(format_number(0.12345), "0.1235");
  EXPECT_EQ(format_number(8.0), "8");
  EXPECT_EQ(format_number(1e-7), "1.000e-07");
}

// Every printed result must be finite: format_number counts what is not, and the CLI prints
// nothing but an internal error when the count grows during a command (cli/run.cpp).
TEST(Units, NonFiniteNumbersAreCounted) {
  std::uint64_t before = non_finite_formatted();
  EXPECT_EQ(format_number(1.5), "1.5");
  EXPECT_EQ(non_finite_formatted(), before);
  EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_number(std::nan("")), "nan");
  EXPECT_EQ(non_finite_formatted(), before + 2);
}

}  // namespace
}  // namespace yirage::devices
