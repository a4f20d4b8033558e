// libFuzzer target: a tensor program (data/programs/README.md format) read from any bytes.
#include "tests/fuzz/fuzz_input.h"

#include "codegen/program/program_loader.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace yirage;
  fuzz::expect_value_or_input_error(
      [&] { (void)codegen::parse_program(fuzz::as_text(data, size), "fuzz_program.yaml"); });
  return 0;
}
