// `yirage-plan superoptimize PROGRAM --device NAME [--json] [--out DIR]`: searches µGraphs
// for a tensor program on a device (codegen/search/superoptimizer.h), prints the counts of
// candidates generated, pruned and verified and the best µGraph with its estimate next to
// the unfused program, and saves it as JSON and Graphviz DOT.
#include "report/structured_output.h"

#include "cli/context.h"
#include "cli/output_file.h"
#include "cli/progress.h"
#include "cli/run.h"
#include "cli/superoptimize_report.h"
#include "codegen/ir/ugraph_json.h"
#include "codegen/program/program_loader.h"

#include <CLI/CLI.hpp>

#include <mutex>

namespace yirage::cli {

namespace {

struct SuperoptimizeArgs {
  std::string program;
  std::string device;
  std::string out = ".";
  std::vector<std::string> shapes;
  int threads = 2;
  double time_limit_s = 60;
};

int superoptimize(Context& cx, const SuperoptimizeArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  std::optional<SearchSetup> setup = setup_search(registry, a.device, a.program, a.shapes, cx.err);
  if (!setup)
    return kExitBadInput;
  const SearchSetup& s = *setup;
  codegen::SuperoptimizeOptions o;
  o.threads = a.threads;
  o.time_limit_s = a.time_limit_s;
  std::mutex m;
  Progress progress(cx.err, "superoptimize " + s.program.graph.name, cx.err_is_terminal);
  o.progress = [&](std::size_t done, std::size_t total) {
    std::lock_guard<std::mutex> lock(m);
    progress.step(std::to_string(done) + " of " + std::to_string(total) + " branches");
  };
  codegen::SuperoptimizeResult r =
      codegen::superoptimize(s.program.graph, *s.device, s.efficiency, o);
  std::filesystem::path dir(a.out);
  std::string name = file_name_part(s.program.graph.name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string why =
      write_output(dir / (name + ".ugraph.json"), codegen::ugraph_to_json(r.best.graph));
  if (why.empty())
    why = write_output(dir / (name + ".dot"), codegen::ugraph_to_dot(r.best.graph));
  if (!why.empty()) {
    cx.err << "yirage-plan: " << why << "\n";
    return kExitBadInput;
  }
  if (cx.structured()) {
    return write_document(cx, "superoptimize", result_json(s, r));
  }
  print_result(cx.out, s, r);
  cx.out << "saved " << (dir / (name + ".ugraph.json")).string() << " and "
         << (dir / (name + ".dot")).string() << "\n";
  return kExitOk;
}

}  // namespace

void add_superoptimize_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "superoptimize", "Search fused kernels (µGraphs) for a tensor program on a device");
  auto a = std::make_shared<SuperoptimizeArgs>();
  cmd->add_option("PROGRAM", a->program, "Tensor program file (data/programs/README.md)")
      ->required();
  cmd->add_option("--device", a->device, "Target device (yirage-plan devices)")->required();
  cmd->add_option("--out", a->out, "Directory for NAME.ugraph.json and NAME.dot")->type_name("DIR");
  cmd->add_option("--shape", a->shapes, "Resize an input: NAME=16x4096 (may be repeated)");
  cmd->add_option("--threads", a->threads, "Worker threads (results do not depend on it)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--time-limit", a->time_limit_s,
                  "Stop the search after this many seconds and keep the best µGraph verified so "
                  "far (0: no limit)")
      ->capture_default_str()
      ->type_name("SECONDS")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return superoptimize(cx, *a);
    };
  });
}

}  // namespace yirage::cli
