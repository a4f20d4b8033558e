#include "planner/workload/tp_overlap.h"

#include "devices/support/check.h"

#include <algorithm>

namespace yirage::planner {

namespace {

// Userbuffers' SMs for each overlapped collective (NeMo's H100 configuration, tp_overlap.h).
constexpr double kProjScatterSms = 24;
constexpr double kFc2ScatterSms = 16;
constexpr double kPipelineSplits = 4;
constexpr double kQkvGatherSms = 4;    // qkv_dgrad
constexpr double kQkvScatterSms = 24;  // qkv_wgrad
constexpr double kFc1GatherSms = 2;    // fc1_dgrad
constexpr double kFc1ScatterSms = 4;   // fc1_wgrad

// A ring exchange hides the gather behind the GEMM's chunks on the slices already there: all
// but the first chunk's time.
double ring_exposed(double gather, double gemm, double tp) {
  return std::max(0.0, gather - gemm * (tp - 1) / tp);
}

// A pipelined reduce-scatter: each split's after its GEMM split, the last one exposed.
double pipeline_exposed(double scatter, double gemm) {
  double split = scatter / kPipelineSplits;
  return split + std::max(0.0, scatter - gemm) * (kPipelineSplits - 1) / kPipelineSplits;
}

// A bulk overlap: the collective beside a GEMM that does not need it, on `sms` of the SMs.
void bulk(double comm, double gemm, double sms, double all, TpOverlapCost& c) {
  c.exposed_backward += std::max(0.0, comm - gemm);
  c.slower_backward += std::min(comm, gemm) * sms / all;
}

}  // namespace

TpOverlapCost tp_overlap_cost(
    double gather, double scatter, const TpGemms& g, std::int64_t tp, std::int64_t sms) {
  TpOverlapCost c;
  auto t = static_cast<double>(tp);
  CHECK(sms > kProjScatterSms) << "userbuffers need more SMs than their own " << sms;
  auto all = static_cast<double>(sms);
  // Forward: the gathered GEMMs run in tp chunks, the projections in 4 splits on the SMs the
  // reduce-scatters leave them.
  double proj = g.proj.splits * all / (all - kProjScatterSms);
  double fc2 = g.fc2.splits * all / (all - kFc2ScatterSms);
  c.slower_forward = (g.qkv.chunks - g.qkv.whole) + (g.fc1.chunks - g.fc1.whole) +
                     (proj - g.proj.whole) + (fc2 - g.fc2.whole);
  c.exposed_forward = ring_exposed(gather, g.qkv.chunks, t) +
                      ring_exposed(gather, g.fc1.chunks, t) + pipeline_exposed(scatter, proj) +
                      pipeline_exposed(scatter, fc2);
  // Backward: the projections' data gradients need the output gradient gathered (a ring
  // exchange, in chunks); the QKV and first MLP layers gather their input beside the data
  // gradient and reduce-scatter it beside the weight gradient.
  c.slower_backward = (g.proj.chunks - g.proj.whole) + (g.fc2.chunks - g.fc2.whole);
  c.exposed_backward =
      ring_exposed(gather, g.proj.chunks, t) + ring_exposed(gather, g.fc2.chunks, t);
  bulk(gather, g.qkv.whole, kQkvGatherSms, all, c);
  bulk(scatter, g.qkv.whole, kQkvScatterSms, all, c);
  bulk(gather, g.fc1.whole, kFc1GatherSms, all, c);
  bulk(scatter, g.fc1.whole, kFc1ScatterSms, all, c);
  return c;
}

}  // namespace yirage::planner
