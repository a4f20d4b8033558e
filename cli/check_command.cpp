// `yirage-plan check CLUSTER TASK`: load, validate and summarise both files.
#include "report/summary.h"
#include "report/summary_json.h"

#include "cli/context.h"
#include "cli/prices.h"
#include "cli/run.h"

#include <CLI/CLI.hpp>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

struct CheckArgs {
  std::string cluster;
  std::string task;
  double price_per_hour = 0;  // --price-per-hour
};

int check(Context& cx, const CheckArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  // Both files are read before either is reported, so one run shows the problems of both.
  std::vector<devices::Diagnostic> problems;
  std::optional<devices::ClusterSpec> cluster;
  std::optional<devices::TaskSpec> task;
  try {
    cluster = cx.load_cluster(a.cluster, registry);
  } catch (const devices::InputError& e) {
    problems = e.items();
  }
  try {
    task = cx.load_task(a.task);
  } catch (const devices::InputError& e) {
    problems.insert(problems.end(), e.items().begin(), e.items().end());
  }
  if (!problems.empty())
    throw devices::InputError(problems);
  check_fit(*cluster, *task);
  if (std::string why = apply_prices(a.price_per_hour, *cluster, *task); !why.empty()) {
    cx.err << why << "\n";
    return kExitBadInput;
  }
  if (cx.structured()) {
    nlohmann::ordered_json j;
    j["cluster"] = cluster->name;
    j["task"] = task->name;
    j["valid"] = true;
    j["cluster_details"] = cluster_json(*cluster);
    j["task_details"] = task_json(*task, *cluster);
    return write_document(cx, "check", j);
  }
  print_cluster(cx.out, *cluster);
  print_task(cx.out, *task, *cluster);
  cx.out << "ok: both files are valid\n";
  return kExitOk;
}

}  // namespace

void add_check_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand("check", "Load, validate and summarise a cluster and a task");
  auto a = std::make_shared<CheckArgs>();
  cmd->add_option("CLUSTER", a->cluster, "Cluster file (YAML)")->required();
  cmd->add_option("TASK", a->task, "Task file (YAML)")->required();
  add_price_option(*cmd, &a->price_per_hour);
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return check(cx, *a);
    };
  });
}

}  // namespace yirage::cli
