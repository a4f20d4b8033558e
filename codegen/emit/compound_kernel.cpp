#include "codegen/emit/compound_kernel.h"

#include "codegen/cost/ugraph_cost.h"
#include "codegen/program/program_loader.h"
#include "devices/registry.h"
#include "devices/support/diagnostics.h"

#include <filesystem>
#include <map>

namespace yirage::codegen {
std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string s;
  for (std::int64_t d : dims)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

namespace {

// The shapes of `g`'s tensors computed by its first `ops` ops (and its inputs).
std::vector<Shape> prefix_shapes(const KernelGraph& g, std::size_t ops, std::string* why) {
  KernelGraph h = g;
  h.ops.resize(ops);
  h.outputs.clear();
  return kernel_shapes(h, why);
}

bool free_axis(const BlockGraph& b, int a) {
  if (b.grid[static_cast<std::size_t>(a)] != 1)
    return false;
  for (const BlockInput& in : b.inputs)
    if (in.imap[static_cast<std::size_t>(a)] != kReplicated)
      return false;
  for (const BlockOutput& out : b.outputs)
    if (out.omap[static_cast<std::size_t>(a)] != kReplicated)
      return false;
  return true;
}

// Rescales block graph `b` for inputs that grew from `before` to `after` (by whole factors):
// the grid axis or for-loop over a grown dim grows with it; rows held whole in a block go to
// a free axis, which the outputs' rows follow.
bool widen_block(BlockGraph& b,
                 const std::vector<Shape>& before,
                 const std::vector<Shape>& after,
                 std::string* why) {
  std::vector<Shape> tiles = block_shapes(b, before, why);
  if (tiles.empty())
    return false;
  std::map<int, std::int64_t> axis_scale;  // existing axis -> factor
  std::int64_t loop_scale = 1;
  int new_axis = -1;
  std::int64_t new_factor = 1;
  bool new_rows = false;  // the new axis splits X's rows (else a weight's columns)
  for (BlockInput& in : b.inputs) {
    const Shape& s0 = before[static_cast<std::size_t>(in.input)];
    const Shape& s1 = after[static_cast<std::size_t>(in.input)];
    for (std::size_t d = 0; d < s0.size(); ++d) {
      if (s0[d] == s1[d])
        continue;
      if (s1[d] % s0[d] != 0)
        return *why = "a dim grows by a fraction", false;
      std::int64_t r = s1[d] / s0[d];
      int axis = -1;
      for (int a = 0; a < 3; ++a)
        if (in.imap[static_cast<std::size_t>(a)] == static_cast<int>(d))
          axis = a;
      if (axis >= 0) {
        auto [it, added] = axis_scale.emplace(axis, r);
        if (!added && it->second != r)
          return *why = "a grid axis splits dims that grow differently", false;
      } else if (in.fmap == static_cast<int>(d)) {
        if (loop_scale != 1 && loop_scale != r)
          return *why = "the for-loop splits dims that grow differently", false;
        loop_scale = r;
      } else {
        if (new_axis < 0) {
          for (int a = 2; a >= 0 && new_axis < 0; --a)
            if (free_axis(b, a))
              new_axis = a;
          if (new_axis < 0)
            return *why = "no free grid axis for the new row blocks", false;
          new_factor = r;
          new_rows = in.input == 0 && d == 0;
        } else if (new_factor != r || new_rows != (in.input == 0 && d == 0)) {
          return *why = "whole dims grow differently", false;
        }
        in.imap[static_cast<std::size_t>(new_axis)] = static_cast<int>(d);
      }
    }
  }
  for (auto [a, r] : axis_scale)
    b.grid[static_cast<std::size_t>(a)] *= r;
  b.forloop *= loop_scale;
  if (new_axis >= 0) {
    b.grid[static_cast<std::size_t>(new_axis)] = new_factor;
    // The rows or the columns of what each saver writes.
    for (BlockOutput& out : b.outputs)
      out.omap[static_cast<std::size_t>(new_axis)] =
          new_rows ? 0 : static_cast<int>(tiles[static_cast<std::size_t>(out.tensor)].size()) - 1;
  }
  return true;
}

}  // namespace

std::optional<Backend> backend_for(const devices::DeviceSpec& d) {
  switch (d.backend) {
    case devices::Backend::kCuda:
      return Backend::kCuda;
    case devices::Backend::kHip:
      return Backend::kHip;
    case devices::Backend::kCpu:
      return Backend::kCpu;
    case devices::Backend::kNone:
      break;
  }
  return std::nullopt;
}

std::optional<KernelGraph> compound_program(const std::string& op,
                                            const std::vector<std::int64_t>& dims,
                                            std::string* why) {
  std::filesystem::path file = devices::data_dir() / "programs" / (op + ".yaml");
  if (!std::filesystem::exists(file)) {
    *why = "no tensor program is bundled for " + op + " (data/programs/)";
    return std::nullopt;
  }
  if (dims.size() != 3) {
    *why = op + " takes M x K x N, not " + dims_text(dims);
    return std::nullopt;
  }
  try {
    Program p = load_program(file);
    std::map<std::string, Shape> shapes;
    for (std::size_t i = 0; i < p.graph.inputs.size(); ++i)
      shapes[p.graph.inputs[i].name] = i == 0 ? Shape{dims[0], dims[1]} : Shape{dims[1], dims[2]};
    KernelGraph g = resize_inputs(p, shapes).graph;
    g.name = op + "_" + dims_text(dims);
    return g;
  } catch (const devices::InputError& e) {
    *why = e.what();
    return std::nullopt;
  }
}

std::optional<KernelGraph> widen(const KernelGraph& g,
                                 const std::vector<Shape>& inputs,
                                 std::string* why) {
  KernelGraph h = g;
  if (inputs.size() != h.inputs.size())
    return *why = "the graph has other inputs", std::nullopt;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    h.inputs[i].shape = inputs[i];
  for (std::size_t i = 0; i < h.ops.size(); ++i) {
    const KernelOp& op = h.ops[i];
    if (op.kind != OpKind::kCustom)
      continue;
    std::vector<Shape> before = prefix_shapes(g, i, why);
    std::vector<Shape> after = prefix_shapes(h, i, why);
    if (before.empty() || after.empty())
      return std::nullopt;
    std::vector<Shape> in0, in1;
    for (int t : op.in) {
      in0.push_back(before[static_cast<std::size_t>(t)]);
      in1.push_back(after[static_cast<std::size_t>(t)]);
    }
    if (!widen_block(h.blocks[static_cast<std::size_t>(op.block)], in0, in1, why))
      return std::nullopt;
  }
  if (std::string bad = check_graph(h, nullptr); !bad.empty())
    return *why = "the widened graph is not valid: " + bad, std::nullopt;
  return h;
}

std::optional<KernelGraph> widen_rows(const KernelGraph& g, std::int64_t factor, std::string* why) {
  std::vector<Shape> inputs;
  for (const KernelInput& in : g.inputs)
    inputs.push_back(in.shape);
  if (inputs.empty() || inputs[0].empty())
    return *why = "the graph has no rows to widen", std::nullopt;
  inputs[0][0] *= factor;
  return widen(g, inputs, why);
}

namespace {

// The largest divisor of n up to `cap`.
std::int64_t divisor_up_to(std::int64_t n, std::int64_t cap) {
  for (std::int64_t r = std::min(n, cap); r > 1; --r)
    if (n % r == 0)
      return r;
  return 1;
}

std::vector<Shape> input_shapes(const KernelGraph& g) {
  std::vector<Shape> s;
  for (const KernelInput& in : g.inputs)
    s.push_back(in.shape);
  return s;
}

}  // namespace

CompoundKernel compound_kernel(const std::string& op,
                               const std::vector<std::int64_t>& dims,
                               const devices::DeviceSpec& device,
                               const costmodel::GpuEfficiency& eff,
                               Backend backend,
                               const SuperoptimizeOptions& options) {
  CompoundKernel k;
  k.op = op;
  k.dims = dims;
  std::optional<KernelGraph> full = compound_program(op, dims, &k.why);
  if (!full)
    return k;
  k.library_s = price_ugraph(*full, device, eff).time.value;
  // Up to 16 rows of X (the weights streamed once: the GEMV form) the search runs at the
  // plan's shape; beyond, on a tile of it (64 rows, K and N up to 1024), widened after.
  std::vector<std::int64_t> tile = dims;
  if (dims[0] > 16)
    tile = {divisor_up_to(dims[0], 64), divisor_up_to(dims[1], 1024), divisor_up_to(dims[2], 1024)};
  k.searched = tile;
  std::optional<KernelGraph> small = compound_program(op, tile, &k.why);
  if (!small)
    return k;
  SuperoptimizeResult r = superoptimize(*small, device, eff, options);
  k.stats = r.stats;
  k.fused = !r.best_is_reference;
  std::optional<KernelGraph> wide = *full;
  if (k.fused && tile != dims) {
    // The widening is checked in full where it first applies: twice the tile in each dim
    // that grows.
    std::vector<std::int64_t> twice = tile;
    for (std::size_t i = 0; i < twice.size(); ++i)
      twice[i] *= dims[i] > tile[i] ? 2 : 1;
    std::optional<KernelGraph> reference = compound_program(op, twice, &k.why);
    std::optional<KernelGraph> two =
        reference ? widen(r.best.graph, input_shapes(*reference), &k.why) : std::nullopt;
    if (!two)
      return k;
    double err = 0;
    std::string bad = verify_full(*reference, *two, options.seed + 1, options.full_tests,
                                  options.float_tolerance, &err, options.threads);
    if (!bad.empty()) {
      k.why = "the µGraph widened to " + dims_text(twice) + " fails: " + bad;
      return k;
    }
    wide = widen(r.best.graph, input_shapes(*full), &k.why);
    if (!wide)
      return k;
    if (std::string bad_fit = check_graph(*wide, &device); !bad_fit.empty()) {
      k.why = "the widened µGraph does not fit " + device.name + ": " + bad_fit;
      return k;
    }
  } else if (k.fused) {
    wide = r.best.graph;
  }
  wide->name = full->name;
  k.priced_s = price_ugraph(*wide, device, eff).time.value;
  if (k.fused && k.priced_s >= k.library_s) {
    k.slower = "the µGraph found on " + dims_text(tile) + " is priced at " +
               std::to_string(k.priced_s * 1e6) + " us widened, the library kernels at " +
               std::to_string(k.library_s * 1e6) + " us; the library kernels are emitted";
    k.fused = false;
    wide = *full;
    k.priced_s = k.library_s;
  }
  k.graph = *wide;
  BlockProgram lowered = lower(*wide);
  if (lowered.gemv && device.onchip.compute_units)  // the grid sized for this device's SMs
    lowered.gemv->compute_units = device.onchip.compute_units->value;
  k.source = emit_kernels(lowered, backend);
  return k;
}

}  // namespace yirage::codegen
