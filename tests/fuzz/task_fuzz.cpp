// libFuzzer target: a task file (data/tasks/README.md format) read from any bytes, against
// the bundled model presets.
#include "tests/fuzz/fuzz_input.h"

#include "devices/model_loader.h"
#include "devices/task_loader.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace yirage;
  static const devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  fuzz::expect_value_or_input_error(
      [&] { (void)devices::parse_task("fuzz_task.yaml", fuzz::as_text(data, size), models); });
  return 0;
}
