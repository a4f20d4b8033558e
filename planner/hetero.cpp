#include "planner/hetero.h"

#include "costmodel/collective.h"
#include "costmodel/validation.h"
#include "planner/node_groups.h"
#include "planner/train_stage.h"
#include "planner/workload/model_size.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace yirage::planner {
namespace {

using devices::ClusterSpec;
using devices::NodeGroup;

std::optional<PlanEstimate> best_plan(const ClusterSpec& c,
                                      devices::TaskSpec task,
                                      std::int64_t batch,
                                      const costmodel::CalibrationSet& cal,
                                      LayerCostCache* cache) {
  task.global_batch = batch;
  TrainContext cx{c, task, cal};
  cx.layer_cache = cache;
  SearchResult r = search_training(cx);
  if (r.plans.empty())
    return std::nullopt;
  return r.plans.front();
}

// Splits `total` sequences in proportion to `weights`, every share at least 1, the
// remainder going to the largest fractional parts (ties to the earlier group).
std::vector<std::int64_t> split(std::int64_t total, const std::vector<double>& weights) {
  double sum = 0;
  for (double w : weights)
    sum += w;
  std::vector<std::int64_t> out;
  std::vector<std::pair<double, std::size_t>> rest;
  std::int64_t given = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    double exact = static_cast<double>(total) * weights[i] / sum;
    auto share = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(exact)));
    out.push_back(share);
    given += share;
    rest.emplace_back(exact - std::floor(exact), i);
  }
  std::stable_sort(rest.begin(), rest.end(), [](auto a, auto b) { return a.first > b.first; });
  for (std::size_t k = 0; given < total; ++k, ++given)
    out[rest[k % rest.size()].second]++;
  for (std::size_t k = out.size(); given > total && k-- > 0;) {
    if (out[k] > 1) {
      out[k]--;
      given--;
    }
  }
  return out;
}

double cross_group_sync(const ClusterSpec& c,
                        const devices::TaskSpec& task,
                        const costmodel::CalibrationSet& cal,
                        std::size_t groups) {
  if (groups < 2)
    return 0;
  costmodel::CommGroupResult g =
      costmodel::make_comm_group(c, static_cast<std::int64_t>(groups), 1);
  if (!g.group)
    return 0;
  costmodel::apply_calibration(*g.group, cal, costmodel::Launch::kEager);
  g.group->op_issue_s.fill(0);  // eager calls' device time: the step prices their issue
  // Each group's gradient is spread over its devices; matching shards of the groups are
  // all-reduced over as many rings in parallel as the smallest group has devices (one NIC
  // each). Fully exposed: it starts when the slowest group has finished.
  std::int64_t rings = c.groups.front().devices();
  for (const NodeGroup& ng : c.groups)
    rings = std::min(rings, ng.devices());
  double bytes = count_parameters(task.model).total * 2 / static_cast<double>(rings);
  return costmodel::estimate_collective(*g.group, costmodel::Collective::kAllReduce, bytes)
      .latency()
      .value;
}

}  // namespace

namespace {

HeteroResult data_parallel_across(const ClusterSpec& cluster,
                                  const devices::TaskSpec& task,
                                  const costmodel::CalibrationSet& cal) {
  std::vector<const NodeGroup*> groups = canonical_groups(cluster);
  if (task.global_batch < static_cast<std::int64_t>(groups.size())) {
    return {std::nullopt, "the global batch is smaller than the number of node groups", {}, {}};
  }
  // Start from shares proportional to peak compute, then rebalance on the estimated step
  // times so that the groups finish together. Shares are whole multiples of a unit (1, 2,
  // 4, ... sequences dividing the batch): a share of 175 sequences leaves a group of 16
  // devices no data parallelism, one of 176 does; every unit is tried and the best kept.
  std::vector<double> peaks;
  for (const NodeGroup* g : groups) {
    const devices::DeviceSpec& d = cluster.device(*g);
    peaks.push_back(static_cast<double>(g->devices()) *
                    costmodel::matrix_peak(d, task.precision).value);
  }
  std::vector<GroupShare> best;
  double best_step = 0;
  std::string why;
  std::vector<LayerCostCache> caches(groups.size());  // the batch changes, the layers do not
  auto n = static_cast<std::int64_t>(groups.size());
  for (std::int64_t unit = 1; unit * n <= task.global_batch && task.global_batch % unit == 0;
       unit *= 2) {
    std::vector<double> weights = peaks;
    std::set<std::vector<std::int64_t>> seen;  // rebalancing that returns to a split stops
    for (int round = 0; round < 6; ++round) {
      std::vector<std::int64_t> batch = split(task.global_batch / unit, weights);
      if (!seen.insert(batch).second)
        break;
      std::vector<GroupShare> shares;
      double step = 0;
      for (std::size_t i = 0; i < groups.size() && why.empty(); ++i) {
        batch[i] *= unit;
        auto p = best_plan(sub_cluster(cluster, {groups[i]}), task, batch[i], cal, &caches[i]);
        if (!p) {
          if (best.empty()) {
            why = "node group '" + groups[i]->name + "' cannot run a share of " +
                  std::to_string(batch[i]) + " sequences";
          }
          break;
        }
        shares.push_back({groups[i]->name, groups[i]->device, groups[i]->devices(), batch[i], *p});
        weights[i] = static_cast<double>(batch[i]) / p->step.total;
        step = std::max(step, p->step.total);
      }
      if (shares.size() < groups.size())
        break;  // a group cannot carry its share at this unit
      // Layouts change in steps with the share, so rebalancing need not converge: keep the
      // best round (ties to the earlier one).
      if (best.empty() || step < best_step) {
        best = shares;
        best_step = step;
      }
    }
  }
  if (best.empty())
    return {std::nullopt, why, {}, {}};
  HeteroPlan h;
  h.groups = best;
  h.step = best_step;
  h.cross_sync = cross_group_sync(cluster, task, cal, best.size());
  h.step += h.cross_sync;
  double tokens = static_cast<double>(task.global_batch * task.sequence_length);
  h.tokens_per_s = tokens / h.step;
  double peak = 0;
  for (const NodeGroup* g : groups) {
    peak += static_cast<double>(g->devices()) *
            costmodel::matrix_peak(cluster.device(*g), task.precision).value;
  }
  h.mfu = training_flops_per_token(task.model, task.sequence_length) * tokens / (h.step * peak);
  h.note = "data parallelism across node groups with uneven batch shares";
  return {h, "", {}, {}};
}

// The bound of the pipeline search (search_hetero_pipeline): it tries every order of up to
// five node groups and every combination of the groups' tensor-parallel degrees (powers of
// two up to the devices of a node), which grows exponentially with the groups. Five groups of
// eight devices (120 orders x 4^5) or eight such groups (4^8) stay within it, and take seconds.
constexpr double kMaxPipelineCombinations = 131072;

/// The orders times the tensor-parallel combinations the pipeline search would try.
double pipeline_combinations(const ClusterSpec& cluster) {
  double n = 1;
  std::size_t groups = cluster.groups.size();
  for (std::size_t i = 2; groups <= 5 && i <= groups; ++i)
    n *= static_cast<double>(i);
  for (const NodeGroup& g : cluster.groups)
    n *= std::floor(std::log2(static_cast<double>(g.devices_per_node))) + 1;
  return n;
}

}  // namespace

HeteroResult search_hetero_training(const ClusterSpec& cluster,
                                    const devices::TaskSpec& task,
                                    const costmodel::CalibrationSet& cal) {
  HeteroResult r = data_parallel_across(cluster, task, cal);
  if (double n = pipeline_combinations(cluster); n > kMaxPipelineCombinations) {
    r.pipeline_why = "not searched: the " + std::to_string(cluster.groups.size()) +
                     " node groups give " + devices::format_number(n) +
                     " orders and tensor-parallel combinations, more than the search's limit "
                     "of " +
                     devices::format_number(kMaxPipelineCombinations, 6) +
                     "; merge node groups of the same device";
    return r;
  }
  HeteroPipelineResult p = search_hetero_pipeline(cluster, task, cal);
  r.pipeline = p.plan;
  r.pipeline_why = p.why;
  return r;
}

namespace {

// One round of inference shares: every group's best plan on its share, or why not.
std::optional<HeteroInferPlan> infer_round(const ClusterSpec& cluster,
                                           const devices::TaskSpec& task,
                                           const costmodel::CalibrationSet& cal,
                                           const std::vector<const NodeGroup*>& groups,
                                           const std::vector<double>& shares,
                                           std::string* why) {
  HeteroInferPlan h;
  h.meets_objective = true;
  bool serving = task.mode == devices::Mode::kServe;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    devices::TaskSpec t = task;
    if (serving)
      t.serve->request_rate = devices::PerSec{shares[i]};
    else
      t.global_batch = static_cast<std::int64_t>(shares[i]);
    ClusterSpec sub = sub_cluster(cluster, {groups[i]});
    InferContext ic{sub, t, cal};
    ic.serve_capacity = false;  // the groups share the offered rate
    InferSearchResult r = search_inference(ic);
    if (r.plans.empty()) {
      *why = "node group '" + groups[i]->name + "' cannot serve a share of " +
             devices::format_number(shares[i], 3) + (serving ? " requests/s" : " sequences") +
             (r.rejected.empty() ? "" : " (" + r.rejected.front().reason + ")");
      return std::nullopt;
    }
    const InferEstimate& p = r.plans.front();
    h.groups.push_back({groups[i]->name, groups[i]->device, groups[i]->devices(), shares[i], p});
    h.tokens_per_s += p.tokens_per_s;
    h.ttft = std::max(h.ttft, p.ttft);
    h.tpot = std::max(h.tpot, p.tpot);
    h.meets_objective = h.meets_objective && p.meets_objective;
  }
  return h;
}

}  // namespace

HeteroInferResult search_hetero_inference(const ClusterSpec& cluster,
                                          const devices::TaskSpec& task,
                                          const costmodel::CalibrationSet& cal) {
  if (task.mode == devices::Mode::kGenerate) {
    return {std::nullopt,
            "mode generate is planned on clusters of one device type; mixed clusters plan "
            "prefill, decode and serve"};
  }
  std::vector<const NodeGroup*> groups = canonical_groups(cluster);
  bool serving = task.mode == devices::Mode::kServe;
  bool prefill = task.mode == devices::Mode::kPrefill;
  double total = serving ? task.serve->request_rate.value : static_cast<double>(task.global_batch);
  if (!serving && task.global_batch < static_cast<std::int64_t>(groups.size())) {
    return {std::nullopt, "the batch is smaller than the number of node groups"};
  }
  // Start in proportion to the groups' HBM bandwidth (decoding reads the weights and the
  // cache every token; prefill in proportion to compute), then rebalance on the latencies
  // found so that the groups finish together; keep the best round.
  std::vector<double> weights;
  for (const NodeGroup* g : groups) {
    const devices::DeviceSpec& d = cluster.device(*g);
    double per_device =
        prefill ? costmodel::matrix_peak(d, task.precision).value : d.memory_bandwidth.value.value;
    weights.push_back(static_cast<double>(g->devices()) * per_device);
  }
  std::optional<HeteroInferPlan> best;
  std::string why;
  for (int round = 0; round < 6; ++round) {
    std::vector<double> shares;
    if (serving) {
      double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
      for (double w : weights)
        shares.push_back(total * w / sum);
    } else {
      for (std::int64_t s : split(task.global_batch, weights))
        shares.push_back(static_cast<double>(s));
    }
    std::string round_why;
    std::optional<HeteroInferPlan> h = infer_round(cluster, task, cal, groups, shares, &round_why);
    if (!h) {
      if (why.empty())
        why = round_why;
      // A group that cannot carry its share gets half of it next round.
      for (std::size_t i = 0; i < groups.size(); ++i) {
        if (round_why.find("'" + groups[i]->name + "'") != std::string::npos)
          weights[i] /= 2;
      }
      continue;
    }
    auto worse = [&](const HeteroInferPlan& a, const HeteroInferPlan& b) {
      if (a.meets_objective != b.meets_objective)
        return !a.meets_objective;
      return (prefill ? a.ttft : a.tpot) > (prefill ? b.ttft : b.tpot);
    };
    if (!best || worse(*best, *h))
      best = h;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const InferEstimate& p = h->groups[i].plan;
      double latency = prefill ? p.ttft : p.tpot;
      weights[i] = latency > 0 ? h->groups[i].share / latency : weights[i];
    }
  }
  if (!best)
    return {std::nullopt, why};
  best->note =
      "independent replicas per node group, the work split to even out their latencies (a "
      "group's latency floor can keep it above the others); "
      "pipelines spanning device types are not searched yet";
  return {best, ""};
}

}  // namespace yirage::planner
