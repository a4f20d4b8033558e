// libFuzzer target: one device file (data/devices/*.yaml format) read from any bytes.
#include "tests/fuzz/fuzz_input.h"

#include "devices/device_loader.h"
#include "devices/support/yaml_reader.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace yirage;
  fuzz::expect_value_or_input_error([&] {
    devices::Diagnostics diag;
    devices::YamlDoc doc("fuzz_device.yaml", fuzz::as_text(data, size), diag);
    if (doc.root())
      (void)devices::read_device(doc, doc.root());
    diag.throw_if_errors();
  });
  return 0;
}
