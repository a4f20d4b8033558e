// The text output of NVIDIA's nccl-tests (all_reduce_perf and its siblings) read as measured
// collective rows, so that `validate` prices a user's own nccl-tests runs as they are.
#pragma once

#include "costmodel/measured.h"

#include <string>

namespace yirage::costmodel {

/// Whether `text` is nccl-tests' output: it holds the "# nThread ... nGpus ..." header line.
bool is_nccl_tests_output(const std::string& text);

/// The rows of one nccl-tests run: one per size and placement (out of place, then in
/// place), times in seconds. The collective comes from "# Collective test starting:
/// NAME_perf" or, for versions without that line, from the file name; the device from the
/// "# Rank" lines (the ranks are their count, the ranks per node the most on one host); the
/// launch style is "graph" for runs with -G, "synced" for blocking runs (-m) and "eager"
/// otherwise. The header lines are the provenance. A problem (no collective, no device
/// line, a malformed row, wrong elements reported) is reported as `file:line:col` (throws
/// devices::InputError).
MeasuredFile parse_nccl_tests(const std::string& path, const std::string& text);

}  // namespace yirage::costmodel
