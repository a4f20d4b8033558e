// The main form, `yirage-plan CLUSTER TASK`: validate both files and plan. The planner is
// not built yet, so after validation this form says so and exits with kExitUnavailable.
#include "cli/context.h"
#include "cli/run.h"
#include "cli/summary.h"

#include <CLI/CLI.hpp>

namespace yirage::cli {

void add_plan_form(CLI::App& app, Context& cx) {
  auto files = std::make_shared<std::vector<std::string>>();
  app.add_option("CLUSTER TASK", *files, "Cluster and task files: find the best plans")
      ->expected(2);
  app.callback([&cx, &app, files] {
    if (!app.get_subcommands().empty() || files->empty())
      return;
    cx.action = [&cx, files] {
      devices::DeviceRegistry registry = cx.load_registry();
      devices::ClusterSpec cluster = cx.load_cluster((*files)[0], registry);
      devices::TaskSpec task = cx.load_task((*files)[1]);
      check_fit(cluster, task);
      cx.err << "yirage-plan: both files are valid, but planning is not available yet in this "
                "version ("
                "yirage " YIRAGE_VERSION
                "). `yirage-plan check CLUSTER TASK` summarises the inputs.\n";
      return kExitUnavailable;
    };
  });
}

}  // namespace yirage::cli
