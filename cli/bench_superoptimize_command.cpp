// `yirage-plan bench-superoptimize [--device NAME]`: superoptimizes every bundled program at
// its full shape and prints the search statistics (time, candidates generated, pruned and
// verified) and the best µGraph's estimate next to the program as library kernels and next
// to the best known µGraph of mugraph.md where data/programs/reference/ holds one.
#include "cli/context.h"
#include "cli/run.h"
#include "cli/superoptimize_report.h"
#include "cli/table.h"
#include "codegen/cost/ugraph_cost.h"
#include "codegen/ir/ugraph_json.h"
#include "codegen/search/superoptimizer.h"
#include "devices/support/units.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <fstream>
#include <sstream>

namespace yirage::cli {
namespace {

struct BenchArgs {
  std::string device = "H100-SXM";
  int threads = 2;
};

// The best known µGraph of mugraph.md for a program, priced and fully verified, if bundled.
std::string reference_cell(const SearchSetup& s, const codegen::SuperoptimizeResult& r) {
  std::filesystem::path p =
      devices::data_dir() / "programs" / "reference" / (s.program.graph.name + ".ugraph.json");
  std::ifstream in(p);
  if (!in)
    return "-";
  std::stringstream text;
  text << in.rdbuf();
  codegen::KernelGraph g = codegen::ugraph_from_json(text.str(), p.string());
  std::string why = codegen::check_graph(g, s.device);
  if (why.empty())
    why = codegen::verify_full(s.program.graph, g, 99, 1, 1e-3, nullptr);
  if (!why.empty())
    return "invalid: " + why;
  double t = codegen::price_ugraph(g, *s.device, s.efficiency).time.value;
  return devices::format(devices::Seconds{t}) + " (" +
         devices::format_number(t / r.best.cost.time.value, 3) + "x)";
}

int bench(Context& cx, const BenchArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  Table t({"program", ">time", ">generated", ">pruned", ">verified", ">best", ">library",
           ">known µGraph (best/it)"});
  for (const std::filesystem::path& p : codegen::bundled_programs()) {
    std::optional<SearchSetup> s = setup_search(registry, a.device, p.string(), {}, cx.err);
    if (!s)
      return kExitBadInput;
    codegen::SuperoptimizeOptions o;
    o.threads = a.threads;
    auto start = std::chrono::steady_clock::now();
    codegen::SuperoptimizeResult r =
        codegen::superoptimize(s->program.graph, *s->device, s->efficiency, o);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    t.add_row({s->program.graph.name + (r.stats.truncated ? " (truncated)" : ""),
               devices::format(devices::Seconds{secs}), std::to_string(r.stats.generated),
               std::to_string(r.stats.pruned), std::to_string(r.stats.verified),
               devices::format(r.best.cost.time) + (r.best_is_reference ? " (library)" : ""),
               devices::format(r.reference.cost.time), reference_cell(*s, r)});
  }
  cx.out << "superoptimizer on " << a.device << ", " << a.threads
         << " worker threads (time includes verification of the finalists)\n";
  t.print(cx.out);
  return kExitOk;
}

}  // namespace

void add_bench_superoptimize_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "bench-superoptimize", "Superoptimize every bundled program and print search statistics");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("--device", a->device, "Target device (default H100-SXM)");
  cmd->add_option("--threads", a->threads, "Worker threads")->check(CLI::Range(1, 64));
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return bench(cx, *a);
    };
  });
}

}  // namespace yirage::cli
