// `yirage-plan validate-training RUNS.csv [--device NAME] [--fit]`: the training-step model
// against measured iterations: MAPE and Spearman rank correlation within each model.
#include "report/table.h"

#include "cli/context.h"
#include "cli/run.h"
#include "planner/fidelity.h"

#include <CLI/CLI.hpp>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

struct FidelityArgs {
  std::string file;
  std::string device = "A100-80GB";
  bool fit = false;
  bool verbose = false;
  double max_mape = 0;      // 0: no gate
  double min_spearman = 0;  // 0: no gate
};

std::string pct(double v) {
  return devices::format_number(v, 3) + "%";
}

int fidelity(Context& cx, const FidelityArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  if (registry.find(a.device) == nullptr) {
    cx.err << "error: unknown device '" << a.device << "'\n";
    return kExitBadInput;
  }
  std::vector<planner::TrainingRun> runs = planner::load_training_runs(a.file);
  costmodel::CalibrationSet calibrations =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  planner::FidelityResult r =
      planner::training_fidelity(runs, a.device, registry, calibrations, a.fit);
  const costmodel::GpuEfficiency& e = r.efficiency;
  cx.out << a.file << ": " << runs.size() << " measured runs on " << a.device << "; "
         << (r.fitted ? "GPU efficiencies fitted on the even rows, statistics on the odd rows"
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
  bool ok = a.max_mape <= 0 || r.overall.mape <= a.max_mape;
  for (const planner::FidelityStats& s : r.by_model)
    ok = ok && (a.min_spearman <= 0 || s.spearman >= a.min_spearman);
  if (a.max_mape > 0 || a.min_spearman > 0) {
    cx.out << "  gate (MAPE at most " << pct(a.max_mape) << ", Spearman at least "
           << devices::format_number(a.min_spearman, 3)
           << " within every model): " << (ok ? "pass" : "FAIL") << "\n";
  }
  return ok ? kExitOk : kExitCheckFailed;
}

}  // namespace

void add_fidelity_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "validate-training", "The training-step model against measured iterations (vTrain format)");
  auto a = std::make_shared<FidelityArgs>();
  cmd->add_option("RUNS", a->file, "Measured runs CSV")->required();
  cmd->add_option("--device", a->device, "The device the runs used")->capture_default_str();
  cmd->add_flag("--fit", a->fit, "Fit the device's GPU efficiencies on the even rows first");
  cmd->add_flag("--verbose", a->verbose, "Print every evaluated run with its estimate");
  cmd->add_option("--max-mape", a->max_mape,
                  "Fail (exit 1) when the overall error exceeds this, in %");
  cmd->add_option("--min-spearman", a->min_spearman,
                  "Fail (exit 1) when a model's rank correlation is below this");
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return fidelity(cx, *a);
    };
  });
}

}  // namespace yirage::cli
