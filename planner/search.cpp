#include "planner/search.h"

#include "planner/train_stage.h"

#include <algorithm>

namespace yirage::planner {

std::string unsupported_reason(const devices::ClusterSpec& c, const devices::TaskSpec& /*task*/) {
  const devices::NodeGroup& first = c.groups.front();
  for (const devices::NodeGroup& g : c.groups) {
    if (g.device != first.device || g.devices_per_node != first.devices_per_node) {
      return "planning on a heterogeneous cluster (several device types or node shapes) is "
             "not available yet in this version";
    }
  }
  return {};
}

std::vector<Layout> training_space(const TrainContext& cx) {
  std::vector<Layout> out;
  std::int64_t n = cx.cluster.total_devices();
  std::int64_t per_node = cx.cluster.groups.front().devices_per_node;
  // Context parallelism pays for itself only on long sequences: searched from 16K tokens,
  // keeping at least 2K tokens per rank (shorter sequences take it through --layout).
  std::int64_t seq = cx.task.sequence_length;
  // Optimizer offload where the nodes say what their host CPUs and memory are.
  const devices::NodeGroup& g = cx.cluster.groups.front();
  bool offload = g.host_cpu && g.host_memory && cx.cluster.device(g).host_link;
  for (std::int64_t cp = 1; cp == 1 || (seq >= 16384 && seq / cp >= 2048 && cp <= n); cp *= 2) {
    // Context parallelism cuts every sequence into 2 x cp load-balanced chunks; without it
    // (cp = 1) any sequence length runs.
    if (n % cp != 0 || (cp > 1 && seq % (2 * cp) != 0))
      continue;
    std::int64_t m = n / cp;
    // Tensor parallelism within a node, and over two nodes (its collectives then cross the
    // network, as Megatron-LM allows).
    for (std::int64_t tp = 1; tp <= 2 * per_node; tp *= 2) {
      if (tp > per_node && (tp % per_node != 0 || cx.cluster.total_nodes() < 2))
        continue;
      for (std::int64_t pp = 1; pp <= std::min(m / tp, cx.task.model.layers); ++pp) {
        if ((m / tp) % pp != 0 || m % tp != 0)
          continue;
        std::int64_t dp = m / (tp * pp);
        for (std::int64_t mb : {1, 2, 4, 8, 16}) {
          for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
            for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
              // Interleaving: every chunk count that splits a stage's layers evenly, down to
              // one layer a chunk (Megatron-LM's virtual pipeline stages).
              std::int64_t most_vpp = pp > 1 ? cx.task.model.layers / pp : 1;
              for (std::int64_t vpp = 1; vpp <= most_vpp; ++vpp) {
                if (vpp > 1 && cx.task.model.layers % (pp * vpp) != 0)
                  continue;
                // Expert parallelism for MoE models: powers of two dividing dp and the experts.
                std::int64_t experts = cx.task.model.moe ? cx.task.model.moe->experts : 1;
                for (std::int64_t ep = 1; ep <= dp && experts % ep == 0; ep *= 2) {
                  if (dp % ep == 0) {
                    out.push_back(Layout{dp, tp, pp, mb, r, zero, vpp, ep, cp});
                    if (offload) {
                      out.push_back(out.back());
                      out.back().offload = true;
                    }
                  }
                  if (experts == 1)
                    break;
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

namespace {

double objective(const TrainContext& cx, const PlanEstimate& p) {
  switch (cx.task.objective.minimize) {
    case devices::Minimize::kCost:
      return p.usd_per_step ? *p.usd_per_step : p.step.total;
    case devices::Minimize::kEnergy:
      return p.energy.value > 0 ? p.energy.value : p.step.total;
    case devices::Minimize::kTime:
      break;
  }
  return p.step.total;
}

}  // namespace

SearchResult search_training(const TrainContext& cx) {
  SearchResult r;
  r.unsupported = unsupported_reason(cx.cluster, cx.task);
  if (!r.unsupported.empty())
    return r;
  std::vector<Layout> space = training_space(cx);
  r.candidates = space.size();
  LayerCostCache cache;
  TrainContext cached = cx;
  if (!cached.layer_cache)
    cached.layer_cache = &cache;
  for (const Layout& l : space) {
    auto e = estimate_training(cached, l);
    if (auto* p = std::get_if<PlanEstimate>(&e)) {
      r.plans.push_back(std::move(*p));
    } else {
      r.rejected.push_back(std::get<Rejected>(e));
    }
  }
  std::sort(r.plans.begin(), r.plans.end(), [&](const PlanEstimate& a, const PlanEstimate& b) {
    if (a.objective_miss.empty() != b.objective_miss.empty())
      return a.objective_miss.empty();  // within the task's limits first
    double oa = objective(cx, a);
    double ob = objective(cx, b);
    if (oa != ob)
      return oa < ob;
    return a.layout.str() < b.layout.str();
  });
  return r;
}

}  // namespace yirage::planner
