// A transformer layer's forward, and the ends of a pass, as plain PyTorch runs inference
// (Framework::kPytorch; bench/run_infer.py): every operation a kernel of its own.
#pragma once

#include "devices/model_spec.h"
#include "planner/workload/layer_cost.h"

namespace yirage::planner {

/// One layer's forward on one device of a tensor-parallel group of `s.tp`, for
/// `s.micro_batch` sequences of `s.seq` new tokens attending `s.kv_len` keys: RMSNorm; one
/// GEMM for Q, K and V; RoPE on Q and K as PyTorch's elementwise kernels (two products, a
/// negation, a concatenation and a sum each); the new keys and values copied into the
/// cache; attention (the context's DecodeAttention in decode; causal flash in prefill,
/// whose output is then made contiguous); the output GEMM and its all-reduce; the residual
/// add; RMSNorm; one GEMM for gate and up, SiLU, the product, the down GEMM and its
/// all-reduce; the residual add. With 8-bit GEMMs over wider activations each GEMM's input
/// is first quantised per row. Priced kernel by kernel (in a CUDA graph in decode, where the
/// context says so).
LayerCost eager_inference_layer(const devices::ModelSpec& m,
                                const LayerShape& s,
                                const DeviceContext& cx);

/// The ends of such a pass: the token embedding's gather, the final RMSNorm of each
/// sequence's last position, the LM head's GEMM (its vocabulary split over `s.tp`) and the
/// all-gather of its logits.
LayerCost eager_inference_ends(const devices::ModelSpec& m,
                               const LayerShape& s,
                               const DeviceContext& cx);

}  // namespace yirage::planner
