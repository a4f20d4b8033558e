// Writing output files so that an interrupted run never leaves a partial file: the text
// goes to a temporary file beside the target, which is then renamed over it.
#pragma once

#include <filesystem>
#include <string>

namespace yirage::report {

/// Writes `text` to `path` atomically. Returns an error message, or empty on success.
std::string atomic_write(const std::filesystem::path& path, const std::string& text);

}  // namespace yirage::report
