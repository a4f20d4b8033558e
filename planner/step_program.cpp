#include "planner/step_program.h"

#include "planner/node_groups.h"
#include "planner/pipeline_replay.h"
#include "planner/workload/model_size.h"

#include <algorithm>

namespace yirage::planner {
namespace {

using costmodel::Collective;

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

void add_notes(const Layout& l, StepProgram& out) {
  if (l.tp > 1 || l.cp > 1 || l.ep > 1) {
    out.notes.push_back(
        "the tensor-, context- and expert-parallel collectives of a stage's layers are "
        "replayed as one per micro-batch and direction (their per-layer latencies are not)");
  }
  if (l.zero >= 3) {
    out.notes.push_back(
        "ZeRO-3's weight gathers run ahead on a stream of their own, as far as the previous "
        "gathers allow (no limit on the memory prefetching takes)");
  }
  out.notes.push_back("the optimizer step is not replayed (the estimate's is added)");
}

}  // namespace

StepProgramResult training_step_program(const TrainContext& cx,
                                        const Layout& l,
                                        const std::vector<std::int64_t>* ranks) {
  if (cx.cluster.groups.size() != 1)
    return {std::nullopt, "pipelines across node groups are not simulated yet"};
  Ranks r{l, ranks};
  std::vector<StageSpec> stages;
  for (std::int64_t s = 0; s < l.pp; ++s) {
    StageSpec st{stage_work(cx, l, even_span(cx.task.model, l, s)), l.tp, {}, {}};
    // Interleaved, virtual stage c x pp + s of pp x vpp is stage s's chunk c.
    Layout chunked = l;
    chunked.pp = l.pp * l.vpp;
    for (std::int64_t c = 0; l.vpp > 1 && c < l.vpp; ++c)
      st.chunks.push_back(stage_work(cx, l, even_span(cx.task.model, chunked, c * l.pp + s)));
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
                   l.vpp,
                   l.ep,
                   l.zero,
                   f(l.micro_batch * cx.task.sequence_length / l.cp * cx.task.model.hidden) *
                       devices::dtype_bytes(cx.task.precision),
                   ranks == nullptr ? &places : nullptr};
  sh.dp_overlap = l.dp_overlap;
  StepProgram out;
  if (std::string why = build_pipeline(stages, sh, out); !why.empty())
    return {std::nullopt, why};
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
      StageSpec st{stage_work(cx, l, StageSpan{index, stages, layer, n}), part.tp, {}, {}};
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
                   1,
                   1,
                   plan.zero,
                   f(plan.micro_batch * task.sequence_length * task.model.hidden) *
                       devices::dtype_bytes(task.precision),
                   &places};
  StepProgram out;
  if (std::string why = build_pipeline(specs, sh, out); !why.empty())
    return {std::nullopt, why};
  Layout widest{plan.dp, 1, 1, plan.micro_batch, plan.recompute, plan.zero};
  for (const PipelinePart& part : plan.parts)
    widest.tp = std::max(widest.tp, part.tp);
  add_notes(widest, out);
  return {out, ""};
}

}  // namespace yirage::planner
