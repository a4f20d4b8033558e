// `yirage-plan bench-plan CLUSTER TASK [--repeat N]`: how fast the planner searches and how
// much memory it takes, next to the targets (0.1 s and 200 MB for a 70B model on 1,024 GPUs
// on a 2-core machine).
#include "report/summary.h"
#include "report/table.h"

#include "cli/context.h"
#include "cli/run.h"
#include "planner/search.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <sys/resource.h>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

// The targets: a 70B search on 1,024 GPUs in 0.1 s and 200 MB on a 2-core machine.
constexpr double kTargetSeconds = 0.1;
constexpr double kTargetBytes = 200e6;

struct BenchArgs {
  std::vector<std::string> files;
  int repeat = 5;
};

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;  // Linux reports KiB
}

int bench(Context& cx, const BenchArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  devices::ClusterSpec cluster = cx.load_cluster(a.files[0], registry);
  devices::TaskSpec task = cx.load_task(a.files[1]);
  check_fit(cluster, task);
  std::string why = planner::unsupported_reason(cluster, task);
  if (why.empty() && task.mode != devices::Mode::kTrain)
    why = "bench-plan times training searches";
  if (!why.empty()) {
    cx.err << "yirage-plan: " << why << "\n";
    return kExitNoAnswer;
  }
  costmodel::CalibrationSet calibrations =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  planner::TrainContext tc{cluster, task, calibrations};
  std::vector<double> seconds;
  std::size_t candidates = 0;
  std::size_t feasible = 0;
  for (int i = 0; i < std::max(1, a.repeat); ++i) {
    auto start = std::chrono::steady_clock::now();
    planner::SearchResult r = planner::search_training(tc);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    candidates = r.candidates;
    feasible = r.plans.size();
  }
  std::sort(seconds.begin(), seconds.end());
  double median = seconds[seconds.size() / 2];
  double rss = peak_rss_bytes();
  double rate = static_cast<double>(candidates) / median;
  if (cx.structured()) {
    nlohmann::ordered_json j;
    j["cluster"] = cluster.name;
    j["task"] = task.name;
    j["devices"] = cluster.total_devices();
    j["layouts"] = candidates;
    j["feasible"] = feasible;
    j["searches"] = seconds.size();
    j["threads"] = 1;
    j["rows"] = {{{"measure", "search time (median)"},
                  {"value", median},
                  {"unit", "s"},
                  {"target", kTargetSeconds},
                  {"ratio", median / kTargetSeconds}},
                 {{"measure", "peak memory (whole process)"},
                  {"value", rss},
                  {"unit", "B"},
                  {"target", kTargetBytes},
                  {"ratio", rss / kTargetBytes}},
                 {{"measure", "layouts per second"},
                  {"value", rate},
                  {"unit", "1/s"},
                  {"target", nullptr},
                  {"ratio", nullptr}}};
    return write_document(cx, "bench_plan", j);
  }
  cx.out << task.name << " on " << cluster.name << " (" << cluster.total_devices()
         << " devices): " << candidates << " layouts, " << feasible << " feasible; "
         << seconds.size() << " searches, one thread\n";
  Table t({"measure", ">yirage", ">target", ">ratio"});
  t.add_row({"search time (median)", devices::format(devices::Seconds{median}),
             devices::format(devices::Seconds{kTargetSeconds}),
             devices::format_number(median / kTargetSeconds, 3)});
  t.add_row({"peak memory (whole process)", devices::format_quantity(rss, devices::Dim::kBytes),
             devices::format_quantity(kTargetBytes, devices::Dim::kBytes),
             devices::format_number(rss / kTargetBytes, 3)});
  t.add_row({"layouts per second", format_count(rate), "-", "-"});
  t.print(cx.out);
  return kExitOk;
}

}  // namespace

void add_bench_command(CLI::App& app, Context& cx) {
  CLI::App* cmd =
      app.add_subcommand("bench-plan", "Time the planner's search and measure its memory");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("CLUSTER TASK", a->files, "Cluster and task files")->expected(2)->required();
  cmd->add_option("--repeat", a->repeat, "Searches to time (the median is reported)")
      ->capture_default_str();
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return bench(cx, *a);
    };
  });
}

}  // namespace yirage::cli
