// `yirage-plan validate MEASURED.csv...`: the model's estimate next to every measured row,
// errors per size band, and a failing exit code when the error exceeds the threshold.
#include "report/csv.h"
#include "report/table.h"

#include "cli/context.h"
#include "cli/run.h"
#include "cli/validate_document.h"
#include "codegen/cost/program_validation.h"
#include "costmodel/validation.h"
#include "devices/support/diagnostics.h"
#include "devices/support/units.h"
#include "planner/infer_step_validation.h"
#include "planner/layer_validation.h"

#include <CLI/CLI.hpp>

#include <map>
#include <sstream>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

struct ValidateArgs {
  std::vector<std::string> files;
  double max_mape = 15;
  double max_small_mape = -1;  // collectives below --min-size; negative: not gated
  bool per_kind = false;       // the bars hold for every (collective, ranks, launch), every op kind
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

// The gated statistics of a file's collectives as the document computed them: one line
// each, then with --per-kind the table of every (collective, ranks, launch).
bool report_collectives(Context& cx,
                        const ValidateArgs& a,
                        const costmodel::Validation& v,
                        const std::vector<ValidationStat>& stats) {
  print_bands(cx.out, v.points);
  if (a.verbose)
    print_points(cx.out, v.points);
  bool ok = true;
  std::string big = a.min_size + " and more";
  std::string small = "below " + a.min_size;
  bool any_big = false;
  for (const ValidationStat& s : stats) {
    ok = ok && s.pass;
    if (s.group == big || (s.group == small && s.bar)) {
      any_big = any_big || s.group == big;
      cx.out << "  collectives, MAPE " << (s.group == big ? "at " + big : s.group) << ": "
             << pct(s.stats.mape) << " over " << s.stats.rows << " rows (threshold " << pct(*s.bar)
             << "): " << (s.pass ? "pass" : "FAIL") << "\n";
    }
  }
  if (!any_big) {
    ok = false;
    cx.out << "  collectives: no row of " << big << ": FAIL\n";
  }
  if (a.per_kind) {
    Table t({"  collective, ranks, launch", ">rows", ">MAPE", ">bias", ">rows < " + a.min_size,
             ">MAPE", ">bias", "result"});
    std::vector<std::string> order;
    std::map<std::string, std::vector<const ValidationStat*>> by;
    for (const ValidationStat& s : stats) {
      auto comma = s.group.rfind(", ");
      if (comma == std::string::npos)
        continue;
      std::string g = s.group.substr(0, comma);
      if (by.count(g) == 0)
        order.push_back(g);
      by[g].push_back(&s);
    }
    for (const std::string& g : order) {
      std::vector<std::string> row = {"  " + g, "0", "-", "-", "0", "-", "-"};
      bool pass = true;
      for (const ValidationStat* s : by[g]) {
        std::size_t at =
            s->group.size() >= small.size() &&
                    s->group.compare(s->group.size() - small.size(), small.size(), small) == 0
                ? 4
                : 1;
        row[at] = std::to_string(s->stats.rows);
        row[at + 1] = pct(s->stats.mape);
        row[at + 2] = pct(s->stats.bias);
        pass = pass && s->pass;
      }
      row.push_back(pass ? "pass" : "FAIL");
      t.add_row(row);
    }
    t.print(cx.out);
    cx.out << "  collectives, every collective, GPU count and launch style: MAPE at " << big
           << " at most " << pct(a.max_mape);
    if (a.max_small_mape >= 0)
      cx.out << ", below it at most " << pct(a.max_small_mape);
    cx.out << ": " << (ok ? "pass" : "FAIL") << "\n";
  }
  for (std::size_t i = 0; i < v.skipped.size() && i < 3; ++i) {
    cx.out << "  skipped " << v.skipped[i] << "\n";
  }
  return ok;
}

// Ops and layers: statistics per category (with --per-kind, each held to the threshold),
// then the overall figure against the threshold.
bool report_categories(Context& cx,
                       const ValidateArgs& a,
                       const costmodel::Validation& v,
                       const std::string& what,
                       const std::vector<ValidationStat>& stats) {
  std::vector<std::string> head = {"  " + what.substr(0, what.size() - 1), ">rows", ">MAPE",
                                   ">bias", ">max |error|"};
  if (a.per_kind)
    head.emplace_back("result");
  Table t(head);
  bool kinds_pass = true;
  for (std::size_t i = 0; i + 1 < stats.size(); ++i) {
    const ValidationStat& s = stats[i];
    std::vector<std::string> row = {"  " + s.group, std::to_string(s.stats.rows), pct(s.stats.mape),
                                    pct(s.stats.bias), pct(s.stats.max_abs)};
    if (a.per_kind)
      row.emplace_back(s.pass ? "pass" : "FAIL");
    kinds_pass = kinds_pass && s.pass;
    t.add_row(row);
  }
  t.print(cx.out);
  if (a.verbose) {
    print_points(cx.out, v.points);
  }
  const ValidationStat& all = stats.back();
  cx.out << "  " << what << ", MAPE: " << pct(all.stats.mape) << " over " << all.stats.rows
         << " rows (threshold " << pct(a.max_mape) << "): " << (all.pass ? "pass" : "FAIL") << "\n";
  if (a.per_kind) {
    cx.out << "  " << what << ", every kind: MAPE at most " << pct(a.max_mape) << ": "
           << (kinds_pass ? "pass" : "FAIL") << "\n";
  }
  for (std::size_t i = 0; i < v.skipped.size() && i < 3; ++i) {
    cx.out << "  skipped " << v.skipped[i] << "\n";
  }
  return all.pass && kinds_pass;
}

// Prefill and decode steps measured on GPUs (bench/run_infer.py): TTFT and time per output
// token against the inference model, by GPU count and model width; the threshold applies to
// each of the two over all rows and over each GPU count's.
bool report_infer_steps(Context& cx,
                        const ValidateArgs& a,
                        const std::string& path,
                        std::size_t rows,
                        const std::vector<planner::InferStepPoint>& points,
                        const std::vector<ValidationStat>& stats) {
  cx.out << path << ": priced " << points.size() << " inference steps of " << rows << " rows\n";
  Table t({"  group", ">TTFT rows", ">TTFT MAPE", ">TTFT bias", ">TPOT rows", ">TPOT MAPE",
           ">TPOT bias"});
  bool ok = !points.empty();
  auto cells = [](const ValidationStat& s) {
    bool any = s.stats.rows > 0;
    return std::vector<std::string>{std::to_string(s.stats.rows), any ? pct(s.stats.mape) : "-",
                                    any ? pct(s.stats.bias) : "-"};
  };
  for (std::size_t i = 0; i + 1 < stats.size(); i += 2) {  // TTFT, then TPOT, per group
    std::vector<std::string> row = {"  " + stats[i].group};
    for (const auto& c : {cells(stats[i]), cells(stats[i + 1])})
      row.insert(row.end(), c.begin(), c.end());
    t.add_row(row);
    ok = ok && stats[i].pass && stats[i + 1].pass;
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
  std::vector<std::pair<std::string, std::vector<planner::MeasuredInferStep>>> infer_files;
  for (const std::string& path : a.files) {
    if (planner::is_measured_infer_steps_file(path)) {
      infer_files.emplace_back(path, planner::load_measured_infer_steps(path));
      continue;
    }
    files.push_back(costmodel::load_measured(path));
    check_devices(files.back(), registry);
  }
  ValidationDocument doc({a.max_mape, a.max_small_mape, min.value, a.min_size, a.per_kind});
  bool text = !cx.structured();
  if (text) {
    cx.out << (calibrations.empty() ? "model: uncalibrated (NCCL's constants)\n"
                                    : "model: calibrated by data/calibration/\n");
  }
  for (costmodel::MeasuredFile& file : files) {
    const std::string path = file.path;
    if (a.held_out)
      file = held_out_rows(file);
    costmodel::Validation c = costmodel::validate_collectives(file, registry, &calibrations);
    costmodel::Validation o = costmodel::validate_ops(file, registry, &calibrations);
    costmodel::Validation l = planner::validate_layers(file, registry, models, &calibrations);
    costmodel::Validation g = codegen::validate_programs(file, registry, &calibrations);
    if (text) {
      cx.out << path << ": priced " << c.points.size() << " collective, " << o.points.size()
             << " op, " << l.points.size() << " layer and " << g.points.size() << " program rows\n";
    }
    if (!c.points.empty()) {
      auto stats = doc.add_collectives(path, c);
      if (text)
        report_collectives(cx, a, c, stats);
    }
    for (const auto& [part, v] : {std::pair<const char*, const costmodel::Validation*>{"ops", &o},
                                  {"layers", &l},
                                  {"programs", &g}}) {
      if (v->points.empty())
        continue;
      auto stats = doc.add_categories(path, part, *v);
      if (text)
        report_categories(cx, a, *v, part, stats);
    }
    if (c.points.empty() && o.points.empty() && l.points.empty() && g.points.empty()) {
      doc.add_nothing_priced(path);
      if (text)
        cx.out << "  nothing priced\n";
    }
  }
  for (const auto& [path, rows] : infer_files) {
    std::vector<planner::InferStepPoint> points =
        planner::price_measured_infer_steps(path, rows, registry, models, calibrations);
    auto stats = doc.add_infer_steps(path, points);
    if (text)
      report_infer_steps(cx, a, path, rows.size(), points, stats);
  }
  int code = doc.pass() ? kExitOk : kExitCheckFailed;
  if (text)
    return code;
  nlohmann::ordered_json j = doc.json(!calibrations.empty(), a.held_out);
  int rc = kExitOk;
  if (a.verbose && !cx.csv.empty()) {  // every priced row, not the statistics
    std::ostringstream csv;
    report::write_csv_table(csv, j.at("points"));
    rc = write_csv(cx, csv.str());
  } else {
    rc = write_document(cx, "validation", j);
  }
  return rc != kExitOk ? rc : code;
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
                "each in a table row; operations and layers: hold --max-mape on every kind");
  cmd->add_flag("--verbose", a->verbose,
                "Print every row: measured, estimate, error, model (with --csv: every row "
                "instead of the statistics)");
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
