// The operations of one transformer layer as the cost model prices them, one by one: what
// layer_cost() adds up into a layer's forward time, with both forms of each compound
// operation and the fuse-or-not decision. For per-operation views (a roofline of the
// operations, fused against unfused time), not for the search.
#pragma once

#include "costmodel/calibration.h"
#include "costmodel/gpu_op.h"
#include "devices/device_spec.h"
#include "devices/task_spec.h"
#include "planner/infer_estimate.h"
#include "planner/plan.h"
#include "planner/workload/layer_cost.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace yirage::planner {

/// One operation of a layer's forward pass on one device.
struct LayerOp {
  std::string name;                // its place in the layer: "QKV projection", "attention"
  std::string op;                  // the costmodel operation: "gemm", "rmsnorm_linear"
  std::vector<std::int64_t> dims;  // in the order of the op's shape ("MxKxN")
  costmodel::OpEstimate estimate;  // as the layer runs it (the fused form when chosen)
  bool compound = false;
  /// Compound operations: both forms (fused is nullopt when it cannot fuse, `why`).
  std::optional<costmodel::OpEstimate> fused;
  std::optional<costmodel::OpEstimate> unfused;
  std::string why;
};

/// The operations of `layer_cost(m, s, cx)`'s forward pass, in order: their times add up to
/// its `forward` (seconds), their FLOPs to at least its `flops_forward`.
std::vector<LayerOp> layer_ops(const devices::ModelSpec& m,
                               const LayerShape& s,
                               const DeviceContext& cx);

/// The layer a training layout repeats, for one micro-batch (the MoE layer when every
/// layer is one), as the estimate prices it.
LayerShape training_layer_shape(const devices::TaskSpec& t, const Layout& l);

/// The layer of one step of an inference layout: the prompt (prefill), or one token at the
/// task's context (decode) or at the mean context of a request (serve).
LayerShape inference_layer_shape(const devices::TaskSpec& t, const InferLayout& l);

/// Device `d` with its calibration from `calibrations` and the task's precision, pricing the
/// operations of a layer of shape `s` (decode steps replay from CUDA graphs, as the
/// inference estimate prices them). No tensor-parallel group: operations only.
DeviceContext op_context(const devices::DeviceSpec& d,
                         const devices::TaskSpec& t,
                         const costmodel::CalibrationSet& calibrations,
                         const LayerShape& s);

/// FLOPs per byte of memory (HBM) traffic of an operation; 0 when it moves no bytes.
double arithmetic_intensity(const costmodel::OpEstimate& e);

/// FLOP/s an operation achieves as modelled: its FLOPs over its time; 0 when it takes none.
double achieved_rate(const costmodel::OpEstimate& e);

/// The roofline bound at `intensity` FLOP/byte, min(peak, intensity x memory bandwidth)
/// (Williams, Waterman and Patterson 2009, eq. 1), in FLOP/s; 0 when `d` has no peak for `t`.
double roofline_bound(const devices::DeviceSpec& d, devices::DType t, double intensity);

}  // namespace yirage::planner
