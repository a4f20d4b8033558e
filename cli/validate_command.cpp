// `yirage-plan validate MEASURED.csv...`: the model's estimate next to every measured row,
// errors per size band, and a failing exit code when the error exceeds the threshold.
#include "report/table.h"

#include "cli/context.h"
#include "cli/run.h"
#include "codegen/cost/program_validation.h"
#include "costmodel/validation.h"
#include "devices/support/diagnostics.h"
#include "devices/support/units.h"
#include "planner/infer_step_validation.h"
#include "planner/layer_validation.h"

#include <CLI/CLI.hpp>

#include <map>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

struct ValidateArgs {
  std::vector<std::string> files;
  double max_mape = 15;
  double max_small_mape = -1;  // collectives below --min-size; negative: not gated
  bool per_kind = false;       // collectives: the bars hold for every (collective, ranks, launch)
  std::string min_size = "1 MiB";
  bool verbose = false;
  bool uncalibrated = false;
  bool held_out = false;
};

// Keeps the rows of the held-out split (costmodel::fit_split over every size, as `calibrate`
// fits) alone.
costmodel::MeasuredFile held_out_rows(const costmodel::MeasuredFile& file) {
  std::vector<bool> fit = costmodel::fit_split(file, 0);
  costmodel::MeasuredFile out = file;
  out.rows.clear();
  for (std::size_t i = 0; i < file.rows.size(); ++i) {
    if (!fit[i])
      out.rows.push_back(file.rows[i]);
  }
  return out;
}

// A row on a device the registry does not know is bad input, not a row to skip: the whole
// file's figure would otherwise be computed on fewer rows than the user gave.
void check_devices(const costmodel::MeasuredFile& file, const devices::DeviceRegistry& registry) {
  std::vector<devices::Diagnostic> unknown;
  for (const costmodel::MeasuredRow& row : file.rows) {
    if (registry.find(row.device) == nullptr) {
      unknown.push_back(devices::diagnostic_at(
          row.loc, "unknown device '" + row.device +
                       "' (`yirage-plan devices` lists them; --devices DIR adds more)"));
    }
  }
  if (!unknown.empty())
    throw devices::InputError(unknown);
}

std::string pct(double v) {
  return devices::format_number(v, 3) + "%";
}

void print_bands(std::ostream& out, const std::vector<costmodel::ValidationPoint>& points) {
  Table t({"  size band", ">rows", ">MAPE", ">bias", ">max |error|"});
  for (const costmodel::BandStats& b : costmodel::band_stats(points)) {
    if (b.rows == 0)
      continue;
    t.add_row({"  " + b.band, std::to_string(b.rows), pct(b.mape), pct(b.bias), pct(b.max_abs)});
  }
  t.print(out);
}

void print_points(std::ostream& out, const std::vector<costmodel::ValidationPoint>& points) {
  Table t({"  line", ">ranks", ">size", ">measured", ">estimate", ">error", "model"});
  for (const costmodel::ValidationPoint& p : points) {
    t.add_row({"  " + std::to_string(p.row.loc.line), std::to_string(p.row.ranks),
               p.row.kind != "collective"
                   ? p.row.op + " " + p.row.shape
                   : devices::format_quantity(p.row.bytes, devices::Dim::kBytes),
               devices::format(devices::Seconds{p.row.time_s}),
               devices::format(devices::Seconds{p.estimate_s}), pct(100 * p.error), p.choice});
  }
  t.print(out);
}

// "all_gather x4 eager": the group of a collective row for --per-kind.
std::string kind_group(const costmodel::MeasuredRow& r) {
  return r.op + " x" + std::to_string(r.ranks) + " " + r.launch;
}

// Per (collective, ranks, launch): the error of the rows of at least `min_bytes` and of those
// below, each against its bar (a negative bar: not gated). False when a bar is missed.
bool report_kinds(Context& cx,
                  const ValidateArgs& a,
                  double min_bytes,
                  const costmodel::Validation& v) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<costmodel::ValidationPoint>> by;
  for (const costmodel::ValidationPoint& p : v.points) {
    std::string g = kind_group(p.row);
    if (by.count(g) == 0)
      order.push_back(g);
    by[g].push_back(p);
  }
  Table t({"  collective, ranks, launch", ">rows", ">MAPE", ">bias", ">rows < " + a.min_size,
           ">MAPE", ">bias", "result"});
  bool ok = true;
  for (const std::string& g : order) {
    costmodel::BandStats big = costmodel::overall(by[g], min_bytes);
    costmodel::BandStats small = costmodel::overall_below(by[g], min_bytes);
    bool pass = (big.rows == 0 || big.mape <= a.max_mape) &&
                (small.rows == 0 || a.max_small_mape < 0 || small.mape <= a.max_small_mape);
    ok = ok && pass;
    auto cells = [](const costmodel::BandStats& b) {
      return b.rows == 0
                 ? std::vector<std::string>{"0", "-", "-"}
                 : std::vector<std::string>{std::to_string(b.rows), pct(b.mape), pct(b.bias)};
    };
    std::vector<std::string> row = {"  " + g};
    for (const auto& c : {cells(big), cells(small)})
      row.insert(row.end(), c.begin(), c.end());
    row.push_back(pass ? "pass" : "FAIL");
    t.add_row(row);
  }
  t.print(cx.out);
  cx.out << "  collectives, every collective, GPU count and launch style: MAPE at " << a.min_size
         << " and more at most " << pct(a.max_mape);
  if (a.max_small_mape >= 0)
    cx.out << ", below it at most " << pct(a.max_small_mape);
  cx.out << ": " << (ok ? "pass" : "FAIL") << "\n";
  return ok;
}

bool report_collectives(Context& cx,
                        const ValidateArgs& a,
                        double min_bytes,
                        const costmodel::Validation& v) {
  costmodel::BandStats all = costmodel::overall(v.points, min_bytes);
  costmodel::BandStats small = costmodel::overall_below(v.points, min_bytes);
  bool ok = all.rows > 0 && all.mape <= a.max_mape;
  print_bands(cx.out, v.points);
  if (a.verbose) {
    print_points(cx.out, v.points);
  }
  cx.out << "  collectives, MAPE at " << a.min_size << " and more: " << pct(all.mape) << " over "
         << all.rows << " rows (threshold " << pct(a.max_mape) << "): " << (ok ? "pass" : "FAIL")
         << "\n";
  if (a.max_small_mape >= 0 && small.rows > 0) {
    bool small_ok = small.mape <= a.max_small_mape;
    cx.out << "  collectives, MAPE below " << a.min_size << ": " << pct(small.mape) << " over "
           << small.rows << " rows (threshold " << pct(a.max_small_mape)
           << "): " << (small_ok ? "pass" : "FAIL") << "\n";
    ok = ok && small_ok;
  }
  if (a.per_kind)
    ok = report_kinds(cx, a, min_bytes, v) && ok;
  for (std::size_t i = 0; i < v.skipped.size() && i < 3; ++i) {
    cx.out << "  skipped " << v.skipped[i] << "\n";
  }
  return ok;
}

// Ops and layers: statistics per category, then the overall figure against the threshold.
bool report_categories(Context& cx,
                       const ValidateArgs& a,
                       const costmodel::Validation& v,
                       const std::string& what) {
  Table t({"  " + what.substr(0, what.size() - 1), ">rows", ">MAPE", ">bias", ">max |error|"});
  for (const costmodel::BandStats& b : costmodel::op_stats(v.points)) {
    t.add_row({"  " + b.band, std::to_string(b.rows), pct(b.mape), pct(b.bias), pct(b.max_abs)});
  }
  t.print(cx.out);
  if (a.verbose) {
    print_points(cx.out, v.points);
  }
  costmodel::BandStats all = costmodel::overall(v.points, 0);
  bool ok = all.mape <= a.max_mape;
  cx.out << "  " << what << ", MAPE: " << pct(all.mape) << " over " << all.rows
         << " rows (threshold " << pct(a.max_mape) << "): " << (ok ? "pass" : "FAIL") << "\n";
  for (std::size_t i = 0; i < v.skipped.size() && i < 3; ++i) {
    cx.out << "  skipped " << v.skipped[i] << "\n";
  }
  return ok;
}

// Prefill and decode steps measured on GPUs (bench/run_infer.py): TTFT and time per output
// token against the inference model, by GPU count and model width; the threshold applies to
// each of the two over all rows and over each GPU count's.
bool report_infer_steps(Context& cx,
                        const ValidateArgs& a,
                        const std::string& path,
                        const devices::DeviceRegistry& registry,
                        const devices::ModelRegistry& models,
                        const costmodel::CalibrationSet& calibrations) {
  std::vector<planner::MeasuredInferStep> rows = planner::load_measured_infer_steps(path);
  std::vector<planner::InferStepPoint> points =
      planner::price_measured_infer_steps(path, rows, registry, models, calibrations);
  cx.out << path << ": priced " << points.size() << " inference steps of " << rows.size()
         << " rows\n";
  Table t({"  group", ">TTFT rows", ">TTFT MAPE", ">TTFT bias", ">TPOT rows", ">TPOT MAPE",
           ">TPOT bias"});
  bool ok = !points.empty();
  for (const planner::InferStepStats& s : planner::infer_step_stats(points)) {
    auto cell = [](std::size_t n, double v) {
      return n ? pct(v) : std::string("-");
    };
    t.add_row({"  " + s.group, std::to_string(s.ttft_rows), cell(s.ttft_rows, s.ttft_mape),
               cell(s.ttft_rows, s.ttft_bias), std::to_string(s.tpot_rows),
               cell(s.tpot_rows, s.tpot_mape), cell(s.tpot_rows, s.tpot_bias)});
    if (s.group == "all" || s.group.find("GPU") != std::string::npos)
      ok = ok && s.ttft_mape <= a.max_mape && s.tpot_mape <= a.max_mape;
  }
  t.print(cx.out);
  if (a.verbose) {
    Table v({"  line", "task", ">tp", ">batch", ">context", ">TTFT", ">estimate", ">TPOT",
             ">estimate"});
    auto secs = [](std::optional<double> s) {
      return s ? devices::format(devices::Seconds{*s}) : std::string("-");
    };
    for (const planner::InferStepPoint& p : points) {
      v.add_row({"  " + std::to_string(p.row.line), p.row.task, std::to_string(p.row.tp),
                 std::to_string(p.row.batch), std::to_string(p.row.context), secs(p.row.ttft_s),
                 secs(p.ttft_s), secs(p.row.tpot_s), secs(p.tpot_s)});
    }
    v.print(cx.out);
  }
  cx.out << "  inference steps, TTFT and TPOT MAPE over all rows and per GPU count (threshold "
         << pct(a.max_mape) << "): " << (ok ? "pass" : "FAIL") << "\n";
  return ok;
}

int validate(Context& cx, const ValidateArgs& a) {
  devices::ParsedQuantity min = devices::parse_quantity(a.min_size, devices::Dim::kBytes);
  if (!min.error.empty()) {
    cx.err << "error: --min-size: " << min.error << "\n";
    return kExitBadInput;
  }
  devices::DeviceRegistry registry = cx.load_registry();
  devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  costmodel::CalibrationSet calibrations =
      a.uncalibrated ? costmodel::CalibrationSet()
                     : costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  // Every file is read and checked before anything is printed.
  std::vector<costmodel::MeasuredFile> files;
  std::vector<std::string> infer_files;
  for (const std::string& path : a.files) {
    if (planner::is_measured_infer_steps_file(path)) {
      (void)planner::load_measured_infer_steps(path);
      infer_files.push_back(path);
      continue;
    }
    files.push_back(costmodel::load_measured(path));
    check_devices(files.back(), registry);
  }
  cx.out << (calibrations.empty() ? "model: uncalibrated (NCCL's constants)\n"
                                  : "model: calibrated by data/calibration/\n");
  bool failed = false;
  for (costmodel::MeasuredFile& file : files) {
    const std::string& path = file.path;
    if (a.held_out)
      file = held_out_rows(file);
    costmodel::Validation c = costmodel::validate_collectives(file, registry, &calibrations);
    costmodel::Validation o = costmodel::validate_ops(file, registry, &calibrations);
    costmodel::Validation l = planner::validate_layers(file, registry, models, &calibrations);
    costmodel::Validation g = codegen::validate_programs(file, registry, &calibrations);
    cx.out << path << ": priced " << c.points.size() << " collective, " << o.points.size()
           << " op, " << l.points.size() << " layer and " << g.points.size() << " program rows\n";
    if (!c.points.empty())
      failed = !report_collectives(cx, a, min.value, c) || failed;
    if (!o.points.empty())
      failed = !report_categories(cx, a, o, "ops") || failed;
    if (!l.points.empty())
      failed = !report_categories(cx, a, l, "layers") || failed;
    if (!g.points.empty())
      failed = !report_categories(cx, a, g, "programs") || failed;
    if (c.points.empty() && o.points.empty() && l.points.empty() && g.points.empty()) {
      cx.out << "  nothing priced\n";
      failed = true;
    }
  }
  for (const std::string& path : infer_files)
    failed = !report_infer_steps(cx, a, path, registry, models, calibrations) || failed;
  return failed ? kExitCheckFailed : kExitOk;
}

}  // namespace

void add_validate_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "validate", "Compare the model with measured timings (data/benchmarks/README.md format)");
  auto a = std::make_shared<ValidateArgs>();
  cmd->add_option("MEASURED", a->files, "Measured CSV files")->required();
  cmd->add_option("--max-mape", a->max_mape,
                  "Fail (exit 1) when the mean absolute percentage error exceeds this, in %")
      ->capture_default_str();
  cmd->add_option("--min-size", a->min_size, "Only rows of at least this size count to the MAPE")
      ->capture_default_str();
  cmd->add_option("--max-small-mape", a->max_small_mape,
                  "Collectives: fail (exit 1) when the rows below --min-size miss this MAPE, in %");
  cmd->add_flag("--per-kind", a->per_kind,
                "Collectives: hold the bars on every collective, GPU count and launch style, "
                "each in a table row");
  cmd->add_flag("--verbose", a->verbose, "Print every row: measured, estimate, error, model");
  cmd->add_flag("--held-out", a->held_out,
                "Only the rows that `calibrate` holds out (every other row of each op, by "
                "size)");
  cmd->add_flag("--uncalibrated", a->uncalibrated,
                "Ignore data/calibration/ and use NCCL's constants alone");
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return validate(cx, *a);
    };
  });
}

}  // namespace yirage::cli
