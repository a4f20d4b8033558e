// Scratch folders and file contents for the unit tests that write files.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace yirage::testing {

/// A fresh, empty folder for one test: TMPDIR/yirage_<name>_<pid>.
inline std::filesystem::path scratch_dir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("yirage_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// The whole content of a file ("" when it cannot be read).
inline std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace yirage::testing
