#include "codegen/search/superoptimizer.h"

#include "codegen/verify/verifier.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

namespace yirage::codegen {
namespace {

struct BranchResult {
  std::vector<Found> verified;
  EnumStats stats;
  std::int64_t rejected = 0;
};

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::vector<BranchResult> run_branches(const Enumerator& en,
                                       const FieldTest* test,
                                       const SuperoptimizeOptions& o) {
  std::vector<WorkItem> items = en.work_items();
  std::vector<BranchResult> results(items.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  auto work = [&] {
    for (std::size_t i = next++; i < items.size(); i = next++) {
      BranchResult& r = results[i];
      std::uint64_t n = 0;
      en.run(
          items[i],
          [&](const Found& f) {
            std::uint64_t sample = mix(o.seed, mix(i, n++));
            if (test == nullptr || test->check_sampled(f.graph, sample, o.sampled_blocks))
              r.verified.push_back(f);
            else
              ++r.rejected;
          },
          r.stats);
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
    for (const Schedule& s : schedules(in, f.maps.front(), d)) {
      KernelGraph g = f.graph;
      BlockGraph& b = g.blocks[static_cast<std::size_t>(op.block)];
      b.grid = s.grid;
      b.forloop = s.forloop;
      if (check_graph(g, &d).empty())
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
                        double* float_error) {
  if (field_testable(reference)) {
    for (int t = 0; t < tests; ++t) {
      FieldTest test(reference, mix(seed, static_cast<std::uint64_t>(t) + 100));
      if (!test.check_full(candidate))
        return "finite-field test " + std::to_string(t + 1) + " of " + std::to_string(tests) +
               " differs";
    }
  }
  FloatCheck f = float_check(reference, candidate, mix(seed, 7), tolerance);
  if (float_error != nullptr)
    *float_error = f.error;
  if (!f.pass)
    return "float error " + std::to_string(f.error) + " above " + std::to_string(tolerance);
  return {};
}

SuperoptimizeResult superoptimize(const KernelGraph& reference,
                                  const devices::DeviceSpec& device,
                                  const costmodel::GpuEfficiency& eff,
                                  const SuperoptimizeOptions& o) {
  SuperoptimizeResult r;
  r.reference = {reference, price_ugraph(reference, device, eff)};
  r.stats.field_tested = field_testable(reference);
  Enumerator en(reference, o.limits, device);
  std::unique_ptr<FieldTest> test;
  if (r.stats.field_tested)
    test = std::make_unique<FieldTest>(reference, mix(o.seed, 1));
  std::vector<BranchResult> branches = run_branches(en, test.get(), o);
  std::vector<Ranked> ranked;
  for (const BranchResult& b : branches) {
    ++r.stats.branches;
    r.stats.generated += b.stats.generated;
    r.stats.pruned += b.stats.pruned;
    r.stats.candidates += b.stats.complete;
    r.stats.rejected += b.rejected;
    r.stats.verified += static_cast<std::int64_t>(b.verified.size());
    r.stats.truncated = r.stats.truncated || b.stats.truncated;
    for (const Found& f : b.verified) {
      for (KernelGraph& g : variants(f, device)) {
        UgraphCost c = price_ugraph(g, device, eff);
        ranked.push_back({std::move(g), c});
      }
    }
  }
  r.stats.priced = static_cast<std::int64_t>(ranked.size());
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    return a.cost.time.value < b.cost.time.value;  // ties keep the generation order
  });
  r.best = r.reference;
  r.best_is_reference = true;
  for (std::size_t i = 0; i < ranked.size() && r.stats.finalists_checked < o.finalists; ++i) {
    if (ranked[i].cost.time.value >= r.reference.cost.time.value)
      break;
    ++r.stats.finalists_checked;
    bool sampled = test == nullptr ||
                   test->check_sampled(ranked[i].graph, mix(o.seed, 9 + i), o.sampled_blocks);
    double err = 0;
    if (sampled && verify_full(reference, ranked[i].graph, mix(o.seed, 11 + i), o.full_tests,
                               o.float_tolerance, &err)
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
