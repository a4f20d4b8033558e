// The memory traffic eager PyTorch adds around a training step's matrix products
// (Framework::kPytorch: a Llama under torch.autocast over fp32 weights, as torchtitan runs
// without torch.compile and as bench/run_plan.py measures it). Megatron-LM fuses most of
// it away; eager PyTorch runs each piece as a kernel of its own through HBM:
// - RMSNorm computed in fp32 from its parts (cast in, square, mean, add, rsqrt, two
//   products, cast out), and its backward from the same parts;
// - RoPE as products, a negation and a concatenation; SiLU and the gate product; residual
//   adds; the attention output made contiguous;
// - per parameter and micro-batch, the fp32 weight cast to bf16 in forward and the bf16
//   weight gradient cast to fp32 and added into the fp32 gradient in backward;
// - the loss over fp32 logits (the log-softmax is priced as softmax operations);
// - the optimizer as torch.optim.AdamW(fused=True) plus clip_grad_norm_.
// Byte counts follow each kernel's reads and writes; the traffic is priced at the device's
// calibrated elementwise rate (costmodel stream_kernel "elementwise"), with nothing fitted
// on measured steps.
#pragma once

#include "devices/model_spec.h"
#include "planner/workload/layer_cost.h"

#include <cstdint>

namespace yirage::planner {

/// Bytes moved by the memory-bound kernels of a forward and of a backward pass, and the parts
/// of each that PyTorch cannot run in its vectorised loop:
/// - `widen`: 16-bit tensors cast to fp32 (its unrolled copy loop, about half the rate:
///   costmodel's "widen");
/// - `strided`: products with a broadcast operand (the norms' rsqrt and weight, RoPE's cos and
///   sin) and ops on a strided half (RoPE's negation), its unvectorised TensorIterator loop
///   (costmodel's "strided");
/// - `strided_binary`: binary ops with one strided operand (Megatron-Core's SiLU backward on
///   the gate half), the same loop with two inputs (costmodel's "strided_binary");
/// - `cat`: RoPE's concatenation of the halves (costmodel's "cat").
struct EagerBytes {
  double forward = 0;
  double backward = 0;
  double widen_forward = 0;
  double widen_backward = 0;
  double strided_forward = 0;
  double strided_backward = 0;
  double cat_forward = 0;
  double cat_backward = 0;
  double strided_binary_forward = 0;
  double strided_binary_backward = 0;
};

/// One layer, one micro-batch, one device of a tensor-parallel group of `s.tp` (norms and
/// residual adds on 1 / tp of the tokens with sequence parallelism). `norm_parts`: the two
/// RMSNorms run in fp32 from their parts (under autocast); false where they run as PyTorch's
/// fused norm kernels (DeviceContext::fused_norms), priced apart as operations.
EagerBytes eager_layer_bytes(const devices::ModelSpec& m,
                             const LayerShape& s,
                             bool norm_parts = true);

/// The pointwise kernels of a layer as Megatron-Core's own modules run them (Layout::te off,
/// as profiled at the commit bench/run_megatron.py names), the norms not included (PyTorch's
/// fused norm kernels, priced as operations), residuals on norm_rows(s):
/// - RoPE (apply_rotary_pos_emb): the query view copied contiguous, then on q and k the
///   products by cos and sin, the negated half, the halves' concatenation, the sum and the
///   rotated part's concatenation with the rest; their gradients in backward;
/// - a gated MLP (MLP.glu): SiLU of the gate half and the up half plus its offset
///   (glu_linear_offset), both strided views of the fused up projection, then their product;
///   in backward the product's two gradients, SiLU's backward on the strided half, and the
///   halves' gradients concatenated;
/// - biases (models with them): each projection's bias added apart over a broadcast operand
///   (QKV, output and down projection; the up projection's rides in the fused bias-GeLU); their
///   gradients, sums over the tokens, are priced as column_sum operations (layer_cost);
/// - the q, k and v gradients concatenated into the fused QKV projection's.
EagerBytes local_layer_bytes(const devices::ModelSpec& m, const LayerShape& s);

/// The kernels of local_layer_bytes in one layer's forward: RoPE's five on q and on k, the
/// activation's (SiLU, the offset and the product, or one), two residual adds, one contiguous
/// copy, and the three bias adds where there are biases.
std::int64_t local_layer_operations(const devices::ModelSpec& m);

/// The output head's micro-batch: the logits cast to fp32 before the loss, and their
/// gradient cast back (the log-softmax itself is priced as softmax operations); the final
/// norm's parts where `norm_parts`.
EagerBytes eager_head_bytes(const devices::ModelSpec& m,
                            const LayerShape& s,
                            bool norm_parts = true);

/// The vocabulary eager PyTorch's loss runs over on one device: under tensor parallelism in
/// training the head's output is gathered whole on every rank (no loss parallelism, as
/// bench/run_plan.py runs it), else the rank's shard.
std::int64_t eager_loss_vocab(const devices::ModelSpec& m, const LayerShape& s);

/// Per parameter held and micro-batch, of `micro_batches` per step: the weight cast in
/// forward (and again for the fraction `recast` of them that a full recomputation runs
/// through), the gradient cast and, after the first micro-batch, its accumulation.
EagerBytes eager_parameter_bytes(std::int64_t micro_batches, double recast);

/// One residual add of a layer (eager_layer_bytes counts two a pass): its bytes.
double eager_residual_bytes(const devices::ModelSpec& m, const LayerShape& s);

/// Per parameter held, once a step: fused AdamW over fp32 (parameter, gradient and two
/// moments read; parameter and moments written: 28 B) and the gradient clipping (the norm
/// reads the gradient, the scaling reads and writes it: 12 B).
double eager_optimizer_bytes_per_parameter();

/// Seconds of a piece's forward and of its backward.
struct PassTime {
  double forward = 0;
  double backward = 0;
};

/// Megatron-LM's loss, vocab_parallel_cross_entropy over the logits cast to fp32 (its default
/// without --cross-entropy-loss-fusion, in 2021's Megatron-LM as in Megatron-Core), on
/// `logits` logits of the rank's vocabulary shard: forward and backward seconds.
PassTime megatron_loss_time(const DeviceContext& cx, double logits);

/// Whether Megatron-LM's compiled softmax kernel takes causal self-attention scores of
/// `batch` sequences, `heads` heads a rank and `seq` tokens (FusedScaleMaskSoftmax's
/// is_kernel_available: 16 < seq <= 4096, seq a multiple of 4, batch x heads a multiple of 4
/// and of the kernel's rows per thread block). Where it does not, or where the kernel is not
/// built (no Apex or Transformer Engine), PyTorch's path runs: megatron_torch_softmax.
bool megatron_softmax_kernel(std::int64_t batch, std::int64_t heads, std::int64_t seq);

/// Whether FusedScaleMaskSoftmax takes PyTorch's path: the compiled kernel not `built`
/// (Layout::te off) or refusing the shape.
inline bool megatron_torch_softmax_runs(bool built,
                                        std::int64_t batch,
                                        std::int64_t heads,
                                        std::int64_t seq) {
  return !built || !megatron_softmax_kernel(batch, heads, seq);
}

/// FusedScaleMaskSoftmax's PyTorch path over `rows` rows of `keys` scores: the 16-bit scores
/// cast to fp32, multiplied by the layer's coefficient in fp16 (query-key layer scaling,
/// Megatron-LM's default for fp16 before Megatron-Core), the causal mask filled in place,
/// softmax in fp32, the probabilities cast back; forward and backward seconds.
PassTime megatron_torch_softmax(const DeviceContext& cx, std::int64_t rows, std::int64_t keys);

/// Its kernels in one forward (as many run in backward).
inline std::int64_t megatron_torch_softmax_kernels(const DeviceContext& cx) {
  return cx.dtype == devices::DType::kFp16 ? 5 : 4;
}

/// Per parameter held, once a step, Megatron-LM's optimizer without Transformer Engine or
/// Apex (Layout::te off): torch's foreach AdamW, the norm and clipping, the copy into the
/// 16-bit weights and the main gradients' zeroing.
double local_optimizer_bytes_per_parameter();

/// The memory-bound operations eager PyTorch runs in one layer's forward (the norms' parts,
/// RoPE's, the residual adds, SwiGLU or the activation, the contiguous copy): what the host
/// dispatches beside the matrix products and attention (the norms' parts where `norm_parts`).
std::int64_t eager_layer_operations(const devices::ModelSpec& m, bool norm_parts = true);

/// Seconds to add `elements` 16-bit gradients into fp32 sums (2 + 4 B read, 4 written) in
/// PyTorch's unrolled loop for mixed dtypes: at the rate measured for that kernel
/// (costmodel's "accumulate") where the device's calibration has it, else at the rate of a
/// cast to fp32.
double eager_accumulate_time(const DeviceContext& cx, double elements);

/// Seconds to move `bytes` through memory-bound kernels on the context's device, `widen` of
/// them through casts to fp32 (each part at its kind's rate where the device's calibration
/// has that kind, else at the elementwise rate).
double eager_stream_time(const DeviceContext& cx, double bytes, double widen = 0);

/// The same for the forward's (or the backward's) bytes of `b`, each part at its kind's rate.
double eager_forward_time(const DeviceContext& cx, const EagerBytes& b);
double eager_backward_time(const DeviceContext& cx, const EagerBytes& b);

}  // namespace yirage::planner
