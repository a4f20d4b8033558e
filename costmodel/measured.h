// Measured timings read from the CSV format of data/benchmarks/README.md, for validation
// and calibration of the models.
#pragma once

#include "devices/registry.h"
#include "devices/support/diagnostics.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace yirage::costmodel {

struct MeasuredRow {
  std::string kind;   // "collective", "op" or "layer"
  std::string op;     // "all_reduce", "gemm", ...; layers: "forward", "forward_backward"
  std::string shape;  // ops: "MxNxK", ... (costmodel/gpu_op.h formats); layers: "MODEL:BxSxK"
  std::string device;
  std::string fabric;
  std::int64_t ranks = 0;
  std::int64_t ranks_per_node = 0;
  double bytes = 0;
  std::string dtype;
  double time_s = 0;
  std::string stat;
  // Collectives: how the calls were launched ("graph": replayed from a CUDA graph; "eager":
  // launched back to back, as nccl-tests times them; "synced": one call at a time, waited
  // for on the host), and whether the output overlays the input (nccl-tests' in-place).
  std::string launch = "graph";
  bool in_place = false;
  // Op rows: the bytes zeroed before each timed call to flush the L2 (0: none, the calls back
  // to back); absent: bench/ops.py's do_bench, which zeroes kDoBenchFlushBytes.
  std::optional<double> flush_bytes;
  devices::SourceLoc loc;
};

struct MeasuredFile {
  std::string path;
  std::vector<std::string> provenance;  // the leading comment lines, without '#'
  std::vector<MeasuredRow> rows;
};

/// Reads a measured CSV file, or the text output of nccl-tests (costmodel/nccl_tests.h).
/// Every problem is reported as `file:line:col` (throws devices::InputError); a file
/// without provenance comments is refused.
MeasuredFile load_measured(const std::filesystem::path& path);

/// The calibration split: for each row, whether `calibrate` fits on it. Within each (kind,
/// op, device, ranks, model) the rows are ordered by size (bytes, then the shape's
/// dimensions, last first) and alternate between the fit and held-out splits, the first
/// fitted: every size class lands in both, whatever the file's order. Collective rows below
/// `min_bytes` or spanning nodes take no part (false). `validate --held-out` prices the
/// others.
std::vector<bool> fit_split(const MeasuredFile& file, double min_bytes);

/// A measured row of one device type, with its file and its calibration split.
struct DeviceRow {
  const MeasuredFile* file;
  const MeasuredRow* row;
  const devices::DeviceSpec* device;
  bool fit;  // fit_split's (no minimum size)
};

/// The rows of `kind` measured on the device type named `device` (a registry name; rows may
/// use aliases), in file order.
std::vector<DeviceRow> device_rows(const std::vector<MeasuredFile>& files,
                                   const std::string& kind,
                                   const std::string& device,
                                   const devices::DeviceRegistry& registry);

/// "a, b": the files of `rows`, each once, in the order they first appear.
std::string file_list(const std::vector<const MeasuredFile*>& rows);

/// One comma-separated cell of a CSV line and its 1-based column.
struct CsvCell {
  std::string text;
  int col = 1;
};

/// The non-empty lines of `text` with their 1-based numbers, carriage returns dropped.
std::vector<std::pair<int, std::string>> text_lines(const std::string& text);

/// `line` split at every comma (no quoting): the cells of bench CSV files.
std::vector<CsvCell> split_csv_line(const std::string& line);

/// The median of `v` (0 for none).
double median(std::vector<double> v);

/// Parses text as the contents of `path`.
MeasuredFile parse_measured(const std::string& path, const std::string& text);

}  // namespace yirage::costmodel
