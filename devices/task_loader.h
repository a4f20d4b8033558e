// Reads task files, resolving model presets against the model registry.
#pragma once

#include "devices/model_loader.h"
#include "devices/task_spec.h"

#include <filesystem>
#include <string>

namespace yirage::devices {

/// Reads and validates a task file. Throws `InputError` listing every problem in it.
TaskSpec load_task(const std::filesystem::path& path, const ModelRegistry& models);

/// Reads a task from text, as if it were the contents of `path`.
TaskSpec parse_task(const std::string& path, const std::string& text, const ModelRegistry& models);

}  // namespace yirage::devices
