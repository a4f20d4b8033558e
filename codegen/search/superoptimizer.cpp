#include "codegen/search/superoptimizer.h"

#include "codegen/verify/verifier.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <thread>

namespace yirage::codegen {
namespace {

struct BranchResult {
  std::vector<Found> found;
  EnumStats stats;
};

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Whether `g`'s outputs have the shapes `want` (a schedule can change what a block saves).
bool output_shapes(const KernelGraph& g, const std::vector<Shape>& want) {
  std::string why;
  std::vector<Shape> shapes = kernel_shapes(g, &why);
  if (g.outputs.size() != want.size())
    return false;
  for (std::size_t o = 0; o < want.size(); ++o) {
    auto t = static_cast<std::size_t>(g.outputs[o]);
    if (t >= shapes.size() || shapes[t] != want[o])
      return false;
  }
  return true;
}

std::vector<Shape> outputs_of(const KernelGraph& g) {
  std::string why;
  std::vector<Shape> shapes = kernel_shapes(g, &why);
  std::vector<Shape> out;
  for (int t : g.outputs)
    out.push_back(shapes[static_cast<std::size_t>(t)]);
  return out;
}

// The found graph with its last op, when graph-defined, at its schedule with the most thread
// blocks (then the longest for-loop) that the device accepts: tier 1 evaluates `sampled_blocks`
// blocks of it, and the smallest schedule (the one the generator builds with) has 2 blocks,
// so sampling it costs as much as the whole output. Whether a µGraph computes the program does
// not depend on its grid and for-loop sizes (the finalists are checked again at their own).
KernelGraph sampling_schedule(const Found& f, const devices::DeviceSpec& d) {
  if (f.graph.ops.empty() || f.graph.ops.back().kind != OpKind::kCustom)
    return f.graph;
  std::string why;
  std::vector<Shape> shapes = kernel_shapes(f.graph, &why);
  const KernelOp& op = f.graph.ops.back();
  std::vector<Shape> in;
  for (int t : op.in)
    in.push_back(shapes[static_cast<std::size_t>(t)]);
  std::vector<Schedule> all = schedules(in, f.maps.back(), d);
  for (auto s = all.rbegin(); s != all.rend(); ++s) {
    KernelGraph g = f.graph;
    BlockGraph& b = g.blocks[static_cast<std::size_t>(op.block)];
    b.grid = s->grid;
    b.forloop = s->forloop;
    if (check_graph(g, &d).empty() && output_shapes(g, outputs_of(f.graph)))
      return g;
  }
  return f.graph;
}

// The tier-1 test: the program evaluated at full shape (seconds for gated MLP), built on its
// own thread while the generator runs when there is more than one worker.
class Tier1Test {
 public:
  Tier1Test(const KernelGraph& reference, std::uint64_t seed, bool wanted, bool own_thread) {
    auto build = [this, &reference, seed] {
      try {
        test_ = std::make_unique<FieldTest>(reference, seed);
      } catch (...) {
        failed_ = std::current_exception();
      }
    };
    if (wanted && own_thread)
      builder_ = std::jthread(build);
    else if (wanted)
      build();
  }

  /// The test (null when not wanted), once built.
  const FieldTest* get() {
    if (builder_.joinable())
      builder_.join();
    if (failed_)
      std::rethrow_exception(failed_);
    return test_.get();
  }

 private:
  std::unique_ptr<FieldTest> test_;
  std::exception_ptr failed_;
  std::jthread builder_;  // last: joined before the others are destroyed
};

std::vector<BranchResult> run_branches(const Enumerator& en, const SuperoptimizeOptions& o) {
  std::vector<WorkItem> items = en.work_items();
  std::vector<BranchResult> results(items.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  auto work = [&] {
    for (std::size_t i = next++; i < items.size(); i = next++) {
      BranchResult& r = results[i];
      if (std::chrono::steady_clock::now() > en.limits().deadline) {
        r.stats.timed_out = true;  // not started: the search is out of time
        continue;
      }
      en.run(
          items[i], [&](const Found& f) { r.found.push_back(f); }, r.stats);
      if (o.progress)
        o.progress(++done, items.size());
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, o.threads); ++t)
    pool.emplace_back(work);
  work();
  for (std::thread& t : pool)
    t.join();
  return results;
}

// Every schedule of a found graph's graph-defined op (the first; others keep theirs).
std::vector<KernelGraph> variants(const Found& f, const devices::DeviceSpec& d) {
  std::vector<KernelGraph> out;
  std::string why;
  std::vector<Shape> shapes = kernel_shapes(f.graph, &why);
  for (std::size_t i = 0; i < f.graph.ops.size(); ++i) {
    const KernelOp& op = f.graph.ops[i];
    if (op.kind != OpKind::kCustom)
      continue;
    std::vector<Shape> in;
    for (int t : op.in)
      in.push_back(shapes[static_cast<std::size_t>(t)]);
    std::vector<Shape> want = outputs_of(f.graph);
    for (const Schedule& s : schedules(in, f.maps.front(), d)) {
      KernelGraph g = f.graph;
      BlockGraph& b = g.blocks[static_cast<std::size_t>(op.block)];
      b.grid = s.grid;
      b.forloop = s.forloop;
      if (check_graph(g, &d).empty() && output_shapes(g, want))
        out.push_back(std::move(g));
    }
    return out;
  }
  return {f.graph};
}

}  // namespace

std::string verify_full(const KernelGraph& reference,
                        const KernelGraph& candidate,
                        std::uint64_t seed,
                        int tests,
                        double tolerance,
                        double* float_error,
                        int threads) {
  // Jobs 0..tests-1: the field tests; job `tests`: the float check. Independent, so they run
  // on `threads` threads; the first failure in job order is reported, whatever the threads.
  int fields = field_testable(reference) ? tests : 0;
  std::vector<std::string> why(static_cast<std::size_t>(fields) + 1);
  FloatCheck f;
  std::atomic<int> next{0};
  auto work = [&] {
    std::vector<Tensor<FieldValue>> spare;  // this thread's last test's inputs, reused
    for (int j = next++; j <= fields; j = next++) {
      if (j == fields) {
        f = float_check(reference, candidate, mix(seed, 7), tolerance);
        if (!f.pass)
          why[static_cast<std::size_t>(j)] =
              "float error " + std::to_string(f.error) + " above " + std::to_string(tolerance);
        continue;
      }
      FieldTest test(reference, mix(seed, static_cast<std::uint64_t>(j) + 100), std::move(spare));
      if (!test.check_full(candidate))
        why[static_cast<std::size_t>(j)] = "finite-field test " + std::to_string(j + 1) + " of " +
                                           std::to_string(tests) + " differs";
      spare = test.take_inputs();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min(std::max(1, threads), fields + 1); ++t)
    pool.emplace_back(work);
  work();
  for (std::thread& t : pool)
    t.join();
  if (float_error != nullptr)
    *float_error = f.error;
  for (const std::string& w : why) {
    if (!w.empty())
      return w;
  }
  return {};
}

SuperoptimizeResult superoptimize(const KernelGraph& reference,
                                  const devices::DeviceSpec& device,
                                  const costmodel::GpuEfficiency& calibrated,
                                  const SuperoptimizeOptions& o) {
  // A program's kernels are launched back to back by its generated host function and, in
  // a decode step, replayed from a CUDA graph, as bench/check_programs.py times them: each
  // pays the graph's launch gap, not a lone framework launch (4.3 us on the H100, most of it
  // PyTorch's own dispatch), which would price a program's library kernels at twice their
  // measured time and choose fused µGraphs that run slower (GQA decode at 1024 keys: 27.5 us
  // fused against 19.5 us as library kernels).
  costmodel::GpuEfficiency eff = calibrated;
  eff.in_graph = true;
  SuperoptimizeResult r;
  r.reference = {reference, price_ugraph(reference, device, eff)};
  r.stats.field_tested = field_testable(reference);
  SearchLimits limits = o.limits;
  if (o.time_limit_s > 0) {
    limits.deadline = std::chrono::steady_clock::now() +
                      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(o.time_limit_s));
  }
  Enumerator en(reference, limits, device);
  Tier1Test sampler(reference, mix(o.seed, 1), r.stats.field_tested, o.threads > 1);
  std::vector<BranchResult> branches = run_branches(en, o);
  // Every complete graph is priced at every schedule before any is tested: the tests (whole
  // kernel tensors over two fields, at the program's full shapes) cost far more than the
  // generation, so they run lazily, in cost order, until a finalist passes.
  std::vector<const Found*> found;
  std::vector<Ranked> ranked;
  std::vector<std::size_t> origin;  // ranked -> found
  for (const BranchResult& b : branches) {
    ++r.stats.branches;
    r.stats.generated += b.stats.generated;
    r.stats.pruned += b.stats.pruned;
    r.stats.candidates += b.stats.complete;
    r.stats.truncated = r.stats.truncated || b.stats.truncated;
    r.stats.timed_out = r.stats.timed_out || b.stats.timed_out;
    for (const Found& f : b.found) {
      found.push_back(&f);
      for (KernelGraph& g : variants(f, device)) {
        UgraphCost c = price_ugraph(g, device, eff);
        ranked.push_back({std::move(g), c});
        origin.push_back(found.size() - 1);
      }
    }
  }
  r.stats.priced = static_cast<std::int64_t>(ranked.size());
  const FieldTest* test = sampler.get();
  std::vector<std::size_t> order(ranked.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return ranked[a].cost.time.value < ranked[b].cost.time.value;  // ties keep generation order
  });
  // Tier 1 per found graph (once, on sampled blocks of its cheapest-to-sample schedule), then
  // tier 1 and tier 2 on the schedule being chosen.
  std::vector<int> tier1(found.size(), -1);  // -1 not tested yet, 0 failed, 1 passed
  r.best = r.reference;
  r.best_is_reference = true;
  for (std::size_t rank = 0; rank < order.size() && r.stats.finalists_checked < o.finalists;
       ++rank) {
    if (std::chrono::steady_clock::now() > limits.deadline) {
      r.stats.timed_out = true;
      break;
    }
    std::size_t i = order[rank];
    if (ranked[i].cost.time.value >= r.reference.cost.time.value)
      break;
    std::size_t fi = origin[i];
    if (tier1[fi] < 0) {
      bool pass = test == nullptr || test->check_sampled(sampling_schedule(*found[fi], device),
                                                         mix(o.seed, mix(fi, 0)), o.sampled_blocks);
      tier1[fi] = pass ? 1 : 0;
      ++(pass ? r.stats.verified : r.stats.rejected);
    }
    if (tier1[fi] == 0)
      continue;
    ++r.stats.finalists_checked;
    bool sampled = test == nullptr ||
                   test->check_sampled(ranked[i].graph, mix(o.seed, 9 + i), o.sampled_blocks);
    double err = 0;
    if (sampled && verify_full(reference, ranked[i].graph, mix(o.seed, 11 + i), o.full_tests,
                               o.float_tolerance, &err, o.threads)
                       .empty()) {
      r.best = ranked[i];
      r.best_is_reference = false;
      r.stats.float_error = err;
      break;
    }
    ++r.stats.finalists_rejected;
  }
  if (r.best_is_reference)
    verify_full(reference, reference, o.seed, 0, o.float_tolerance, &r.stats.float_error);
  return r;
}

}  // namespace yirage::codegen
