// Output files the user named, written so that a run never writes outside them: names read
// from input files (programs, devices) become one safe path component each, and an output
// never replaces one of the run's own inputs or anything but a regular file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace yirage::cli {

/// `name`, read from an input file, as one path component: ASCII letters, digits, '.', '_'
/// and '-' are kept, every other byte becomes '_'; a name that would be empty, '.', '..' or
/// start with '.' or '-' gets a leading '_'. The same name always maps to the same part.
std::string file_name_part(std::string_view name);

/// Why `path` cannot take an output, or empty: it names one of this run's inputs, or exists
/// and is not a regular file. Commands check their output paths with it before they work,
/// so that a refused output leaves no other output half-printed.
std::string output_problem(const std::filesystem::path& path);

/// Writes `text` to `path` atomically (report::atomic_write), refusing a path that names one
/// of this run's inputs. Returns an error message, or empty on success.
std::string write_output(const std::filesystem::path& path, const std::string& text);

}  // namespace yirage::cli
