#include "cli/run.h"

#include "cli/context.h"
#include "cli/emit_kernels.h"
#include "devices/support/check.h"
#include "devices/support/diagnostics.h"
#include "devices/support/units.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <new>
#include <sstream>

#ifndef YIRAGE_VERSION
#error "YIRAGE_VERSION must be defined by the build"
#endif

namespace yirage::cli {
namespace {

constexpr const char* kDescription =
    "yirage-plan: cost modelling and capacity planning for large-model workloads.\n"
    "Finds the best ways to lay out a task (a model to train or serve) on a cluster.";

void configure(CLI::App& app, Context& cx) {
  app.set_version_flag("--version", std::string("yirage-plan ") + YIRAGE_VERSION);
  // One DIR an occurrence: `--devices DIR CLUSTER TASK` must leave the files positional.
  app.add_option("--devices", cx.device_dirs,
                 "Also load device files (*.yaml) from DIR; may be repeated")
      ->type_name("DIR")
      ->expected(1)
      ->allow_extra_args(false);
  app.add_flag("--json", cx.json, "Machine-readable JSON output where supported");
  app.add_flag("--yaml", cx.yaml, "The same as --json, as YAML (plans and estimates)");
  app.add_option("--csv", cx.csv,
                 "The answer's table (plans, rows or devices) as CSV to FILE ('-': standard "
                 "output)")
      ->type_name("FILE");
  app.require_subcommand(0, 1);
  // Global options (--json, --devices) may follow the subcommand: `devices --json`.
  app.fallthrough();
  add_devices_command(app, cx);
  add_check_command(app, cx);
  add_validate_command(app, cx);
  add_calibrate_command(app, cx);
  add_estimate_command(app, cx);
  add_fidelity_command(app, cx);
  add_bench_command(app, cx);
  add_bench_simulate_command(app, cx);
  add_capacity_command(app, cx);
  add_sweep_command(app, cx);
  add_comet_command(app, cx);
  add_simulate_command(app, cx);
  add_superoptimize_command(app, cx);
  add_codegen_command(app, cx);
  add_bench_superoptimize_command(app, cx);
  add_plan_form(app, cx);
}

int parse_error(CLI::App& app, const CLI::ParseError& e, std::ostream& out, std::ostream& err) {
  std::ostringstream o;
  std::ostringstream r;
  int code = app.exit(e, o, r);
  out << o.str();
  std::string message = r.str();
  if (!message.empty() && message.back() != '\n')
    message += '\n';
  if (code != 0)
    message = "error: " + message;
  err << message;
  return code == 0 ? kExitOk : kExitBadInput;
}

// --json, --yaml and --csv: every subcommand prints its answer as a document
// (docs/json.md; tests/json_schema_test.sh runs each), and never two forms at once.
std::string structured_output_error(const Context& cx) {
  if (int(cx.json) + int(cx.yaml) + int(!cx.csv.empty()) > 1)
    return "give one of --json, --yaml and --csv";
  return {};
}

// The chosen subcommand, its errors mapped to the exit-code table.
int act(Context& cx) {
  std::ostream& err = cx.err;
  try {
    return cx.action();
  } catch (const devices::NoAnswerError& e) {
    err << e.what();
    return kExitNoAnswer;
  } catch (const devices::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const devices::InternalError& e) {
    err << e.what() << "\nThis is a bug in yirage; please report it with the input files.\n";
    return kExitInternal;
  } catch (const std::bad_alloc&) {
    // Inputs beyond the limits the loaders and searches check: say so rather than abort.
    err << "error: out of memory: the inputs need more memory than this machine has\n";
    return kExitBadInput;
  }
}

}  // namespace

int run(const std::vector<std::string>& args,
        std::ostream& out,
        std::ostream& err,
        bool err_is_terminal) {
  // A command's standard output is held until it has finished: bad input and internal errors
  // print none of it, and neither does an answer with a number that is not finite.
  std::ostringstream held;
  Context cx{held, err, {}, false, false, err_is_terminal, {}, {}};
  CLI::App app(kDescription, "yirage-plan");
  configure(app, cx);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return parse_error(app, e, out, err);
  }
  if (!cx.action) {
    err << app.help();
    return kExitBadInput;
  }
  if (std::string why = structured_output_error(cx); !why.empty()) {
    err << "error: " << why << "\n";
    return kExitBadInput;
  }
  std::uint64_t non_finite = devices::non_finite_formatted();
  int code = act(cx);
  if (code != kExitInternal && devices::non_finite_formatted() > non_finite) {
    err << "internal error: a result is not a finite number, so none is printed\n"
           "This is a bug in yirage; please report it with the input files.\n";
    return kExitInternal;
  }
  if (code != kExitBadInput && code != kExitInternal)
    out << held.str();
  return code;
}

}  // namespace yirage::cli
