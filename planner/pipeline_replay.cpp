#include "planner/pipeline_replay.h"

#include "planner/workload/eager_traffic.h"
#include "planner/workload/memory_floor.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <tuple>

namespace yirage::planner {
namespace {

using costmodel::Collective;
using costmodel::SimProgram;
using devices::Seconds;

double f(std::int64_t v) {
  return static_cast<double>(v);
}

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

// A collective over `ranks`, `after[k]` (when given) gating rank k; over more than
// kExactRing ranks (with places known) it replays on their representative ring, and every
// rank that waits for it waits for that. Returns its id.
std::size_t wide_collective(SimProgram& p,
                            const PipelineShape& sh,
                            std::vector<std::string>& notes,
                            const std::string& what,
                            const std::vector<std::int64_t>& ranks,
                            const std::vector<std::size_t>& after,
                            Collective op,
                            double bytes,
                            const std::string& name,
                            const std::string& stream) {
  if (ranks.size() <= kExactRing || sh.places == nullptr)
    return p.collective(ranks, op, bytes, name, stream, after);
  Representative rep = representative_ring(ranks, *sh.places);
  std::string note = what + " over " + std::to_string(ranks.size()) +
                     " ranks is replayed on a representative ring of " +
                     std::to_string(rep.positions.size()) + " ranks on " +
                     std::to_string(rep.nodes) + " of its " + std::to_string(rep.of_nodes) +
                     " nodes, its bytes scaled so each link carries the whole ring's load "
                     "(aggregated: the other ranks' links stay idle)";
  if (std::find(notes.begin(), notes.end(), note) == notes.end())
    notes.push_back(note);
  std::vector<std::int64_t> kept_ranks;
  std::vector<std::size_t> kept_after;
  for (std::size_t k : rep.positions) {
    kept_ranks.push_back(ranks[k]);
    if (!after.empty())
      kept_after.push_back(after[k]);
  }
  return p.collective(kept_ranks, op, bytes * rep.scale, name, stream, kept_after);
}

// One operation of a stage: a model chunk's forward or backward of a micro-batch.
struct PipeOp {
  std::int64_t chunk = 0;
  std::int64_t micro_batch = 0;
  bool backward = false;
};

// Stage `s`'s order (Megatron-LM's schedules): warm-up forwards, then one forward and one
// backward in turn, then the remaining backwards. Interleaved (vpp > 1), forwards run the
// micro-batches in groups of pp, chunk by chunk (backwards take the chunks in reverse), and
// the warm-up is 2 (pp - s - 1) + (vpp - 1) pp forwards (Narayanan et al. 2021, §2.2).
std::deque<PipeOp> schedule(std::int64_t s, std::int64_t pp, std::int64_t vpp, std::int64_t m) {
  std::vector<PipeOp> forwards;
  std::vector<PipeOp> backwards;
  for (std::int64_t g = 0; g < m; g += pp) {
    for (std::int64_t c = 0; c < vpp; ++c) {
      for (std::int64_t i = g; i < std::min(g + pp, m); ++i) {
        forwards.push_back({c, i, false});
        backwards.push_back({vpp - 1 - c, i, true});
      }
    }
  }
  auto total = static_cast<std::int64_t>(forwards.size());
  std::int64_t warm =
      vpp == 1 ? std::min(pp - s - 1, m) : std::min(2 * (pp - s - 1) + (vpp - 1) * pp, total);
  auto at = [](std::int64_t v) {
    return static_cast<std::size_t>(v);
  };
  std::deque<PipeOp> order;
  for (std::int64_t k = 0; k < warm; ++k)
    order.push_back(forwards[at(k)]);
  for (std::int64_t k = 0; warm + k < total; ++k) {
    order.push_back(forwards[at(warm + k)]);
    order.push_back(backwards[at(k)]);
  }
  for (std::int64_t k = total - warm; k < total; ++k)
    order.push_back(backwards[at(k)]);
  return order;
}

}  // namespace

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
    // Per MoE layer, the tokens' top-k copies go to their experts and back, all-to-all over
    // the ep group, forward and again backward (and once more when fully recomputed), as
    // stage_times prices them.
    std::int64_t dense =
        std::clamp<std::int64_t>(m.moe->dense_layers - span.first_layer, 0, span.layers);
    double per_layer = 2 * f(l.micro_batch * cx.task.sequence_length / l.cp / l.tp) *
                       f(m.moe->top_k) * f(m.hidden) * b;
    w.ep_bytes_forward = f(span.layers - dense) * per_layer;
    w.ep_bytes_backward = w.ep_bytes_forward * (l.recompute == Recompute::kFull ? 2 : 1);
  }
  double params = stage_parameters(m, span) - stage_routed_parameters(m, span) +
                  stage_routed_parameters(m, span) / f(l.ep);
  double grad = training_parameter_bytes(cx.task).gradients;
  w.grad_bytes = params / f(l.tp) * grad;
  w.zero3_bytes = params / f(l.tp) * b;
  w.pp_sync = pipeline_sync(cx, l, dcx);
  if (l.zero >= 3)
    w.reduction = Collective::kReduceScatter;
  if (cx.task.framework == devices::Framework::kMegatron && l.dp * l.cp > 1) {
    MegatronSync g = megatron_sync(cx, l, span);
    w.reduction = g.reduction;
    w.scale_s = eager_stream_time(dcx, 8 * g.local);
    w.last_bytes = g.last * grad;
    w.gather_bytes = g.gather_bytes;
    w.overlap_s = megatron_dp_overlapped(cx, l, span, w.times.backward, dcx);
  }
  return w;
}

std::string build_pipeline(const std::vector<StageSpec>& stages,
                           const PipelineShape& sh,
                           StepProgram& out) {
  SimProgram& p = out.program;
  auto pp = static_cast<std::int64_t>(stages.size());
  std::int64_t virtual_stages = pp * sh.vpp;
  double chunk_share = 1 / f(sh.vpp);  // of a stage's work per chunk, without chunks' own
  auto at = [](std::int64_t v) {
    return static_cast<std::size_t>(v);
  };
  // The sends a virtual stage's forward (or backward) of micro-batch i waits for, key
  // (virtual stage, i, backward), indexed (d x cp + c) x width + t, width the smaller tp of
  // the two stages.
  std::map<std::tuple<std::int64_t, std::int64_t, bool>, std::vector<std::size_t>> sent;
  std::vector<std::deque<PipeOp>> order;
  for (std::int64_t s = 0; s < pp; ++s)
    order.push_back(schedule(s, pp, sh.vpp, sh.micro_batches));
  std::vector<std::vector<std::size_t>> last_forward(at(pp));
  std::vector<std::vector<std::size_t>> zero_reduce(at(pp));  // per stage, per (d, c, t)
  for (std::int64_t s = 0; s < pp; ++s)
    zero_reduce[at(s)].assign(stages[at(s)].ranks.size(), 0);
  // Each round adds, for every stage, its next operation whose input has arrived; Megatron-
  // LM's schedules never deadlock, so every round adds at least one (checked).
  for (bool left = true; left;) {
    left = false;
    bool added = false;
    for (std::int64_t s = 0; s < pp; ++s) {
      if (order[at(s)].empty())
        continue;
      left = true;
      PipeOp op = order[at(s)].front();
      bool backward = op.backward;
      std::int64_t i = op.micro_batch;
      std::int64_t v = op.chunk * pp + s;
      std::int64_t from = backward ? v + 1 : v - 1;
      bool needs_input = from >= 0 && from < virtual_stages;
      auto input = sent.find({v, i, backward});
      if (needs_input && input == sent.end())
        continue;
      order[at(s)].pop_front();
      added = true;
      const StageSpec& st = stages[at(s)];
      const StageWork& w = st.chunks.empty() ? st.work : st.chunks[at(op.chunk)];
      double share = st.chunks.empty() ? chunk_share : 1;
      std::int64_t width_in = needs_input ? std::min(st.tp, stages[at(from % pp)].tp) : 1;
      std::string mb = std::to_string(i) + (sh.vpp > 1 ? " chunk" + std::to_string(op.chunk) : "");
      double seconds =
          share * (backward ? w.times.compute - w.times.forward : w.times.forward) + w.pp_sync;
      double tp_bytes = share * (backward ? w.tp_bytes_backward : w.tp_bytes_forward);
      double cp_bytes = share * (backward ? w.cp_bytes_backward : w.cp_bytes_forward);
      // ZeRO-3: the weights are gathered over the dp x cp ranks of each tp rank before the
      // forward and again before the backward, on a stream of their own: prefetched as far
      // as the previous gathers allow (the estimate's sharded_dp_exposed).
      std::vector<std::size_t> gathers;
      for (std::int64_t t = 0; sh.zero >= 3 && sh.dp * sh.cp > 1 && t < st.tp; ++t) {
        std::vector<std::int64_t> group;
        for (std::int64_t k = 0; k < sh.dp * sh.cp; ++k)
          group.push_back(st.ranks[at(k * st.tp + t)]);
        gathers.push_back(wide_collective(p, sh, out.notes, "each ZeRO-3 weight gather", group, {},
                                          Collective::kAllGather, share * w.zero3_bytes,
                                          "zero3 gather mb" + mb, "zero"));
      }
      std::vector<std::size_t> ends;
      for (std::int64_t d = 0; d < sh.dp; ++d) {
        for (std::int64_t c = 0; c < sh.cp; ++c) {
          std::vector<std::int64_t> tp_ranks;
          for (std::int64_t t = 0; t < st.tp; ++t) {
            std::vector<std::size_t> after;
            if (needs_input)
              after.push_back(input->second[at((d * sh.cp + c) * width_in + t % width_in)]);
            if (!gathers.empty())
              after.push_back(gathers[at(t)]);
            std::int64_t rank = st.ranks[at((d * sh.cp + c) * st.tp + t)];
            tp_ranks.push_back(rank);
            ends.push_back(
                p.compute(rank, (backward ? "bwd mb" : "fwd mb") + mb, Seconds{seconds}, after));
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
          // (the ring overlaps the attention: its own stream)
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
      // Expert parallelism: each group of ep consecutive data-parallel ranks (per cp and tp
      // rank) exchanges its tokens all-to-all after the micro-batch's layers.
      double ep_bytes = share * (backward ? w.ep_bytes_backward : w.ep_bytes_forward);
      for (std::int64_t k = 0; ep_bytes > 0 && k < sh.dp / sh.ep; ++k) {
        for (std::int64_t c = 0; c < sh.cp; ++c) {
          for (std::int64_t t = 0; t < st.tp; ++t) {
            std::vector<std::int64_t> group;
            std::vector<std::size_t> after;
            for (std::int64_t d = k * sh.ep; d < (k + 1) * sh.ep; ++d) {
              group.push_back(st.ranks[at((d * sh.cp + c) * st.tp + t)]);
              after.push_back(ends[at((d * sh.cp + c) * st.tp + t)]);
            }
            std::size_t id = p.collective(group, Collective::kAllToAll, ep_bytes, "ep a2a mb" + mb,
                                          "compute", after);
            for (std::int64_t d = k * sh.ep; d < (k + 1) * sh.ep; ++d)
              ends[at((d * sh.cp + c) * st.tp + t)] = id;
          }
        }
      }
      if (!backward)
        last_forward[at(s)] = ends;
      // ZeRO 2/3 shard the gradients: each backward but the last micro-batch's (the step's
      // sync below) reduce-scatters its own beside the next compute (sharded_dp_exposed).
      if (backward && sh.zero >= 2 && sh.dp * sh.cp > 1 && i + 1 < sh.micro_batches) {
        for (std::int64_t t = 0; t < st.tp; ++t) {
          std::vector<std::int64_t> group;
          std::vector<std::size_t> after;
          for (std::int64_t k = 0; k < sh.dp * sh.cp; ++k) {
            group.push_back(st.ranks[at(k * st.tp + t)]);
            after.push_back(ends[at(k * st.tp + t)]);
          }
          std::size_t id =
              wide_collective(p, sh, out.notes, "each ZeRO gradient reduce-scatter", group, after,
                              Collective::kReduceScatter, share * w.grad_bytes,
                              "zero grad reduce mb" + mb, "zero rs");
          for (std::int64_t k = 0; k < sh.dp * sh.cp; ++k)
            zero_reduce[at(s)][at(k * st.tp + t)] = id + 1;  // 0: none
        }
      }
      // Activations forward to the next stage, their gradients back to the previous one.
      std::int64_t to = backward ? v - 1 : v + 1;
      if (to >= 0 && to < virtual_stages) {
        const StageSpec& next = stages[at(to % pp)];
        std::int64_t width = std::min(st.tp, next.tp);
        std::vector<std::size_t> sends;
        // One stream per direction and pair of stages (Megatron-LM's batched isend/irecv):
        // the transfers between two stages keep their order, and those with other stages or
        // the other way do not wait for them.
        std::string stream =
            "pp " + std::to_string(s) + (backward ? "<" : ">") + std::to_string(to % pp);
        for (std::int64_t d = 0; d < sh.dp; ++d) {
          for (std::int64_t c = 0; c < sh.cp; ++c) {
            for (std::int64_t t = 0; t < width; ++t) {
              sends.push_back(p.send(st.ranks[at((d * sh.cp + c) * st.tp + t)],
                                     next.ranks[at((d * sh.cp + c) * next.tp + t)],
                                     sh.activation / f(width),
                                     (backward ? "grad mb" : "act mb") + mb,
                                     {ends[at((d * sh.cp + c) * st.tp + t)]}, stream));
            }
          }
        }
        sent[{to, i, backward}] = sends;
      }
    }
    if (left && !added)
      return "the pipeline schedule cannot proceed (every stage waits for another)";
  }
  // Gradient synchronisation over the dp x cp ranks of each (stage, tp rank), overlapping
  // the last micro-batch's backward as the bucketed reduction of the estimate does, but for
  // the last bucket; without overlap, after it (each rank's stream runs in order, so what is
  // added to a rank after its last computation follows it). The distributed optimizer's
  // gather follows the reduction.
  std::vector<std::vector<std::size_t>> sync_of(at(pp));  // per stage, per (d, c, t)
  for (std::int64_t s = 0; s < pp; ++s) {
    const StageSpec& st = stages[at(s)];
    sync_of[at(s)].assign(st.ranks.size(), 0);
    if (sh.dp * sh.cp <= 1)
      continue;
    for (std::int64_t t = 0; t < st.tp; ++t) {
      const StageWork& w = st.work;
      std::vector<std::int64_t> ranks;
      std::vector<std::size_t> after;
      for (std::int64_t d = 0; d < sh.dp; ++d) {
        for (std::int64_t c = 0; c < sh.cp; ++c) {
          std::int64_t rank = st.ranks[at((d * sh.cp + c) * st.tp + t)];
          ranks.push_back(rank);
          after.push_back(sh.dp_overlap
                              ? last_forward[at(s)][at((d * sh.cp + c) * st.tp + t)]
                              : p.compute(rank, "gradient scaling", Seconds{w.scale_s}, {}));
        }
      }
      double early = sh.dp_overlap ? w.grad_bytes - w.last_bytes : w.grad_bytes;
      std::size_t id = wide_collective(p, sh, out.notes, "the gradient sync", ranks, after,
                                       w.reduction, early, "dp grad sync", "dp");
      if (sh.dp_overlap && w.last_bytes > 0) {
        std::vector<std::size_t> ready;
        for (std::int64_t rank : ranks) {
          // The buckets reduced beside the backward slow it (GpuEfficiency::
          // megatron_dp_overlap_cost): the compute stream pays that before the scaling.
          p.compute(rank, "gradient scaling", Seconds{w.scale_s + w.overlap_s}, {});
          ready.push_back(p.compute(rank, "backward end", Seconds{0}, {id}));
        }
        id = wide_collective(p, sh, out.notes, "the gradient sync", ranks, ready, w.reduction,
                             w.last_bytes, "dp grad sync, last bucket", "dp");
      }
      if (w.gather_bytes > 0) {
        id = wide_collective(p, sh, out.notes, "the weight gather", ranks,
                             std::vector<std::size_t>(ranks.size(), id), Collective::kAllGather,
                             w.gather_bytes, "dp weight gather", "dp");
      }
      for (std::int64_t k = 0; k < sh.dp * sh.cp; ++k)
        sync_of[at(s)][at(k * st.tp + t)] = id + 1;  // 0: none
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
      if (zero_reduce[at(s)][k] > 0)
        after.push_back(zero_reduce[at(s)][k] - 1);
      out.ends.push_back(p.compute(st.ranks[k], "step end", Seconds{0}, after));
    }
  }
  return "";
}

}  // namespace yirage::planner
