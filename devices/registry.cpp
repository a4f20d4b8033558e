#include "devices/registry.h"

#include "devices/device_loader.h"
#include "devices/support/text.h"
#include "devices/support/yaml_reader.h"

#include <algorithm>
#include <cstdlib>

#if !defined(YIRAGE_DATA_DIR) || !defined(YIRAGE_DATA_FROM_BIN)
#error "YIRAGE_DATA_DIR and YIRAGE_DATA_FROM_BIN must be defined by the build"
#endif

namespace yirage::devices {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("YIRAGE_DATA_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  // An installed binary's own data, beside it (cmake --install); a binary in the build tree
  // has none there and reads the source tree's.
  static const std::filesystem::path installed = [] {
    std::error_code ec;
    std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
      return std::filesystem::path{};
    std::filesystem::path dir = (exe.parent_path() / YIRAGE_DATA_FROM_BIN).lexically_normal();
    return std::filesystem::is_directory(dir / "devices", ec) ? dir : std::filesystem::path{};
  }();
  return installed.empty() ? std::filesystem::path{YIRAGE_DATA_DIR} : installed;
}

namespace {

std::vector<std::filesystem::path> yaml_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

DeviceRegistry DeviceRegistry::load_dir(const std::filesystem::path& dir) {
  DeviceRegistry r;
  r.add_dir(dir);
  return r;
}

DeviceRegistry DeviceRegistry::load_bundled() {
  return load_dir(data_dir() / "devices");
}

void DeviceRegistry::add_dir(const std::filesystem::path& dir) {
  Diagnostics diag;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    diag.error(SourceLoc{dir.string(), 0, 0}, "not a directory of device files");
    diag.throw_if_errors();
  }
  for (const auto& file : yaml_files(dir)) {
    YamlDoc doc = YamlDoc::load(file, diag);
    if (!doc.root())
      continue;
    if (auto spec = read_device(doc, doc.root()))
      add(std::move(*spec), diag);
  }
  diag.throw_if_errors();
}

void DeviceRegistry::add(DeviceSpec spec, Diagnostics& diag) {
  std::vector<std::string> names = spec.aliases;
  names.insert(names.begin(), spec.name);
  for (const std::string& n : names) {
    if (const DeviceSpec* other = find(n)) {
      diag.error(spec.loc, "device name '" + n + "' is already used by '" + other->name +
                               "' defined at " + other->loc.str());
      return;
    }
  }
  auto pos = std::lower_bound(
      devices_.begin(), devices_.end(), spec,
      [](const DeviceSpec& a, const DeviceSpec& b) { return to_lower(a.name) < to_lower(b.name); });
  devices_.insert(pos, std::move(spec));
}

const DeviceSpec* DeviceRegistry::find(std::string_view name) const {
  for (const DeviceSpec& d : devices_) {
    if (iequals(d.name, name))
      return &d;
    for (const std::string& a : d.aliases) {
      if (iequals(a, name))
        return &d;
    }
  }
  return nullptr;
}

std::vector<std::string> DeviceRegistry::all_names() const {
  std::vector<std::string> out;
  for (const DeviceSpec& d : devices_) {
    out.push_back(d.name);
    out.insert(out.end(), d.aliases.begin(), d.aliases.end());
  }
  return out;
}

}  // namespace yirage::devices
