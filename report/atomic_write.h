// Writing output files so that an interrupted run never leaves a partial file: the text
// goes to a temporary file beside the target, which is then renamed over it.
#pragma once

#include <filesystem>
#include <string>

namespace yirage::report {

/// Writes `text` to `path` atomically: a temporary file beside it, flushed to the disk, then
/// renamed over it, with SIGINT, SIGTERM, SIGHUP and SIGQUIT held meanwhile, so that an
/// interrupted run leaves the old file or the new one and no partial or temporary file
/// (only SIGKILL or a crash inside the write can leave PATH.tmp.PID). Refuses a `path` that
/// exists and is not a regular file (a device, a directory, a link, a FIFO). Returns an error
/// message, or empty on success.
std::string atomic_write(const std::filesystem::path& path, const std::string& text);

/// Why `atomic_write` would not replace `path` (it exists and is not a regular file), or
/// empty.
std::string not_replaceable(const std::filesystem::path& path);

}  // namespace yirage::report
