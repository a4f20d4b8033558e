// libFuzzer target: a measured CSV file (data/benchmarks/README.md format) read from any
// bytes, then split for calibration as `calibrate` and `validate --held-out` do.
#include "tests/fuzz/fuzz_input.h"

#include "costmodel/measured.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace yirage;
  fuzz::expect_value_or_input_error([&] {
    costmodel::MeasuredFile file =
        costmodel::parse_measured("fuzz_measured.csv", fuzz::as_text(data, size));
    (void)costmodel::fit_split(file, 1 << 20);
  });
  return 0;
}
