#include "cli/superoptimize_report.h"

#include "report/summary.h"

#include "codegen/ir/thread_fusion.h"
#include "codegen/ir/ugraph_json.h"
#include "costmodel/calibration.h"
#include "devices/support/text.h"
#include "devices/support/units.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

namespace yirage::cli {
namespace {

std::optional<codegen::Shape> parse_shape(const std::string& text) {
  codegen::Shape s;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t x = text.find('x', pos);
    std::string part = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos ||
        part.size() > 12)
      return std::nullopt;
    s.push_back(std::stoll(part));
    if (s.back() <= 0)
      return std::nullopt;
    if (x == std::string::npos)
      break;
    pos = x + 1;
  }
  return s;
}

std::string us(devices::Seconds t) {
  return devices::format(t);
}

// The bounds of a search. The verifier evaluates the reference program (and each finalist)
// on whole tensors of 8-byte values (finite-field elements or doubles), several times over:
// a program whose tensors need more memory than this, or whose operations need more
// multiply-adds than this (ten times the largest bundled program, gated MLP's 0.94 billion),
// is refused before the search starts rather than exhausting memory or running for hours.
constexpr double kVerifyMemoryLimit = 8.0 * (1 << 30);
constexpr double kVerifyWorkLimit = 1e10;

double product(const codegen::Shape& s) {
  double n = 1;
  for (std::int64_t d : s)
    n *= static_cast<double>(d);
  return n;
}

/// Empty, or why the program is too large to verify.
std::string verify_limits(const codegen::Program& p) {
  std::string why;
  std::vector<codegen::Shape> shapes = codegen::kernel_shapes(p.graph, &why);
  double bytes = 0;
  for (const codegen::Shape& shape : shapes)
    bytes += 8 * product(shape);
  // Each op's multiply-adds: a matmul's output elements times its inner dimension, any other
  // op about its largest input.
  double work = 0;
  std::size_t first_output = p.graph.inputs.size();
  for (std::size_t i = 0; i < p.graph.ops.size() && first_output + i < shapes.size(); ++i) {
    const codegen::KernelOp& op = p.graph.ops[i];
    if (op.in.empty())
      continue;
    double largest = 0;
    for (int t : op.in)
      largest = std::max(largest, product(shapes[static_cast<std::size_t>(t)]));
    const codegen::Shape& a = shapes[static_cast<std::size_t>(op.in.front())];
    work += op.kind == codegen::OpKind::kMatmul
                ? product(shapes[first_output + i]) * static_cast<double>(a.back())
                : largest;
  }
  std::string what = p.graph.name + " needs ";
  if (bytes > kVerifyMemoryLimit) {
    return what + report::bytes(bytes) +
           " to hold its tensors for verification (8 bytes an element), more than the search's "
           "limit of " +
           report::bytes(kVerifyMemoryLimit) + "; give smaller shapes (--shape)";
  }
  if (work > kVerifyWorkLimit) {
    return what + report::format_count(work) +
           " multiply-adds to verify, more than the search's limit of " +
           report::format_count(kVerifyWorkLimit) + "; give smaller shapes (--shape)";
  }
  return {};
}

}  // namespace

std::optional<SearchSetup> setup_search(const devices::DeviceRegistry& registry,
                                        const std::string& device,
                                        const std::string& program,
                                        const std::vector<std::string>& shapes,
                                        std::ostream& err) {
  SearchSetup s;
  s.device = registry.find(device);
  if (s.device == nullptr) {
    err << "error: unknown device '" << device << "'"
        << devices::did_you_mean(device, registry.all_names())
        << " (`yirage-plan devices` lists them)\n";
    return std::nullopt;
  }
  std::map<std::string, codegen::Shape> resize;
  for (const std::string& arg : shapes) {
    std::size_t eq = arg.find('=');
    std::optional<codegen::Shape> shape =
        eq == std::string::npos ? std::nullopt : parse_shape(arg.substr(eq + 1));
    if (!shape) {
      err << "error: --shape " << arg << ": expected NAME=16x4096\n";
      return std::nullopt;
    }
    resize[arg.substr(0, eq)] = *shape;
  }
  s.program = codegen::load_program(program);
  if (!resize.empty())
    s.program = codegen::resize_inputs(s.program, resize);
  if (std::string why = verify_limits(s.program); !why.empty()) {
    err << "error: " << why << "\n";
    return std::nullopt;
  }
  costmodel::CalibrationSet cal =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  if (const costmodel::GpuEfficiency* e = cal.find_gpu(s.device->name))
    s.efficiency = *e;
  return s;
}

void print_result(std::ostream& out, const SearchSetup& s, const codegen::SuperoptimizeResult& r) {
  const codegen::SuperoptimizeStats& st = r.stats;
  out << s.program.graph.name << " on " << s.device->name << " ("
      << (s.device->onchip.compute_units ? std::to_string(s.device->onchip.compute_units->value)
                                         : std::string("?"))
      << " compute units, " << codegen::shared_memory_limit(*s.device)
      << " bytes of shared memory per block; " << s.efficiency.source << ")\n";
  out << "search: " << st.branches << " branches, " << st.generated << " prefixes generated, "
      << st.pruned << " pruned by abstract expressions"
      << (st.truncated ? " (truncated at the state limit)" : "")
      << (st.timed_out ? " (stopped at the time limit: the result is the best found so far)" : "")
      << "\n";
  out << "candidates: " << st.candidates << " complete, " << st.verified
      << " verified on sampled blocks, " << st.rejected << " rejected by fingerprints; "
      << st.priced << " schedules priced\n";
  out << "finalists: " << st.finalists_checked << " checked on whole outputs ("
      << (st.field_tested ? "3 finite-field tests" : "no finite-field meaning: float only") << "), "
      << st.finalists_rejected << " rejected; float error of the chosen µGraph "
      << (std::isfinite(st.float_error)
              ? devices::format_number(st.float_error, 3)
              : std::string("not finite (the program's values overflow on the random test inputs)"))
      << "\n";
  double ratio = r.reference.cost.time.value / r.best.cost.time.value;
  out << "best µGraph: " << us(r.best.cost.time)
      << " (the program as library kernels: " << us(r.reference.cost.time) << ", "
      << devices::format_number(ratio, 3) << "x)"
      << (r.best_is_reference ? "; no fused µGraph beat the library kernels" : "") << "\n";
  out << codegen::ugraph_text(r.best.graph);
  auto kernels = [&out](const codegen::UgraphCost& c) {
    for (const costmodel::KernelEstimate& k : c.kernels)
      out << "  kernel " << k.name << ": " << us(k.time()) << ", " << k.bound() << "-bound, "
          << k.tiles << " blocks in " << k.waves << " waves, "
          << devices::format_quantity(k.hbm_bytes, devices::Dim::kBytes) << " from HBM\n";
  };
  kernels(r.best.cost);
  if (!r.best_is_reference) {
    out << "the program as library kernels:\n";
    kernels(r.reference.cost);
  }
  const costmodel::GpuEfficiency& e = s.efficiency;
  bool gpu =
      s.device->backend == devices::Backend::kCuda || s.device->backend == devices::Backend::kHip;
  bool fitted =
      e.block_step_cycles > 0 || e.block_mma_step_cycles > 0 || e.block_barrier_cycles > 0;
  if (gpu && !fitted)
    out << "note: " << s.device->name
        << " has no fitted block-program latency (data/calibration/), so a generated block "
           "program's serial latency is not priced and fused µGraphs may be priced too low "
           "(on the H100, unpriced, they measured 3.5x to 15.6x their estimates)\n";
}

nlohmann::ordered_json result_json(const SearchSetup& s, const codegen::SuperoptimizeResult& r) {
  const codegen::SuperoptimizeStats& st = r.stats;
  nlohmann::ordered_json j;
  j["program"] = s.program.graph.name;
  j["device"] = s.device->name;
  j["branches"] = st.branches;
  j["generated"] = st.generated;
  j["pruned"] = st.pruned;
  j["candidates"] = st.candidates;
  j["verified"] = st.verified;
  j["rejected"] = st.rejected;
  j["priced"] = st.priced;
  j["finalists_checked"] = st.finalists_checked;
  j["truncated"] = st.truncated;
  j["timed_out"] = st.timed_out;
  j["float_error"] = std::isfinite(st.float_error) ? nlohmann::ordered_json(st.float_error)
                                                   : nlohmann::ordered_json(nullptr);
  j["best_latency_s"] = r.best.cost.time.value;
  j["library_latency_s"] = r.reference.cost.time.value;
  j["best_is_library"] = r.best_is_reference;
  j["ugraph"] = nlohmann::ordered_json::parse(codegen::ugraph_to_json(r.best.graph));
  return j;
}

}  // namespace yirage::cli
