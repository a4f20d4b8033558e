#include "cli/output_file.h"

#include "report/atomic_write.h"

#include "devices/support/input_files.h"

namespace yirage::cli {

std::string file_name_part(std::string_view name) {
  std::string out;
  for (char c : name) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
    out += keep ? c : '_';
  }
  if (out.empty() || out.front() == '.' || out.front() == '-')
    out.insert(out.begin(), '_');
  return out;
}

std::string output_problem(const std::filesystem::path& path) {
  if (devices::is_input_file(path))
    return "will not replace " + path.string() + ": it is one of this run's input files";
  return report::not_replaceable(path);
}

std::string write_output(const std::filesystem::path& path, const std::string& text) {
  if (std::string why = output_problem(path); !why.empty())
    return why;
  return report::atomic_write(path, text);
}

}  // namespace yirage::cli
