// Tensor-parallel communication overlapped with the GEMMs beside it: Transformer Engine's
// userbuffers under sequence parallelism (Megatron-LM's --tp-comm-overlap, NeMo's
// ub_tp_comm_overlap), priced as its default configuration for H100 runs it (NeMo's
// userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192, the one its Llama 3 recipes use):
// - the all-gathers before the QKV and first MLP GEMMs (forward) and before the output and
//   down projections' data gradients (backward) as a ring exchange: the GEMM runs in tp
//   chunks, each on the slice already there while the next arrives over the copy engines;
// - the reduce-scatters after the output and down projections (forward) in a pipeline of 4
//   splits, the GEMM on the SMs the reduce-scatter's 24 and 16 leave it (set_sm_margin), the
//   last split's reduce-scatter exposed;
// - in backward the QKV and first MLP layers' gather of their input beside the data-gradient
//   GEMM and reduce-scatter of it beside the weight-gradient GEMM ("bulk"), their kernels on
//   4, 24, 2 and 4 SMs taken from the GEMM while they run.
#pragma once

#include <cstdint>

namespace yirage::planner {

/// A layer's forward GEMMs around its tensor-parallel collectives, in seconds: QKV, the
/// attention's output projection, the MLP's first (gate and up) and its down projection,
/// each whole and as the overlap runs it: in tp chunks of its rows (the ring exchange's) and,
/// for the projections, in the pipeline's 4 splits.
struct TpGemm {
  double whole = 0;
  double chunks = 0;  // tp GEMMs of 1 / tp of the rows
  double splits = 0;  // 4 GEMMs of a quarter of the rows
};

struct TpGemms {
  TpGemm qkv;
  TpGemm proj;
  TpGemm fc1;
  TpGemm fc2;
};

/// What the overlapped collectives cost a layer and micro-batch: the communication left
/// exposed (forward and backward), and the GEMMs' time lost to the SMs the collectives take.
struct TpOverlapCost {
  double exposed_forward = 0;
  double exposed_backward = 0;
  double slower_forward = 0;
  double slower_backward = 0;
};

/// The cost for one all-gather of `gather` and one reduce-scatter of `scatter` seconds each
/// (the layer's activations over the tp group), around `g`, on a device of `sms` SMs (more
/// than the 24 userbuffers take).
TpOverlapCost tp_overlap_cost(
    double gather, double scatter, const TpGemms& g, std::int64_t tp, std::int64_t sms);

}  // namespace yirage::planner
