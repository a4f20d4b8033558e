#include "devices/support/input_files.h"

#include <mutex>
#include <vector>

namespace yirage::devices {
namespace {

std::mutex& lock() {
  static std::mutex m;
  return m;
}

std::vector<std::filesystem::path>& files() {
  static std::vector<std::filesystem::path> read;
  return read;
}

}  // namespace

void note_input_file(const std::filesystem::path& path) {
  std::lock_guard<std::mutex> guard(lock());
  files().push_back(std::filesystem::absolute(path));
}

bool is_input_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return false;
  std::lock_guard<std::mutex> guard(lock());
  for (const std::filesystem::path& input : files()) {
    if (std::filesystem::equivalent(path, input, ec))
      return true;
  }
  return false;
}

}  // namespace yirage::devices
