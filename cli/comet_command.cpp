// `yirage-plan comet ARCH PROBLEM MAPPING`: the COMET model of one compound operation inside
// one accelerator: latency in cycles (and seconds at --freq-ghz), its CS / OS / TMW breakdown
// per memory group, operation and collective, and energy by level.
#include "report/structured_output.h"
#include "report/table.h"

#include "cli/context.h"
#include "cli/run.h"
#include "costmodel/comet/model.h"
#include "costmodel/comet/search.h"
#include "devices/support/units.h"

#include <CLI/CLI.hpp>

#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

using costmodel::comet::BreakdownRow;
using costmodel::comet::Report;

struct CometArgs {
  std::string arch, problem, mapping, constants, search, baseline;
  bool ref_compat = false;
  bool json = false;
  bool no_noc = false;
  double freq_ghz = 1.0;
};

std::string fixed0(double v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(0) << v;
  return s.str();
}

std::string cell(std::int64_t v, bool shown) {
  return shown ? std::to_string(v) : "-";
}

void print_breakdown(std::ostream& out, const Report& r) {
  Table t({"  unit", ">CS", ">OS", ">TMW", ">total"});
  for (const BreakdownRow& b : r.rows) {
    bool mem = b.kind == BreakdownRow::Kind::kMemory;
    bool op = b.kind == BreakdownRow::Kind::kOperation;
    t.add_row({"  " + b.key, cell(b.cs, mem), cell(b.os, !op), cell(b.tmw, op),
               std::to_string(b.total())});
  }
  t.add_row({"  total", "", "", "", std::to_string(r.breakdown_total)});
  t.print(out);
}

void print_energy(std::ostream& out, const Report& r) {
  Table t({"  level", ">pJ"});
  for (const auto& e : r.energy)
    t.add_row({"  " + e.key, fixed0(e.pj)});
  t.add_row({"  total", fixed0(r.energy_total)});
  t.print(out);
}

nlohmann::ordered_json report_json(const Report& r, const CometArgs& a) {
  nlohmann::ordered_json j;
  j["mode"] = a.ref_compat ? "reference" : "corrected";
  j["latency_cycles"] = r.latency;
  j["freq_ghz"] = r.freq_ghz;
  j["latency_s"] = r.seconds();
  j["breakdown_total_cycles"] = r.breakdown_total;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const BreakdownRow& b : r.rows)
    rows.push_back(
        {{"unit", b.key}, {"cs", b.cs}, {"os", b.os}, {"tmw", b.tmw}, {"total", b.total()}});
  j["breakdown"] = rows;
  nlohmann::ordered_json energy = nlohmann::ordered_json::object();
  for (const auto& e : r.energy)
    energy[e.key] = e.pj;
  j["energy_pj"] = energy;
  j["energy_total_pj"] = r.energy_total;
  j["energy_j"] = r.energy_total * 1e-12;
  return j;
}

std::string scientific(double v) {
  std::ostringstream s;
  s << std::scientific << std::setprecision(4) << v;
  return s.str();
}

void print_best(std::ostream& out, const char* what, const costmodel::comet::Priced& p) {
  out << "best " << what << ": " << p.latency << " cycles, " << scientific(p.energy)
      << " pJ: " << costmodel::comet::describe(p.candidate) << "\n";
}

std::string ratio(double v) {
  return devices::format_number(v, 3) + "x";
}

// Prices every factorization the constraints allow, with `mapping` as the template.
costmodel::comet::SearchResult search_mapping(Context& cx,
                                              const CometArgs& a,
                                              const costmodel::comet::Options& opt,
                                              const std::string& mapping) {
  using namespace costmodel::comet;
  ArchSpec arch = load_arch(a.arch);
  ProblemSpec problem = load_problem(a.problem, load_constants(a.constants));
  FactorConstraints constraints = load_constraints(a.search, problem);
  std::ifstream in(mapping);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<Candidate> space = enumerate_space(problem, constraints);
  SearchResult r = search_space(arch, problem, mapping, text.str(), space, opt);
  cx.out << "COMET mapping search of " << mapping << " over " << a.search << " ("
         << (a.ref_compat ? "reference mode" : "corrected model") << "): " << r.candidates
         << " candidates, " << r.rejected << " rejected (tiles do not fit)\n";
  for (const std::string& why : r.reasons)
    cx.out << "  rejected " << why << "\n";
  if (!r.best_latency) {
    cx.out << "no candidate fits\n";
    return r;
  }
  print_best(cx.out, "latency", *r.best_latency);
  print_best(cx.out, "energy", *r.best_energy);
  return r;
}

// --search, and with --baseline the speed-up of the best mapping over the best baseline
// (comet-model.md section 8 #19: the same search space for both).
int search(Context& cx, const CometArgs& a, const costmodel::comet::Options& opt) {
  if (cx.structured() || a.json) {
    cx.err << "error: comet --search prints text only; --json is for one mapping\n";
    return kExitBadInput;
  }
  costmodel::comet::SearchResult r = search_mapping(cx, a, opt, a.mapping);
  if (!r.best_latency)
    return kExitNoAnswer;
  if (a.baseline.empty())
    return kExitOk;
  costmodel::comet::SearchResult b = search_mapping(cx, a, opt, a.baseline);
  if (!b.best_latency)
    return kExitNoAnswer;
  cx.out << "speed-up over the baseline (best latency each): "
         << ratio(static_cast<double>(b.best_latency->latency) /
                  static_cast<double>(r.best_latency->latency))
         << "; energy saving (best energy each): "
         << ratio(b.best_energy->energy / r.best_energy->energy) << "\n";
  return kExitOk;
}

int comet(Context& cx, const CometArgs& a) {
  using namespace costmodel::comet;
  Options opt = a.ref_compat ? Options::reference() : Options{};
  opt.freq_ghz = a.freq_ghz;
  opt.noc_energy = !a.no_noc;
  if (!a.search.empty())
    return search(cx, a, opt);
  ArchSpec arch = load_arch(a.arch);
  Constants constants = load_constants(a.constants);
  ProblemSpec problem = load_problem(a.problem, constants);
  Mapping mapping = load_mapping(a.mapping, arch, problem, constants);
  Report r = evaluate(arch, problem, mapping, opt);
  std::optional<Rejected> misfit = check_fit(arch, problem, mapping, opt);
  if (cx.structured() || a.json) {
    nlohmann::ordered_json j = report_json(r, a);
    j["fits"] = !misfit;
    if (misfit)
      j["misfit"] = misfit->reason;
    return write_document(cx, "comet", j);
  }
  cx.out << "COMET model of " << a.mapping << " on " << a.arch << " ("
         << (a.ref_compat ? "reference mode" : "corrected model") << ")\n";
  cx.out << "latency: " << r.latency
         << " cycles = " << devices::format(devices::Seconds{r.seconds()}) << " at "
         << devices::format_number(a.freq_ghz) << " GHz\n";
  if (misfit)
    cx.out << "warning: the tiles do not fit, " << misfit->reason << "\n";
  cx.out << "breakdown (cycles; CS compulsory stall, OS optional stall, TMW compute window)\n";
  print_breakdown(cx.out, r);
  cx.out << "energy by level (pJ" << (opt.noc_energy ? ", NoC included" : "") << ")\n";
  print_energy(cx.out, r);
  if (!a.baseline.empty()) {
    Report b = evaluate(arch, problem, load_mapping(a.baseline, arch, problem, constants), opt);
    cx.out << "baseline " << a.baseline << ": " << b.latency << " cycles, "
           << scientific(b.energy_total) << " pJ; speed-up "
           << ratio(static_cast<double>(b.latency) / static_cast<double>(r.latency))
           << ", energy saving " << ratio(b.energy_total / r.energy_total) << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_comet_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand(
      "comet", "COMET model of a compound operation inside one accelerator (cycles, energy)");
  auto a = std::make_shared<CometArgs>();
  cmd->add_option("ARCH", a->arch, "Architecture (COMET arch YAML)")->required();
  cmd->add_option("PROBLEM", a->problem, "Problem (COMET problem YAML)")->required();
  cmd->add_option("MAPPING", a->mapping, "Mapping (COMET mapping YAML)")->required();
  cmd->add_option("--constants", a->constants, "Constants giving the mapping's symbols values")
      ->type_name("FILE");
  cmd->add_flag("--ref-compat", a->ref_compat,
                "Reproduce the reference implementation's quirks (comet-model.md section 8)");
  cmd->add_option("--freq-ghz", a->freq_ghz, "Clock, to convert cycles to seconds")
      ->capture_default_str();
  cmd->add_flag("--no-noc-energy", a->no_noc, "Leave out the NoC energy");
  cmd->add_option("--search", a->search,
                  "Price every factorization CONSTRAINTS allows (reference sweep format); "
                  "print the best by latency and by energy")
      ->type_name("CONSTRAINTS");
  cmd->add_option("--baseline", a->baseline,
                  "Another mapping of the same problem (e.g. the unfused one) to compare with")
      ->type_name("MAPPING");
  cmd->add_flag("--json", a->json, "JSON output");
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return comet(cx, *a);
    };
  });
}

}  // namespace yirage::cli
