#include "planner/step_program.h"

#include "planner/node_groups.h"
#include "planner/train_stage.h"
#include "planner/workload/model_size.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>

namespace yirage::planner {
namespace {

using costmodel::Collective;
using costmodel::SimProgram;
using devices::Seconds;

double f(std::int64_t v) {
  return static_cast<double>(v);
}

// Megatron-LM's rank order: tp fastest, then cp, dp and pp; `map` (when given) places the
// context's ranks among the whole cluster's.
struct Ranks {
  Layout l;
  const std::vector<std::int64_t>* map = nullptr;

  std::int64_t rank(std::int64_t t, std::int64_t c, std::int64_t d, std::int64_t p) const {
    std::int64_t local = t + l.tp * (c + l.cp * (d + l.dp * p));
    return map ? (*map)[static_cast<std::size_t>(local)] : local;
  }
};

// What one stage does per micro-batch, rank by rank.
struct StageWork {
  StageTimes times;
  double tp_bytes_forward = 0;  // the all-reduce volume of the layers' TP collectives
  double tp_bytes_backward = 0;
  double cp_bytes_forward = 0;  // the keys and values gathered around the cp ring
  double cp_bytes_backward = 0;
  double ep_time = 0;     // expert all-to-alls, kept as time (see the notes)
  double grad_bytes = 0;  // this stage's gradients per device
};

StageWork stage_work(const TrainContext& cx, const Layout& l, const StageSpan& span) {
  const devices::ModelSpec& m = cx.task.model;
  DeviceContext dcx = device_context(cx, l);
  StageWork w;
  w.times = stage_times(cx, l, span, dcx, 0, 0);
  double b = devices::dtype_bytes(cx.task.precision);
  double tokens = f(l.micro_batch * cx.task.sequence_length / l.cp);
  if (l.tp > 1) {
    // Per layer, two all-reduces (or their reduce-scatter + all-gather halves with sequence
    // parallelism) forward and two backward; full recomputation repeats the forward's.
    double per_layer = 2 * tokens * f(m.hidden) * b;
    w.tp_bytes_forward = f(span.layers) * per_layer;
    w.tp_bytes_backward = f(span.layers) * per_layer * (l.recompute == Recompute::kFull ? 2 : 1);
  }
  if (l.cp > 1) {
    double kv = 2 * f(l.micro_batch * cx.task.sequence_length) *
                f(std::max<std::int64_t>(1, m.kv_heads / l.tp) * m.head_dim) * b;
    w.cp_bytes_forward = f(span.layers) * kv;
    w.cp_bytes_backward = f(span.layers) * 2 * kv;
  }
  if (l.ep > 1) {
    // The analytical tp part less the TP collectives' own share is the all-to-all time.
    Layout no_ep = l;
    no_ep.ep = 1;
    w.ep_time = w.times.tp - stage_times(cx, no_ep, span, dcx, 0, 0).tp;
  }
  double params = stage_parameters(m, span) - stage_routed_parameters(m, span) +
                  stage_routed_parameters(m, span) / f(l.ep);
  w.grad_bytes = params / f(l.tp) * std::max(2.0, b);
  return w;
}

// One stage's 1F1B order: warm-up forwards, then one forward and one backward in turn, then
// the remaining backwards. Entries are micro-batch numbers, negative (-1 - i) for backward.
std::deque<std::int64_t> one_f_one_b(std::int64_t stage, std::int64_t stages, std::int64_t m) {
  std::deque<std::int64_t> order;
  std::int64_t warm = std::min(stages - stage - 1, m);
  for (std::int64_t i = 0; i < warm; ++i)
    order.push_back(i);
  for (std::int64_t i = 0; i + warm < m; ++i) {
    order.push_back(warm + i);
    order.push_back(-1 - i);
  }
  for (std::int64_t i = m - warm; i < m; ++i)
    order.push_back(-1 - i);
  return order;
}

// One stage of the pipeline as the builder sees it: its work per micro-batch, its tensor
// parallelism and its ranks, indexed (d x cp + c) x tp + t.
struct StageSpec {
  StageWork work;
  std::int64_t tp = 1;
  std::vector<std::int64_t> ranks;
};

struct PipelineShape {
  std::int64_t dp = 1;
  std::int64_t cp = 1;
  std::int64_t micro_batches = 1;
  int zero = 0;
  double activation = 0;  // bytes of one micro-batch's activations on one (dp, cp) slice
  // Where the ranks sit; when given, gradient syncs over more than kExactRing ranks replay
  // on a representative ring (representative_ring).
  const std::vector<costmodel::SimRankPlace>* places = nullptr;
};

// A ring of n ranks moves 2(n - 1) steps of bytes / n (all-reduce); over a thousand ranks
// that is two million flows, too many to simulate in seconds. Such a ring replays on the
// ranks of a few whole nodes spread evenly over it (every node of the ring keeps the same
// traffic pattern inside and out), its bytes scaled by (n - 1) / n x n' / (n' - 1) so that
// each link of the smaller ring carries what it would in the whole one; the other ranks'
// links stay idle in the replay, and the per-step latencies are those of n' ranks.
constexpr std::size_t kExactRing = 64;

struct Representative {
  std::vector<std::size_t> positions;  // into the ring
  double scale = 1;
  std::size_t nodes = 0;
  std::size_t of_nodes = 0;
};

Representative representative_ring(const std::vector<std::int64_t>& ring,
                                   const std::vector<costmodel::SimRankPlace>& places) {
  std::vector<std::int64_t> nodes;  // in order of first appearance
  std::map<std::int64_t, std::vector<std::size_t>> on_node;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    std::int64_t node = places[static_cast<std::size_t>(ring[i])].node;
    if (on_node[node].empty())
      nodes.push_back(node);
    on_node[node].push_back(i);
  }
  std::size_t per_node = 1;
  for (const auto& [node, pos] : on_node)
    per_node = std::max(per_node, pos.size());
  std::size_t keep = std::min(nodes.size(), std::max<std::size_t>(2, kExactRing / per_node));
  Representative r;
  r.nodes = keep;
  r.of_nodes = nodes.size();
  for (std::size_t k = 0; k < keep; ++k) {
    const std::vector<std::size_t>& pos = on_node[nodes[k * nodes.size() / keep]];
    r.positions.insert(r.positions.end(), pos.begin(), pos.end());
  }
  std::sort(r.positions.begin(), r.positions.end());
  double n = static_cast<double>(ring.size());
  double m = static_cast<double>(r.positions.size());
  r.scale = m > 1 ? (n - 1) / n * m / (m - 1) : 1;
  return r;
}

// 1F1B over `stages`: every micro-batch's forward and backward on every rank (with its TP
// and CP collectives), the sends between neighbouring stages (split over the smaller tensor-
// parallel group when two stages' differ), the gradient sync, and a "step end" per rank.
void build_1f1b(const std::vector<StageSpec>& stages, const PipelineShape& sh, StepProgram& out) {
  SimProgram& p = out.program;
  auto pp = static_cast<std::int64_t>(stages.size());
  auto at = [](std::int64_t v) {
    return static_cast<std::size_t>(v);
  };
  // The sends a stage's forward (or backward) of micro-batch i waits for, key (stage, i,
  // backward), indexed (d x cp + c) x width + t, width the smaller tp of the two stages.
  std::map<std::tuple<std::int64_t, std::int64_t, bool>, std::vector<std::size_t>> sent;
  std::vector<std::deque<std::int64_t>> order;
  for (std::int64_t s = 0; s < pp; ++s)
    order.push_back(one_f_one_b(s, pp, sh.micro_batches));
  std::vector<std::vector<std::size_t>> last_forward(at(pp));
  // Each round adds, for every stage, its next operation whose input has arrived; 1F1B
  // never deadlocks, so every round adds at least one.
  for (bool left = true; left;) {
    left = false;
    for (std::int64_t s = 0; s < pp; ++s) {
      if (order[at(s)].empty())
        continue;
      left = true;
      std::int64_t op = order[at(s)].front();
      bool backward = op < 0;
      std::int64_t i = backward ? -1 - op : op;
      std::int64_t from = backward ? s + 1 : s - 1;
      bool needs_input = from >= 0 && from < pp;
      auto input = sent.find({s, i, backward});
      if (needs_input && input == sent.end())
        continue;
      order[at(s)].pop_front();
      const StageSpec& st = stages[at(s)];
      const StageWork& w = st.work;
      std::int64_t width_in = needs_input ? std::min(st.tp, stages[at(from)].tp) : 1;
      std::string mb = std::to_string(i);
      double seconds = backward ? w.times.compute - w.times.forward : w.times.forward;
      double tp_bytes = backward ? w.tp_bytes_backward : w.tp_bytes_forward;
      double cp_bytes = backward ? w.cp_bytes_backward : w.cp_bytes_forward;
      std::vector<std::size_t> ends;
      for (std::int64_t d = 0; d < sh.dp; ++d) {
        for (std::int64_t c = 0; c < sh.cp; ++c) {
          std::vector<std::int64_t> tp_ranks;
          for (std::int64_t t = 0; t < st.tp; ++t) {
            std::vector<std::size_t> after;
            if (needs_input)
              after.push_back(input->second[at((d * sh.cp + c) * width_in + t % width_in)]);
            std::int64_t rank = st.ranks[at((d * sh.cp + c) * st.tp + t)];
            tp_ranks.push_back(rank);
            ends.push_back(p.compute(rank, (backward ? "bwd mb" : "fwd mb") + mb,
                                     Seconds{seconds + w.ep_time / 2}, after));
          }
          if (tp_bytes > 0) {
            std::size_t id =
                p.collective(tp_ranks, Collective::kAllReduce, tp_bytes,
                             "tp " + std::string(backward ? "bwd" : "fwd") + " mb" + mb, "compute");
            for (std::size_t e = ends.size() - tp_ranks.size(); e < ends.size(); ++e)
              ends[e] = id;
          }
        }
        if (cp_bytes > 0) {
          for (std::int64_t t = 0; t < st.tp; ++t) {
            std::vector<std::int64_t> ring;
            for (std::int64_t c = 0; c < sh.cp; ++c)
              ring.push_back(st.ranks[at((d * sh.cp + c) * st.tp + t)]);
            std::size_t id =
                p.collective(ring, Collective::kAllGather, cp_bytes, "cp kv mb" + mb, "cp");
            for (std::int64_t c = 0; c < sh.cp; ++c)
              ends[at((d * sh.cp + c) * st.tp + t)] = id;
          }
        }
      }
      if (!backward)
        last_forward[at(s)] = ends;
      // Activations forward to the next stage, their gradients back to the previous one.
      std::int64_t to = backward ? s - 1 : s + 1;
      if (to >= 0 && to < pp) {
        const StageSpec& next = stages[at(to)];
        std::int64_t width = std::min(st.tp, next.tp);
        std::vector<std::size_t> sends;
        for (std::int64_t d = 0; d < sh.dp; ++d) {
          for (std::int64_t c = 0; c < sh.cp; ++c) {
            for (std::int64_t t = 0; t < width; ++t) {
              sends.push_back(p.send(
                  st.ranks[at((d * sh.cp + c) * st.tp + t)],
                  next.ranks[at((d * sh.cp + c) * next.tp + t)], sh.activation / f(width),
                  (backward ? "grad mb" : "act mb") + mb, {ends[at((d * sh.cp + c) * st.tp + t)]}));
            }
          }
        }
        sent[{to, i, backward}] = sends;
      }
    }
  }
  // Gradient synchronisation over the dp x cp ranks of each (stage, tp rank), overlapping
  // the last micro-batch's backward as the bucketed all-reduce of the estimate does.
  std::vector<std::vector<std::size_t>> sync_of(at(pp));  // per stage, per (d, c, t)
  for (std::int64_t s = 0; s < pp; ++s) {
    const StageSpec& st = stages[at(s)];
    sync_of[at(s)].assign(st.ranks.size(), 0);
    if (sh.dp * sh.cp <= 1)
      continue;
    for (std::int64_t t = 0; t < st.tp; ++t) {
      std::vector<std::int64_t> ranks;
      std::vector<std::size_t> after;
      for (std::int64_t d = 0; d < sh.dp; ++d) {
        for (std::int64_t c = 0; c < sh.cp; ++c) {
          ranks.push_back(st.ranks[at((d * sh.cp + c) * st.tp + t)]);
          after.push_back(last_forward[at(s)][at((d * sh.cp + c) * st.tp + t)]);
        }
      }
      std::vector<std::size_t> keep(ranks.size());
      std::iota(keep.begin(), keep.end(), 0);
      double bytes = st.work.grad_bytes;
      if (ranks.size() > kExactRing && sh.places != nullptr) {
        Representative rep = representative_ring(ranks, *sh.places);
        keep = rep.positions;
        bytes *= rep.scale;
        std::string note = "the gradient sync over " + std::to_string(ranks.size()) +
                           " ranks is replayed on a representative ring of " +
                           std::to_string(keep.size()) + " ranks on " + std::to_string(rep.nodes) +
                           " of its " + std::to_string(rep.of_nodes) +
                           " nodes, its bytes scaled so each link carries the whole ring's "
                           "load (aggregated: the other ranks' links stay idle)";
        if (std::find(out.notes.begin(), out.notes.end(), note) == out.notes.end())
          out.notes.push_back(note);
      }
      std::vector<std::int64_t> kept_ranks;
      std::vector<std::size_t> kept_after;
      for (std::size_t k : keep) {
        kept_ranks.push_back(ranks[k]);
        kept_after.push_back(after[k]);
      }
      std::size_t id = p.collective(
          kept_ranks, sh.zero >= 3 ? Collective::kReduceScatter : Collective::kAllReduce, bytes,
          "dp grad sync", "dp", kept_after);
      for (std::size_t k : keep) {
        std::int64_t d = static_cast<std::int64_t>(k) / sh.cp;
        std::int64_t c = static_cast<std::int64_t>(k) % sh.cp;
        sync_of[at(s)][at((d * sh.cp + c) * st.tp + t)] = id + 1;  // 0: none
      }
    }
  }
  // The end of the step on every rank: after its last computation (same stream) and its
  // gradient sync.
  for (std::int64_t s = 0; s < pp; ++s) {
    const StageSpec& st = stages[at(s)];
    for (std::size_t k = 0; k < st.ranks.size(); ++k) {
      std::vector<std::size_t> after;
      if (sync_of[at(s)][k] > 0)
        after.push_back(sync_of[at(s)][k] - 1);
      out.ends.push_back(p.compute(st.ranks[k], "step end", Seconds{0}, after));
    }
  }
}

void add_notes(const Layout& l, StepProgram& out) {
  if (l.tp > 1 || l.cp > 1) {
    out.notes.push_back(
        "the tensor- and context-parallel collectives of a stage's layers are replayed as one "
        "per micro-batch and direction (their per-layer latencies are not)");
  }
  if (l.ep > 1)
    out.notes.push_back("expert all-to-alls are replayed as their analytical time on the device");
  if (l.zero >= 3)
    out.notes.push_back("ZeRO-3's weight gathers are not replayed");
  out.notes.push_back("the optimizer step is not replayed (the estimate's is added)");
}

}  // namespace

StepProgramResult training_step_program(const TrainContext& cx,
                                        const Layout& l,
                                        const std::vector<std::int64_t>* ranks) {
  if (l.vpp > 1)
    return {std::nullopt, "interleaved pipelines (vpp > 1) are not simulated yet"};
  if (cx.cluster.groups.size() != 1)
    return {std::nullopt, "pipelines across node groups are not simulated yet"};
  Ranks r{l, ranks};
  std::vector<StageSpec> stages;
  for (std::int64_t s = 0; s < l.pp; ++s) {
    StageSpec st{stage_work(cx, l, even_span(cx.task.model, l, s)), l.tp, {}};
    for (std::int64_t d = 0; d < l.dp; ++d) {
      for (std::int64_t c = 0; c < l.cp; ++c) {
        for (std::int64_t t = 0; t < l.tp; ++t)
          st.ranks.push_back(r.rank(t, c, d, s));
      }
    }
    stages.push_back(std::move(st));
  }
  std::vector<costmodel::SimRankPlace> places = costmodel::sim_rank_places(cx.cluster);
  PipelineShape sh{l.dp,
                   l.cp,
                   cx.task.global_batch / (l.dp * l.micro_batch),
                   l.zero,
                   f(l.micro_batch * cx.task.sequence_length / l.cp * cx.task.model.hidden) *
                       devices::dtype_bytes(cx.task.precision),
                   ranks == nullptr ? &places : nullptr};
  StepProgram out;
  build_1f1b(stages, sh, out);
  add_notes(l, out);
  return {out, ""};
}

StepProgramResult hetero_data_parallel_program(const devices::ClusterSpec& cluster,
                                               const devices::TaskSpec& task,
                                               const costmodel::CalibrationSet& calibrations,
                                               const HeteroPlan& plan) {
  StepProgram out;
  std::vector<std::vector<std::int64_t>> group_ranks;
  std::vector<std::vector<std::size_t>> group_ends;
  for (const GroupShare& share : plan.groups) {
    std::size_t index = 0;
    while (cluster.groups[index].name != share.group)
      ++index;
    const devices::NodeGroup& g = cluster.groups[index];
    std::vector<std::int64_t> ranks;
    for (std::int64_t n = 0; n < g.nodes; ++n) {
      for (std::int64_t d = 0; d < g.devices_per_node; ++d)
        ranks.push_back(costmodel::sim_rank_of(cluster, index, n, d));
    }
    devices::ClusterSpec sub = sub_cluster(cluster, {&g});
    devices::TaskSpec t = task;
    t.global_batch = share.batch;
    TrainContext cx{sub, t, calibrations};
    StepProgramResult r = training_step_program(cx, share.plan.layout, &ranks);
    if (!r.step)
      return {std::nullopt, "group '" + share.group + "': " + r.why};
    // Append the group's tasks, their dependencies shifted past the tasks already there.
    std::size_t offset = out.program.tasks.size();
    for (costmodel::SimTask task_copy : r.step->program.tasks) {
      for (std::size_t& a : task_copy.after)
        a += offset;
      out.program.add(std::move(task_copy));
    }
    std::vector<std::size_t> ends;
    for (std::size_t e : r.step->ends)
      ends.push_back(e + offset);
    group_ranks.push_back(ranks);
    group_ends.push_back(ends);
    for (const std::string& n : r.step->notes) {
      if (std::find(out.notes.begin(), out.notes.end(), n) == out.notes.end())
        out.notes.push_back(n);
    }
  }
  // The groups' gradients, all-reduced across the groups when the slowest has finished: one
  // ring per matching shard (device i of every group), as many as the smallest group has
  // devices, each carrying its share of the model.
  std::size_t rings = group_ranks.front().size();
  for (const auto& g : group_ranks)
    rings = std::min(rings, g.size());
  std::vector<std::size_t> all_ends;
  for (const auto& e : group_ends)
    all_ends.insert(all_ends.end(), e.begin(), e.end());
  double bytes = count_parameters(task.model).total * 2 / static_cast<double>(rings);
  for (std::size_t i = 0; i < rings && group_ranks.size() > 1; ++i) {
    std::vector<std::int64_t> ring;
    for (const auto& g : group_ranks)
      ring.push_back(g[i]);
    out.program.collective(ring, Collective::kAllReduce, bytes, "cross-group grad all_reduce", "dp",
                           all_ends);
  }
  return {out, ""};
}

StepProgramResult hetero_pipeline_program(const devices::ClusterSpec& cluster,
                                          const devices::TaskSpec& task,
                                          const costmodel::CalibrationSet& calibrations,
                                          const HeteroPipelinePlan& plan) {
  std::int64_t stages = 0;
  for (const PipelinePart& part : plan.parts)
    stages += part.stages;
  std::vector<StageSpec> specs;
  std::int64_t index = 0;
  std::int64_t layer = 0;
  for (const PipelinePart& part : plan.parts) {
    std::size_t gi = 0;
    while (cluster.groups[gi].name != part.group)
      ++gi;
    const devices::NodeGroup& g = cluster.groups[gi];
    devices::ClusterSpec sub = sub_cluster(cluster, {&g});
    TrainContext cx{sub, task, calibrations};
    Layout l{plan.dp, part.tp, part.stages, plan.micro_batch, plan.recompute, plan.zero};
    for (std::int64_t j = 0; j < part.stages; ++j, ++index) {
      std::int64_t n = part.layers / part.stages + (j < part.layers % part.stages ? 1 : 0);
      StageSpec st{stage_work(cx, l, StageSpan{index, stages, layer, n}), part.tp, {}};
      layer += n;
      // Megatron-LM's order inside the group: tp fastest, then dp, then the group's stages.
      for (std::int64_t d = 0; d < plan.dp; ++d) {
        for (std::int64_t t = 0; t < part.tp; ++t) {
          std::int64_t local = t + part.tp * (d + plan.dp * j);
          st.ranks.push_back(costmodel::sim_rank_of(cluster, gi, local / g.devices_per_node,
                                                    local % g.devices_per_node));
        }
      }
      specs.push_back(std::move(st));
    }
  }
  std::vector<costmodel::SimRankPlace> places = costmodel::sim_rank_places(cluster);
  PipelineShape sh{plan.dp,
                   1,
                   plan.micro_batches,
                   plan.zero,
                   f(plan.micro_batch * task.sequence_length * task.model.hidden) *
                       devices::dtype_bytes(task.precision),
                   &places};
  StepProgram out;
  build_1f1b(specs, sh, out);
  Layout widest{plan.dp, 1, 1, plan.micro_batch, plan.recompute, plan.zero};
  for (const PipelinePart& part : plan.parts)
    widest.tp = std::max(widest.tp, part.tp);
  add_notes(widest, out);
  return {out, ""};
}

}  // namespace yirage::planner
