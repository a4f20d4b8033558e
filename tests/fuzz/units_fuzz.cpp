// libFuzzer target: the quantity parser ("3.35 TB/s", "80 GiB") on any text. It never
// throws; it returns a finite, non-negative value or a reason.
#include "devices/support/units.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  yirage::devices::ParsedQuantity q = yirage::devices::parse_quantity(text);
  if (q.error.empty() && !std::isfinite(q.value))
    __builtin_trap();  // a parsed quantity must be a finite number
  (void)yirage::devices::parse_quantity(text, yirage::devices::Dim::kBytesPerSec);
  return 0;
}
