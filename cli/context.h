// What every subcommand shares: the output streams, the global options, and loading of the
// registries and input files those options select.
#pragma once

#include "devices/cluster_spec.h"
#include "devices/model_loader.h"
#include "devices/registry.h"
#include "devices/task_spec.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace yirage::cli {

struct Context {
  std::ostream& out;
  std::ostream& err;
  std::vector<std::string> device_dirs;  // --devices DIR, in the order given
  bool json = false;                     // --json
  bool yaml = false;                     // --yaml
  bool err_is_terminal = false;          // progress lines go to `err` only then
  std::function<int()> action;           // set by the chosen subcommand
  std::string csv;                       // --csv FILE ("-": standard output)

  /// Whether the answer is for machines: --json, --yaml or --csv.
  bool structured() const { return json || yaml || !csv.empty(); }

  /// The bundled devices plus those of every --devices DIR.
  devices::DeviceRegistry load_registry() const;
  devices::ClusterSpec load_cluster(const std::string& path,
                                    const devices::DeviceRegistry& registry) const;
  devices::TaskSpec load_task(const std::string& path) const;
};

/// Prints a command's answer for machines: the document (schema, kind, then `j`) as JSON or
/// YAML, or with --csv its table (`plans`, else `rows`, else `devices`) as CSV to the file or
/// standard output. Returns the exit code (2 when the file cannot be written).
int write_document(Context& cx, std::string_view kind, const nlohmann::ordered_json& j);

/// Writes CSV `text` where --csv says (a file, or "-": standard output). Returns the exit code.
int write_csv(Context& cx, const std::string& text);

// Each subcommand registers itself on the app; its callback sets `Context::action`.
void add_devices_command(CLI::App& app, Context& cx);
void add_check_command(CLI::App& app, Context& cx);
void add_validate_command(CLI::App& app, Context& cx);
void add_calibrate_command(CLI::App& app, Context& cx);
void add_estimate_command(CLI::App& app, Context& cx);
void add_fidelity_command(CLI::App& app, Context& cx);
void add_bench_command(CLI::App& app, Context& cx);
void add_bench_simulate_command(CLI::App& app, Context& cx);
void add_capacity_command(CLI::App& app, Context& cx);
void add_sweep_command(CLI::App& app, Context& cx);
void add_comet_command(CLI::App& app, Context& cx);
void add_simulate_command(CLI::App& app, Context& cx);
void add_superoptimize_command(CLI::App& app, Context& cx);
void add_bench_superoptimize_command(CLI::App& app, Context& cx);
/// The main form, `yirage-plan CLUSTER TASK`, on the top-level app.
void add_plan_form(CLI::App& app, Context& cx);

}  // namespace yirage::cli
