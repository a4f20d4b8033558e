// libFuzzer target: a cluster file (data/clusters/README.md format) read from any bytes,
// against the bundled device registry.
#include "tests/fuzz/fuzz_input.h"

#include "devices/cluster_loader.h"
#include "devices/registry.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace yirage;
  static const devices::DeviceRegistry registry = devices::DeviceRegistry::load_bundled();
  fuzz::expect_value_or_input_error([&] {
    (void)devices::parse_cluster("fuzz_cluster.yaml", fuzz::as_text(data, size), registry);
  });
  return 0;
}
