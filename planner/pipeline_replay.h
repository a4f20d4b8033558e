// The pipeline of a training step as a SimProgram (internal to planner/step_program*): the
// stages' work per micro-batch, rank by rank, and the builder that lays out 1F1B (plain or
// interleaved) with the tensor- and context-parallel collectives, the sends between stages
// and the gradient sync.
#pragma once

#include "planner/step_program.h"
#include "planner/train_stage.h"

#include <cstdint>
#include <string>
#include <vector>

namespace yirage::planner {

/// What one stage does per micro-batch, rank by rank.
struct StageWork {
  StageTimes times;
  double tp_bytes_forward = 0;  // the all-reduce volume of the layers' TP collectives
  double tp_bytes_backward = 0;
  double cp_bytes_forward = 0;  // the keys and values gathered around the cp ring
  double cp_bytes_backward = 0;
  double ep_bytes_forward = 0;  // the expert all-to-alls' volume (dispatch and combine)
  double ep_bytes_backward = 0;
  double grad_bytes = 0;   // this stage's gradients per device
  double zero3_bytes = 0;  // this stage's weights per tp rank, gathered under ZeRO-3
  // The gradients' reduction and what Megatron-LM adds to it (train_stage.h's MegatronSync):
  // the scaling by 1 / dp on the compute stream, the last bucket reduced after the backward
  // (overlapped) and the distributed optimizer's gather of the updated weights.
  costmodel::Collective reduction = costmodel::Collective::kAllReduce;
  double scale_s = 0;
  double last_bytes = 0;
  double gather_bytes = 0;
  // What the buckets reduced beside the backward cost it (megatron_dp_overlapped).
  double overlap_s = 0;
  double pp_sync = 0;  // after each forward and backward of a chunk (train_stage.h's pipeline_sync)
};

StageWork stage_work(const TrainContext& cx, const Layout& l, const StageSpan& span);

/// One (physical) stage of the pipeline: its work per micro-batch, its tensor parallelism
/// and its ranks, indexed (d x cp + c) x tp + t.
struct StageSpec {
  StageWork work;
  std::int64_t tp = 1;
  std::vector<std::int64_t> ranks;
  /// Interleaved, the work of each of the stage's model chunks (its layers, and the
  /// embedding or the head and loss where the chunk holds them); empty: 1 / vpp of `work`.
  std::vector<StageWork> chunks;
};

struct PipelineShape {
  std::int64_t dp = 1;
  std::int64_t cp = 1;
  std::int64_t micro_batches = 1;
  std::int64_t vpp = 1;  // model chunks per stage (interleaved 1F1B)
  std::int64_t ep = 1;   // expert parallelism: groups of ep consecutive dp ranks
  int zero = 0;
  double activation = 0;  // bytes of one micro-batch's activations on one (dp, cp) slice
  /// Where the ranks sit; when given, gradient syncs over more than 64 ranks replay on a
  /// representative ring.
  const std::vector<costmodel::SimRankPlace>* places = nullptr;
  bool dp_overlap = true;  // the gradient sync overlaps the last backward (Layout::dp_overlap)
};

/// Appends the step to `out`: every micro-batch's forward and backward on every rank in
/// 1F1B order (Megatron-LM's interleaved order when vpp > 1: each stage runs vpp chunks of
/// 1 / vpp of its work, virtual stage c x pp + s on stage s), the sends between
/// neighbouring (virtual) stages, the gradient sync and a "step end" per rank. Returns why
/// the schedule cannot be laid out, or "".
std::string build_pipeline(const std::vector<StageSpec>& stages,
                           const PipelineShape& sh,
                           StepProgram& out);

}  // namespace yirage::planner
