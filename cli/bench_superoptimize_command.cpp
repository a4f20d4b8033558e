// `yirage-plan bench-superoptimize [--device NAME]`: superoptimizes every bundled program at
// its full shape and prints the search statistics (time, candidates generated, pruned and
// verified) and the best µGraph's estimate next to the program as library kernels and next
// to the best known µGraph of mugraph.md where data/programs/reference/ holds one.
#include "report/table.h"

#include "cli/context.h"
#include "cli/run.h"
#include "cli/superoptimize_report.h"
#include "codegen/cost/ugraph_cost.h"
#include "codegen/program/program_loader.h"
#include "codegen/search/superoptimizer.h"
#include "devices/support/units.h"

#include <CLI/CLI.hpp>

#include <chrono>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

struct BenchArgs {
  std::vector<std::string> programs;  // empty: every bundled program
  std::string device = "H100-SXM";
  int threads = 2;
};

// The best known µGraph of mugraph.md for a program (data/programs/reference/), checked and
// priced with the same cost model as the search's choice.
struct Known {
  std::string cost = "-";                    // its estimate, or why it does not count
  std::string ratio = "-";                   // found / known
  std::string mark = "-";                    // whether found <= known
  nlohmann::ordered_json known_s = nullptr;  // for machines: the estimate, or null
  nlohmann::ordered_json invalid = nullptr;  // why the known µGraph does not count
};

Known known_ugraph(const SearchSetup& s, const codegen::SuperoptimizeResult& r) {
  Known k;
  std::optional<codegen::KernelGraph> g = codegen::load_reference_ugraph(s.program.graph.name);
  if (!g)
    return k;
  std::string why = codegen::check_graph(*g, s.device);
  if (why.empty())
    why = codegen::verify_full(s.program.graph, *g, 99, 1, 1e-3, nullptr);
  if (!why.empty()) {
    k.cost = "invalid: " + why;
    k.invalid = why;
    return k;
  }
  double known = codegen::price_ugraph(*g, *s.device, s.efficiency).time.value;
  double found = r.best.cost.time.value;
  k.cost = devices::format(devices::Seconds{known});
  k.ratio = devices::format_number(found / known, 3);
  k.mark = found <= known ? "yes" : "NO";
  k.known_s = known;
  return k;
}

int bench(Context& cx, const BenchArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  Table t({"program", ">time", ">generated", ">pruned", ">candidates", ">verified", ">found",
           ">library", ">known µGraph", ">found/known", ">found <= known"});
  bool truncated = false;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<std::filesystem::path> programs(a.programs.begin(), a.programs.end());
  if (programs.empty())
    programs = codegen::bundled_programs();
  for (const std::filesystem::path& p : programs) {
    std::optional<SearchSetup> s = setup_search(registry, a.device, p.string(), {}, cx.err);
    if (!s)
      return kExitBadInput;
    codegen::SuperoptimizeOptions o;
    o.threads = a.threads;
    auto start = std::chrono::steady_clock::now();
    codegen::SuperoptimizeResult r =
        codegen::superoptimize(s->program.graph, *s->device, s->efficiency, o);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    truncated = truncated || r.stats.truncated;
    Known k = known_ugraph(*s, r);
    t.add_row({s->program.graph.name + (r.stats.truncated ? " (truncated)" : ""),
               devices::format(devices::Seconds{secs}), std::to_string(r.stats.generated),
               std::to_string(r.stats.pruned), std::to_string(r.stats.candidates),
               std::to_string(r.stats.verified),
               devices::format(r.best.cost.time) + (r.best_is_reference ? " (library)" : ""),
               devices::format(r.reference.cost.time), k.cost, k.ratio, k.mark});
    bool known = !k.known_s.is_null();
    rows.push_back({{"program", s->program.graph.name},
                    {"truncated", r.stats.truncated},
                    {"search_s", secs},
                    {"generated", r.stats.generated},
                    {"pruned", r.stats.pruned},
                    {"candidates", r.stats.candidates},
                    {"verified", r.stats.verified},
                    {"found_s", r.best.cost.time.value},
                    {"found_is_library", r.best_is_reference},
                    {"library_s", r.reference.cost.time.value},
                    {"known_s", k.known_s},
                    {"known_invalid", k.invalid},
                    {"found_over_known", known ? nlohmann::ordered_json(r.best.cost.time.value /
                                                                        k.known_s.get<double>())
                                               : nlohmann::ordered_json(nullptr)}});
  }
  if (cx.structured()) {
    nlohmann::ordered_json j;
    j["device"] = a.device;
    j["threads"] = a.threads;
    j["max_states"] = codegen::SearchLimits{}.max_states;
    j["rows"] = rows;
    return write_document(cx, "bench_superoptimize", j);
  }
  cx.out << "superoptimizer on " << a.device << ", " << a.threads
         << " worker threads (time includes verification of the finalists; the known µGraphs "
            "of data/programs/reference/ are checked and priced by the same cost model)\n";
  t.print(cx.out);
  if (truncated)
    cx.out << "(truncated): some branch of the search stopped at the state limit of "
           << codegen::SearchLimits{}.max_states
           << " prefixes, so a better µGraph may lie beyond it\n";
  return kExitOk;
}

}  // namespace

void add_bench_superoptimize_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "bench-superoptimize",
      "Superoptimize every bundled program (or those given) and print search statistics");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("PROGRAM", a->programs, "Program files (default: every bundled program)");
  cmd->add_option("--device", a->device, "Target device (default H100-SXM)");
  cmd->add_option("--threads", a->threads, "Worker threads")->check(CLI::Range(1, 64));
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return bench(cx, *a);
    };
  });
}

}  // namespace yirage::cli
