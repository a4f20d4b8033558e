// The device registry: every device specification known to a run, from the bundled
// data/devices/, from a user's `--devices DIR`, and from cluster files that define devices
// inline. Names and aliases are looked up case-insensitively.
#pragma once

#include "devices/device_spec.h"
#include "devices/support/diagnostics.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace yirage::devices {

/// The data directory: $YIRAGE_DATA_DIR when set; else, for an installed binary,
/// <prefix>/share/yirage/data beside it; else the one this build was configured with (the
/// source tree's data/).
std::filesystem::path data_dir();

class DeviceRegistry {
 public:
  /// Loads every `*.yaml` file of `dir` in name order. Throws `InputError` listing every
  /// problem of every file.
  static DeviceRegistry load_dir(const std::filesystem::path& dir);

  /// The bundled registry, `data_dir() / "devices"`.
  static DeviceRegistry load_bundled();

  /// Loads the files of `dir` into this registry (see `load_dir`).
  void add_dir(const std::filesystem::path& dir);

  /// Adds a device; a name or alias that is already taken is recorded in `diag`.
  void add(DeviceSpec spec, Diagnostics& diag);

  /// The device called `name` (its name or an alias, any case), or nullptr.
  const DeviceSpec* find(std::string_view name) const;

  /// Devices sorted by name.
  const std::vector<DeviceSpec>& devices() const { return devices_; }

  /// Every name and alias, for suggestions.
  std::vector<std::string> all_names() const;

 private:
  std::vector<DeviceSpec> devices_;
};

}  // namespace yirage::devices
