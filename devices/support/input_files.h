// The files this process has read as input. Every loader reads through `read_file_text`,
// which notes the file here, so that a command's outputs can refuse to replace one of its
// own inputs (a --save-plan pointed at the cluster file, say).
#pragma once

#include <filesystem>

namespace yirage::devices {

/// Records `path` as read by this process (thread-safe).
void note_input_file(const std::filesystem::path& path);

/// Whether `path` names a file this process has read (the same file, through any name or
/// hard link). False where `path` does not exist.
bool is_input_file(const std::filesystem::path& path);

}  // namespace yirage::devices
