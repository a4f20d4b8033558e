// The number rule and the text rule of input files: every quantity read is finite and within
// physical bounds, and every text read is printable UTF-8.
#include "devices/support/text.h"
#include "devices/support/units.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

namespace yirage::devices {
namespace {

const char* kUnits[] = {"B",      "PiB", "b",   "s", "ns", "h", "GB/s", "Tb/s",  "FLOP",  "PFLOP",
                        "TFLOPS", "Hz",  "GHz", "W", "kW", "J", "MJ",   "USD/h", "req/s", "tok/s"};

// Property: whatever the mantissa and exponent, a quantity that parses is finite and inside
// its dimension's bounds; one that is beyond them is refused with a reason.
TEST(QuantityBounds, EveryParsedQuantityIsFiniteAndBounded) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> mantissa(1, 10);
  std::uniform_int_distribution<int> exponent(-320, 308);
  for (int i = 0; i < 20000; ++i) {
    const char* unit = kUnits[static_cast<std::size_t>(i) % std::size(kUnits)];
    std::string text =
        std::to_string(mantissa(rng)) + "e" + std::to_string(exponent(rng)) + " " + unit;
    ParsedQuantity q = parse_quantity(text);
    if (q.error.empty()) {
      ASSERT_TRUE(std::isfinite(q.value)) << text;
      EXPECT_EQ(out_of_bounds(q.value, q.dim), "") << text;
    } else {
      EXPECT_FALSE(q.error.empty()) << text;
    }
  }
}

TEST(QuantityBounds, AbsurdValuesAreRefusedWithTheBound) {
  EXPECT_NE(parse_quantity("1e300 PiB").error.find("too large"), std::string::npos);
  EXPECT_NE(parse_quantity("1e-300 TFLOPS").error.find("too small"), std::string::npos);
  EXPECT_NE(parse_quantity("1e308 EB/s").error.find("too large"), std::string::npos);
  EXPECT_EQ(parse_quantity("0 GB/s").error, "");  // zero is left to each key's own rule
  EXPECT_EQ(parse_quantity("80 GiB").error, "");
  EXPECT_EQ(parse_quantity("989 TFLOPS").error, "");
}

TEST(PrintableText, AcceptsUtf8AndRefusesMalformedBytesAndControls) {
  std::string what;
  EXPECT_EQ(first_unprintable("name: café — 東京 🚀\n\tx\r\n", &what), std::string::npos);
  EXPECT_EQ(first_unprintable("ab\xff", &what), 2u);
  EXPECT_NE(what.find("0xFF"), std::string::npos);
  EXPECT_EQ(first_unprintable("a\x1b[31m", &what), 1u);
  EXPECT_NE(what.find("U+001B"), std::string::npos);
  EXPECT_EQ(first_unprintable("\xc0\xaf", &what), 0u);          // overlong '/'
  EXPECT_EQ(first_unprintable("\xed\xa0\x80", &what), 0u);      // a surrogate
  EXPECT_EQ(first_unprintable("\xf4\x90\x80\x80", &what), 0u);  // above U+10FFFF
  EXPECT_EQ(first_unprintable("ok\xe6\x9d", &what), 2u);        // cut short
  EXPECT_EQ(first_unprintable("\xc2\x9b", &what), 0u);          // C1 CSI
  EXPECT_EQ(first_unprintable(std::string("a\0b", 3), &what), 1u);
}

// Property: every code point that is neither a control nor a surrogate, encoded as UTF-8,
// is accepted; cutting the last byte off a multi-byte one is refused there.
TEST(PrintableText, EveryPrintableCodePointPassesAndTruncationFails) {
  auto encode = [](std::uint32_t c) {
    std::string s;
    if (c < 0x80) {
      s += static_cast<char>(c);
    } else if (c < 0x800) {
      s += static_cast<char>(0xC0 | (c >> 6));
      s += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      s += static_cast<char>(0xE0 | (c >> 12));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (c >> 18));
      s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (c & 0x3F));
    }
    return s;
  };
  std::string what;
  for (std::uint32_t c = 0x20; c <= 0x10FFFF; c += (c < 0x3000 ? 1 : 97)) {
    if (c == 0x7F || (c >= 0x80 && c <= 0x9F) || (c >= 0xD800 && c <= 0xDFFF))
      continue;
    std::string s = "x" + encode(c);
    ASSERT_EQ(first_unprintable(s, &what), std::string::npos) << c;
    if (s.size() > 2) {
      s.pop_back();
      ASSERT_EQ(first_unprintable(s, &what), 1u) << c;
    }
  }
}

}  // namespace
}  // namespace yirage::devices
