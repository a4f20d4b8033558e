// `yirage-plan validate-training RUNS.csv [--device NAME] [--fit]`: the training-step model
// against measured iterations: MAPE and Spearman rank correlation within each model.
#include "report/layout_json.h"
#include "report/table.h"

#include "cli/context.h"
#include "cli/run.h"
#include "planner/fidelity.h"
#include "planner/step_validation.h"

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

namespace yirage::cli {

using planner::KernelTime;

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

// The row's layout as priced: `mb=best` shows the micro-batch the model chose.
std::string priced_layout(const planner::StepPoint& p) {
  std::string text = p.row.layout;
  if (auto at = text.find("mb=best"); at != std::string::npos && p.micro_batch > 0)
    text.replace(at, 7, "mb=best:" + std::to_string(p.micro_batch));
  return text;
}

struct FidelityArgs {
  std::vector<std::string> files;
  std::string device = "A100-80GB";
  bool fit = false;
  bool verbose = false;
  double max_mape = 0;          // 0: no gate
  double min_spearman = 0;      // 0: no gate
  double max_memory_mape = 0;   // 0: no gate (measured steps)
  double max_regret = 0;        // 0: no gate (measured steps)
  bool each_gpu_count = false;  // measured steps: the bars hold on every GPU count too
  bool kernels = false;         // measured steps: the model's kernels by kind beside the profile
};

std::string pct(double v) {
  return devices::format_number(v, 3) + "%";
}

// The gate's line and exit code: MAPE over every row, Spearman within every group named by
// `within` (vTrain: each model; measured steps: each model width on each GPU count).
int gate(Context& cx, const FidelityArgs& a, double mape, bool spearman_ok, const char* within) {
  bool ok = (a.max_mape <= 0 || mape <= a.max_mape) && spearman_ok;
  if (a.max_mape > 0 || a.min_spearman > 0) {
    cx.out << "  gate (MAPE at most " << pct(a.max_mape) << ", Spearman at least "
           << devices::format_number(a.min_spearman, 3) << " within every " << within
           << "): " << (ok ? "pass" : "FAIL") << "\n";
  }
  return ok ? kExitOk : kExitCheckFailed;
}

// The bars given, for a document: null where no bar is set.
nlohmann::ordered_json bars_json(const FidelityArgs& a) {
  auto bar = [](double v) {
    return v > 0 ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
  };
  return {{"max_mape_percent", bar(a.max_mape)},
          {"min_spearman", bar(a.min_spearman)},
          {"max_memory_mape_percent", bar(a.max_memory_mape)},
          {"max_worst_pick_percent", bar(a.max_regret)},
          {"each_gpu_count", a.each_gpu_count}};
}

// Whether `p` ran, was priced and measured the host's time in its forward passes.
bool has_host(const planner::StepPoint& p) {
  return p.row.status == "ok" && p.row.host_forward_s > 0 && p.estimate_s.has_value();
}

// The host's time in the forward passes where rows measured it (bench/run_megatron.py's
// host_forward_s) against the model's issue time: rows priced, their MAPE and bias, and the
// rows where the model prices no host time.
struct HostStats {
  std::size_t rows = 0;
  double mape = 0;
  double bias = 0;
  std::size_t unpriced = 0;

  bool any() const { return rows + unpriced > 0; }
};

HostStats host_stats(const std::vector<planner::StepPoint>& points) {
  HostStats h;
  for (const planner::StepPoint& p : points) {
    if (!has_host(p))
      continue;
    if (p.estimate_host_forward_s <= 0) {
      ++h.unpriced;
      continue;
    }
    double e = 100 * (p.estimate_host_forward_s - p.row.host_forward_s) / p.row.host_forward_s;
    h.mape += std::fabs(e);
    h.bias += e;
    ++h.rows;
  }
  if (h.rows > 0) {
    h.mape /= static_cast<double>(h.rows);
    h.bias /= static_cast<double>(h.rows);
  }
  return h;
}

// The same as a line; whether any row measured it.
bool print_host_stats(Context& cx, const std::vector<planner::StepPoint>& points) {
  HostStats h = host_stats(points);
  if (!h.any())
    return false;
  cx.out << "  host: the forward passes' host time measured without a profiler (host_forward_s) "
            "against the model's time to issue them, "
         << h.rows << (h.rows == 1 ? " row" : " rows");
  if (h.rows > 0)
    cx.out << ": MAPE " << pct(h.mape) << ", bias " << pct(h.bias);
  if (h.unpriced > 0)
    cx.out << "; " << h.unpriced << " where the model prices no host time";
  cx.out << "\n";
  return true;
}

// One priced row, for --json: as measured and as priced, the host's forward time where the
// row measured it, and with `kernels` the kernels' seconds by kind on both sides.
nlohmann::ordered_json point_json(const planner::StepPoint& p, bool kernels) {
  auto or_null = [](bool has, double v) {
    return has ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
  };
  bool ran = p.row.status == "ok";
  // The layout as priced: a micro-batch the source did not publish, as the one chosen.
  std::string layout = p.row.layout;
  auto best = layout.find("mb=best");
  if (best != std::string::npos && p.micro_batch > 0)
    layout.replace(best, 7, "mb=" + std::to_string(p.micro_batch));
  nlohmann::ordered_json j = {
      {"line", p.row.line},
      {"task", p.row.task},
      {"layout", layout_json(layout)},
      {"micro_batch_chosen", best != std::string::npos},
      {"status", p.row.status},
      {"measured_s", or_null(ran, p.row.step_s)},
      {"estimate_s", p.estimate_s ? nlohmann::ordered_json(*p.estimate_s) : nullptr},
      {"error_percent",
       or_null(ran && p.estimate_s.has_value(),
               p.estimate_s ? 100 * (*p.estimate_s - p.row.step_s) / p.row.step_s : 0)},
      {"reserved_bytes", or_null(ran && p.row.peak_reserved > 0, p.row.peak_reserved)},
      {"predicted_bytes", or_null(p.estimate_s.has_value(), p.estimate_memory)},
      {"cannot_run",
       p.estimate_s ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.rejected)}};
  if (has_host(p)) {
    j["host_forward_s"] = p.row.host_forward_s;
    j["host_forward_estimate_s"] = p.estimate_host_forward_s;
  }
  if (kernels) {
    auto kinds = [](const KernelTime& k) {
      return nlohmann::ordered_json{{"gemm_s", k.gemm},
                                    {"attention_s", k.attention},
                                    {"memory_s", k.memory},
                                    {"loss_s", k.loss},
                                    {"optimizer_s", k.optimizer}};
    };
    j["kernels"] = {
        {"profiled", p.row.kernels ? kinds(*p.row.kernels) : nlohmann::ordered_json(nullptr)},
        {"model", p.estimate_s ? kinds(p.estimate_kernels) : nlohmann::ordered_json(nullptr)}};
  }
  return j;
}

// validate-training on measured steps, for --json: the statistics of every group (`rows`),
// every row priced (`points`) and the gate.
nlohmann::ordered_json steps_json(const FidelityArgs& a,
                                  const std::vector<planner::StepPoint>& points,
                                  std::size_t oom,
                                  std::size_t failed,
                                  const std::vector<std::string>& missed) {
  auto or_null = [](bool has, double v) {
    return has ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json j;
  j["files"] = a.files;
  j["ran"] = points.size() - oom;
  j["out_of_memory"] = oom;
  j["failed"] = failed;
  j["rows"] = nlohmann::ordered_json::array();
  for (const planner::StepStats& s : planner::step_stats(points)) {
    j["rows"].push_back({{"group", s.group},
                         {"rows", s.rows},
                         {"mape_percent", or_null(s.rows > 0, s.mape)},
                         {"bias_percent", or_null(s.rows > 0, s.bias)},
                         {"spearman", or_null(s.rows > 1, s.spearman)},
                         {"memory_mape_percent", or_null(s.memory_rows > 0, s.memory_mape)},
                         {"fits_as_measured", s.fit_agree},
                         {"fit_rows", s.fit_rows},
                         {"choices", s.choices},
                         {"worst_pick_percent", or_null(s.choices > 0, s.regret)},
                         {"repeat_rows", s.repeat_rows},
                         {"repeat_spread_percent", or_null(s.repeat_rows > 0, s.repeat_spread)},
                         {"layouts", s.layouts},
                         {"layout_mape_percent", or_null(s.layouts > 0, s.layout_mape)}});
  }
  j["points"] = nlohmann::ordered_json::array();
  for (const planner::StepPoint& p : points)
    j["points"].push_back(point_json(p, a.kernels));
  if (a.kernels) {
    j["kernels"] = nlohmann::ordered_json::array();
    for (const planner::KernelStats& k : planner::kernel_stats(points)) {
      j["kernels"].push_back({{"group", k.group},
                              {"kind", k.kind},
                              {"rows", k.rows},
                              {"measured_share_percent", k.measured_share},
                              {"model_share_percent", k.model_share},
                              {"mape_percent", or_null(k.rows > 0, k.mape)},
                              {"bias_percent", or_null(k.rows > 0, k.bias)}});
    }
  }
  if (HostStats h = host_stats(points); h.any()) {
    j["host_forward"] = {{"rows", h.rows},
                         {"mape_percent", or_null(h.rows > 0, h.mape)},
                         {"bias_percent", or_null(h.rows > 0, h.bias)},
                         {"unpriced_rows", h.unpriced}};
  }
  j["gate"] = {{"bars", bars_json(a)}, {"missed", missed}, {"pass", missed.empty()}};
  return j;
}

// Every row priced: measured, estimated, the error, memory; and the host's forward time where
// rows measured it (`host`).
void print_rows(Context& cx, const std::vector<planner::StepPoint>& points, bool host) {
  std::vector<std::string> head = {"  row",     "task",   "layout",    ">measured",
                                   ">estimate", ">error", ">reserved", ">predicted"};
  if (host)
    head.emplace_back(">host forward");
  Table rows(head);
  for (const planner::StepPoint& p : points) {
    std::vector<std::string> row = {
        "  " + std::to_string(p.row.line),
        p.row.task,
        priced_layout(p),
        p.row.status == "ok" ? devices::format(devices::Seconds{p.row.step_s}) : p.row.status,
        p.estimate_s ? devices::format(devices::Seconds{*p.estimate_s}) : "cannot run",
        p.estimate_s && p.row.status == "ok"
            ? pct(100 * (*p.estimate_s - p.row.step_s) / p.row.step_s)
            : "-",
        p.row.status == "ok" && p.row.peak_reserved > 0
            ? devices::format_quantity(p.row.peak_reserved, devices::Dim::kBytes)
            : "-",
        p.estimate_s ? devices::format_quantity(p.estimate_memory, devices::Dim::kBytes) : "-"};
    if (host) {
      row.emplace_back(has_host(p)
                           ? devices::format(devices::Seconds{p.row.host_forward_s}) + " / " +
                                 devices::format(devices::Seconds{p.estimate_host_forward_s})
                           : "-");
    }
    rows.add_row(row);
  }
  rows.print(cx.out);
}

// The model's kernels of each kind beside what the profiler counted in the same steps.
void print_kernel_stats(Context& cx, const std::vector<planner::StepPoint>& points) {
  Table t({"  group", "kind", ">rows", ">measured share", ">model share", ">MAPE", ">bias"});
  for (const planner::KernelStats& k : planner::kernel_stats(points)) {
    bool any = k.rows > 0;
    t.add_row({"  " + k.group, k.kind, std::to_string(k.rows), pct(k.measured_share),
               pct(k.model_share), any ? pct(k.mape) : "-", any ? pct(k.bias) : "-"});
  }
  t.print(cx.out);
  cx.out << "  (profiled rows: GPU time of each kind of kernel in one step, as a share of the "
            "measured step (mean over the rows), and the model's seconds of that kind against "
            "the profiled, on the pipeline stage profiled; memory: norms, elementwise, casts, "
            "copies, reductions, embedding, and the loss where no kernel is named for it)\n";
}

// Whole steps measured on GPUs (bench/run_plan.py's train_steps CSV files).
int measured_steps(Context& cx, const FidelityArgs& a, const devices::DeviceRegistry& registry) {
  devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  costmodel::CalibrationSet calibrations =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  std::vector<std::pair<std::string, std::vector<planner::MeasuredStep>>> files;
  std::vector<std::string> held_out;
  for (const std::string& f : a.files) {
    files.emplace_back(f, planner::load_measured_steps(f));
    if (std::string device = planner::keep_held_out(f, calibrations, files.back().second);
        !device.empty())
      held_out.push_back(costmodel::display_path(f) + " (" + device + ")");
  }
  std::vector<planner::StepPoint> points;
  std::size_t oom = 0;
  std::size_t failed = 0;
  std::size_t leftover = 0;
  double leftover_bytes = 0;
  planner::ProbePeaks probe;
  for (const auto& [file, rows] : files) {
    if (std::filesystem::path p = planner::probe_beside(file); std::filesystem::exists(p))
      probe.merge(planner::load_probe_peaks(p));
    for (const planner::MeasuredStep& r : rows) {
      oom += r.status == "oom" ? 1 : 0;
      failed += r.status == "error" ? 1 : 0;
      leftover += r.leftover > 0 ? 1 : 0;
      leftover_bytes = std::max(leftover_bytes, r.leftover);
    }
    std::vector<planner::StepPoint> p =
        planner::price_measured_steps(file, rows, registry, models, calibrations);
    points.insert(points.end(), p.begin(), p.end());
  }
  if (!cx.structured()) {
    cx.out << "measured steps: " << points.size() + failed << " rows in " << files.size()
           << (files.size() == 1 ? " file" : " files") << " (" << points.size() - oom << " ran, "
           << oom << " out of memory, " << failed
           << " failed and left out); the model calibrated by data/calibration/\n";
    if (leftover > 0) {
      cx.out << "  memory of " << leftover << (leftover == 1 ? " row" : " rows")
             << " less what earlier jobs of its process left allocated (up to "
             << devices::format_quantity(leftover_bytes, devices::Dim::kBytes)
             << "; leftover_bytes, or the memory probe beside the file)\n";
    }
    for (const std::string& h : held_out) {
      cx.out << "  statistics on the odd rows of " << h
             << ": its matrix efficiency was fitted on the even ones\n";
    }
  }
  Table t({"  group", ">rows", ">MAPE", ">bias", ">Spearman", ">memory MAPE", ">fits as measured",
           ">choices", ">worst pick", ">repeat spread", ">layout MAPE"});
  std::vector<std::string> missed;
  auto bar = [&](bool ok, const std::string& what) {
    if (!ok)
      missed.push_back(what);
  };
  for (const planner::StepStats& s : planner::step_stats(points)) {
    bool any = s.rows > 0;
    t.add_row({"  " + s.group, std::to_string(s.rows), any ? pct(s.mape) : "-",
               any ? pct(s.bias) : "-", s.rows > 1 ? devices::format_number(s.spearman, 3) : "-",
               s.memory_rows > 0 ? pct(s.memory_mape) : "-",
               std::to_string(s.fit_agree) + " of " + std::to_string(s.fit_rows),
               std::to_string(s.choices), s.choices > 0 ? "+" + pct(s.regret) : "-",
               s.repeat_rows > 0 ? pct(s.repeat_spread) + " (" + std::to_string(s.repeat_rows) + ")"
                                 : "-",
               s.layouts > 0 ? pct(s.layout_mape) + " (" + std::to_string(s.layouts) + ")" : "-"});
    bool per_width_and_count = s.group.find(", ") != std::string::npos;
    bool per_count = s.group.find("GPU") != std::string::npos && !per_width_and_count;
    if (per_width_and_count && s.rows > 2 && a.min_spearman > 0)
      bar(s.spearman >= a.min_spearman,
          s.group + ": Spearman " + devices::format_number(s.spearman, 3));
    if (((per_count && a.each_gpu_count) || s.group == "all") && any) {
      if (a.max_mape > 0)
        bar(s.mape <= a.max_mape, s.group + ": MAPE " + pct(s.mape));
      if (a.max_memory_mape > 0 && s.memory_rows > 0)
        bar(s.memory_mape <= a.max_memory_mape, s.group + ": memory MAPE " + pct(s.memory_mape));
      if (a.max_regret > 0)
        bar(s.regret <= a.max_regret, s.group + ": worst pick +" + pct(s.regret));
    }
  }
  int code = missed.empty() ? kExitOk : kExitCheckFailed;
  if (cx.structured()) {
    int rc = write_document(cx, "step_validation", steps_json(a, points, oom, failed, missed));
    return rc != kExitOk ? rc : code;
  }
  t.print(cx.out);
  cx.out << "  (MAPE and bias of the step time, memory MAPE of the predicted peak against the "
            "allocator's measured reserve, over rows that ran and the model priced; fits as "
            "measured: rows where running or running out of memory matches the model's fit; "
            "choices: tasks measured under two or more layouts on one cluster, worst pick: "
            "the largest shortfall of the layout the model prices fastest against the fastest "
            "measured; repeat spread: how far the rows of layouts measured more than once lie "
            "from their layout's median (rows), what no per-row error can beat; layout MAPE: "
            "the model against each distinct layout's median (layouts))\n";
  if (planner::ProbeStats ps = planner::live_against_probe(probe, points); ps.layouts > 0) {
    cx.out << "  live peak against each layout's allocated peak measured alone (the memory probe "
              "beside the file), "
           << ps.layouts << " layouts: MAPE " << pct(ps.mape) << ", bias " << pct(ps.bias)
           << ", worst " << pct(ps.worst) << "\n";
  }
  if (a.kernels)
    print_kernel_stats(cx, points);
  bool host = print_host_stats(cx, points);
  if (a.verbose)
    print_rows(cx, points, host);
  if (a.max_mape > 0 || a.min_spearman > 0 || a.max_memory_mape > 0 || a.max_regret > 0) {
    cx.out << "  gate (overall" << (a.each_gpu_count ? " and on each GPU count" : "")
           << ": MAPE at most " << pct(a.max_mape) << ", memory MAPE at most "
           << pct(a.max_memory_mape) << ", worst pick at most +" << pct(a.max_regret)
           << "; Spearman at least " << devices::format_number(a.min_spearman, 3)
           << " within each model width on each GPU count; 0: no bar): "
           << (missed.empty() ? "pass" : "FAIL") << "\n";
    for (const std::string& m : missed)
      cx.out << "    missed: " << m << "\n";
  }
  return missed.empty() ? kExitOk : kExitCheckFailed;
}

int fidelity(Context& cx, const FidelityArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  bool steps = planner::is_measured_steps_file(a.files.front());
  for (const std::string& f : a.files) {
    if (planner::is_measured_steps_file(f) != steps) {
      cx.err << "error: " << f << ": give measured-step files (bench/run_plan.py) or one "
             << "vTrain-format file, not both\n";
      return kExitBadInput;
    }
  }
  if (steps)
    return measured_steps(cx, a, registry);
  if (a.files.size() != 1) {
    cx.err << "error: the vTrain format is read one file at a time\n";
    return kExitBadInput;
  }
  if (registry.find(a.device) == nullptr) {
    cx.err << "error: unknown device '" << a.device << "'\n";
    return kExitBadInput;
  }
  const std::string& file = a.files.front();
  std::vector<planner::TrainingRun> runs = planner::load_training_runs(file);
  costmodel::CalibrationSet calibrations =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  // A calibration fitted on this file's even rows is checked on its odd rows only.
  const costmodel::GpuEfficiency* shipped = calibrations.find_gpu(registry.find(a.device)->name);
  bool fitted_here = shipped != nullptr && !shipped->steps_fitted_on.empty() &&
                     shipped->steps_fitted_on.rfind(costmodel::display_path(file), 0) == 0;
  planner::FidelityRows rows = a.fit         ? planner::FidelityRows::kFit
                               : fitted_here ? planner::FidelityRows::kHeldOut
                                             : planner::FidelityRows::kAll;
  planner::FidelityResult r =
      planner::training_fidelity(runs, a.device, registry, calibrations, rows);
  const costmodel::GpuEfficiency& e = r.efficiency;
  bool spearman_ok = true;
  for (const planner::FidelityStats& s : r.by_model)
    spearman_ok = spearman_ok && (a.min_spearman <= 0 || s.spearman >= a.min_spearman);
  if (cx.structured()) {
    bool pass = (a.max_mape <= 0 || r.overall.mape <= a.max_mape) && spearman_ok;
    nlohmann::ordered_json j;
    j["files"] = a.files;
    j["device"] = a.device;
    j["statistics_on"] = rows == planner::FidelityRows::kAll ? "all rows" : "odd rows";
    j["fitted_here"] = rows == planner::FidelityRows::kFit;
    j["efficiency"] = {{"matrix", e.matrix},         {"attention", e.attention},
                       {"memory", e.memory},         {"vector", e.vector},
                       {"launch_s", e.launch.value}, {"host_issue_per_kernel_s", e.host.value}};
    j["rows"] = nlohmann::ordered_json::array();
    for (const planner::FidelityStats& s : r.by_model) {
      j["rows"].push_back({{"group", s.model},
                           {"rows", s.rows},
                           {"mape_percent", s.mape},
                           {"spearman", s.spearman}});
    }
    j["rows"].push_back({{"group", "all"},
                         {"rows", r.overall.rows},
                         {"mape_percent", r.overall.mape},
                         {"spearman", nullptr}});
    j["refused"] = r.rejected;
    j["gate"] = {{"bars", bars_json(a)}, {"pass", pass}};
    int rc = write_document(cx, "iteration_validation", j);
    return rc != kExitOk ? rc : pass ? kExitOk : kExitCheckFailed;
  }
  cx.out << file << ": " << runs.size() << " measured runs on " << a.device << "; "
         << (rows == planner::FidelityRows::kFit
                 ? "GPU efficiencies fitted on the even rows, statistics on the odd rows"
             : rows == planner::FidelityRows::kHeldOut
                 ? "the shipped calibration was fitted on the even rows, statistics on the odd "
                   "rows"
                 : "statistics on all rows")
         << "\n  efficiencies: matrix " << devices::format_number(e.matrix, 3) << ", attention "
         << devices::format_number(e.attention, 3) << ", memory "
         << devices::format_number(e.memory, 3) << ", vector "
         << devices::format_number(e.vector, 3) << ", launch " << devices::format(e.launch)
         << ", host issue per kernel " << devices::format(e.host) << "\n";
  Table t({"  model", ">rows", ">MAPE", ">Spearman"});
  for (const planner::FidelityStats& s : r.by_model) {
    t.add_row({"  " + s.model, std::to_string(s.rows), pct(s.mape),
               devices::format_number(s.spearman, 3)});
  }
  t.print(cx.out);
  if (a.verbose) {
    Table rows({"  line", "model", "layout", ">measured", ">estimate", ">error"});
    for (const auto& [run, est] : r.points) {
      rows.add_row({"  " + std::to_string(run.line), run.model(),
                    "tp=" + std::to_string(run.tp) + ",pp=" + std::to_string(run.pp) +
                        ",dp=" + std::to_string(run.dp) + ",mb=" + std::to_string(run.micro_batch) +
                        ",gbs=" + std::to_string(run.global_batch),
                    devices::format(devices::Seconds{run.time_s}),
                    devices::format(devices::Seconds{est}),
                    pct(100 * (est - run.time_s) / run.time_s)});
    }
    rows.print(cx.out);
  }
  cx.out << "  all: MAPE " << pct(r.overall.mape) << " over " << r.overall.rows << " rows; "
         << r.rejected << " layouts refused by the model\n";
  return gate(cx, a, r.overall.mape, spearman_ok, "model");
}

}  // namespace

void add_fidelity_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "validate-training",
      "The training-step model against measured steps (bench/run_plan.py) or iterations (vTrain)");
  auto a = std::make_shared<FidelityArgs>();
  cmd->add_option("RUNS", a->files,
                  "Measured runs: whole steps measured by bench/run_plan.py (train_steps*.csv, "
                  "any number), or one vTrain-format CSV")
      ->required();
  cmd->add_option("--device", a->device, "The device the runs used")->capture_default_str();
  cmd->add_flag("--fit", a->fit, "Fit the device's GPU efficiencies on the even rows first");
  cmd->add_flag("--verbose", a->verbose, "Print every evaluated run with its estimate");
  cmd->add_option("--max-mape", a->max_mape,
                  "Fail (exit 1) when the overall error exceeds this, in %");
  cmd->add_option("--min-spearman", a->min_spearman,
                  "Fail (exit 1) when a model's rank correlation is below this");
  cmd->add_option("--max-memory-mape", a->max_memory_mape,
                  "Measured steps: fail (exit 1) when the peak memory's error exceeds this, in %");
  cmd->add_option("--max-regret", a->max_regret,
                  "Measured steps: fail (exit 1) when the layout the model picks runs more than "
                  "this % slower than the fastest measured");
  cmd->add_flag("--each-gpu-count", a->each_gpu_count,
                "Measured steps: hold --max-mape, --max-memory-mape and --max-regret on every GPU "
                "count as well as overall");
  cmd->add_flag("--kernels", a->kernels,
                "Measured steps: the model's GPU time by kind of kernel (GEMM, attention, "
                "memory-bound, loss, optimizer) beside the profiled kernels of the same steps");
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return fidelity(cx, *a);
    };
  });
}

}  // namespace yirage::cli
