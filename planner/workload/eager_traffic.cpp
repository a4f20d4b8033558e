#include "planner/workload/eager_traffic.h"

#include "costmodel/gpu_kernel.h"
#include "planner/workload/model_size.h"
#include "planner/workload/pricer.h"

#include <algorithm>
#include <bit>

namespace yirage::planner {
namespace {

double f(std::int64_t v) {
  return static_cast<double>(v);
}

// Bytes per element of one fp32 RMSNorm from its parts. Forward: the bf16 input cast to
// fp32 (2 + 4), the square (4 + 4), the mean (4), the product by the rsqrt (4 + 4), the
// product by the weight (4 + 4), the fp32 output cast to bf16 for the next GEMM (4 + 2): 40.
// Backward: the incoming bf16 gradient cast to fp32 (6), the weight's gradient product and
// its sum over tokens (12 + 4), the gradient through the weight (8), through the rsqrt
// product (12) and the sum for the rsqrt's gradient (12 + 4), the square's backward (12),
// the two input-gradient paths added (12), the cast back to bf16 (6): 100.
constexpr double kNormForward = 40;
constexpr double kNormBackward = 100;
// Of those, the casts to fp32: the input's in forward, the incoming gradient's in backward;
// and the products with a broadcast operand: by the rsqrt and by the weight in forward (8 +
// 8), through the weight and through the rsqrt in backward (8 + 12).
constexpr double kNormWiden = 6;
constexpr double kNormStridedForward = 16;
constexpr double kNormStridedBackward = 20;
// RoPE on q and k, per element: x cos (2 + 2), the half negated (1 + 1), the halves
// concatenated (2 + 2), times sin (2 + 2), the sum (4 + 2): 20, and the same in backward.
constexpr double kRope = 20;
// Of those, the products by the broadcast cos and sin and the negated strided half (4 + 4 +
// 2), and the concatenation (4); the same in backward.
constexpr double kRopeStrided = 10;
constexpr double kRopeCat = 4;
// A bf16 residual add (2 + 2 + 2), and its gradient added to the branch's in backward.
constexpr double kResidual = 6;
// Making a bf16 tensor contiguous after a transpose (2 + 2).
constexpr double kContiguous = 4;
// SwiGLU per element of the FFN width: SiLU (2 + 2) and the gate product (2 + 2 + 2)
// forward; SiLU's backward (2 + 2 + 2) and the product's two gradients (2 x (4 + 2)).
constexpr double kSwigluForward = 10;
constexpr double kSwigluBackward = 18;
// A plain MLP's activation (GeLU): (2 + 2) forward, (2 + 2 + 2) backward.
constexpr double kActForward = 4;
constexpr double kActBackward = 6;

// A layer's elements on one device of its tensor-parallel group: the queries', the keys' (as
// many as the values'), the FFN's width (the routed and shared experts' of an MoE layer), and
// whether it rotates q and k (RoPE) and gates its MLP.
struct LayerWidths {
  double q = 0;
  double kv = 0;
  double wide = 0;
  bool rope = false;
  bool gated = false;
};

LayerWidths layer_widths(const devices::ModelSpec& m, const LayerShape& s) {
  double tokens = f(s.micro_batch * s.seq);
  std::int64_t ffn =
      s.moe_layer ? m.moe->expert_ffn * (m.moe->top_k + m.moe->shared_experts) : m.ffn;
  return {tokens * f(std::max<std::int64_t>(1, m.heads / s.tp) * m.head_dim),
          tokens * f(std::max<std::int64_t>(1, m.kv_heads / s.tp) * m.head_dim),
          tokens * f(ffn) / f(s.tp), m.position == devices::PositionKind::kRope,
          m.ffn_kind == devices::FfnKind::kGated};
}

}  // namespace

EagerBytes eager_layer_bytes(const devices::ModelSpec& m, const LayerShape& s, bool norm_parts) {
  // With tensor parallelism the runner shards the norms' tokens over the group (sequence
  // parallelism); the projections' outputs are split by heads and FFN columns.
  double stream = f(s.micro_batch * s.seq) * f(m.hidden) / (s.tp > 1 ? f(s.tp) : 1);
  double norms = norm_parts ? 2 * stream : 0;  // elements normalised from their parts
  auto [q, kv, wide, rope, gated] = layer_widths(m, s);
  EagerBytes b;
  b.forward = kNormForward * norms + 2 * kResidual * stream + kContiguous * q +
              (rope ? kRope * (q + kv) : 0) + (gated ? kSwigluForward : kActForward) * wide;
  // Backward: the q, k and v gradients made contiguous again for the projections.
  b.backward = kNormBackward * norms + 2 * kResidual * stream + kContiguous * (2 * q + 2 * kv) +
               (rope ? kRope * (q + kv) : 0) + (gated ? kSwigluBackward : kActBackward) * wide;
  b.widen_forward = kNormWiden * norms;
  b.widen_backward = kNormWiden * norms;
  double rotated = rope ? q + kv : 0;
  b.strided_forward = kNormStridedForward * norms + kRopeStrided * rotated;
  b.strided_backward = kNormStridedBackward * norms + kRopeStrided * rotated;
  b.cat_forward = kRopeCat * rotated;
  b.cat_backward = kRopeCat * rotated;
  return b;
}

EagerBytes local_layer_bytes(const devices::ModelSpec& m, const LayerShape& s) {
  double tokens = f(s.micro_batch * s.seq);
  double e = f(norm_rows(s)) * f(m.hidden);  // the residual stream's elements
  auto [q, kv, wide, rope, gated] = layer_widths(m, s);
  double rotated = rope ? q + kv : 0;
  EagerBytes b;
  // Both passes: the residual adds; backward: the q, k and v gradients concatenated into the
  // fused projection's (2 + 2 per element).
  b.forward = 2 * kResidual * e;
  b.backward = 2 * kResidual * e + kContiguous * (q + 2 * kv);
  if (rope) {
    // The query view of the fused QKV output copied contiguous (unvectorised, 2 + 2), then per
    // rotated element: the products by cos and sin over broadcast operands and the negated
    // half (2 + 2, 2 + 2, 1 + 1: unvectorised), the halves concatenated (2 + 2: "cat"), the sum
    // (2 + 2 + 2) and the rotated part concatenated with the rest (2 + 2). Backward: the same
    // products, negation and concatenation, and the sums of the gradients' paths, one of them
    // into a zeroed tensor (6, 2 and 6).
    b.strided_forward += kContiguous * q + kRopeStrided * rotated;
    b.strided_backward += kRopeStrided * rotated;
    b.cat_forward += kRopeCat * rotated;
    b.cat_backward += kRopeCat * rotated;
    b.forward += kContiguous * q + (kRopeStrided + kRopeCat + 10) * rotated;
    b.backward += (kRopeStrided + kRopeCat + 14) * rotated;
  }
  if (gated) {
    // SiLU of the gate half and the up half plus glu_linear_offset, both strided views of the
    // up projection's output (2 + 2 each, unvectorised), their product (2 + 2 + 2). Backward:
    // the product's two gradients (2 x 6), SiLU's backward reading the strided half (2 + 2 +
    // 2: a binary op over a strided operand), the halves' gradients concatenated (2 x (2 + 2)).
    b.strided_forward += 8 * wide;
    b.forward += 14 * wide;
    b.strided_binary_backward += 6 * wide;
    b.backward += 26 * wide;
  } else {
    b.forward += kActForward * wide;
    b.backward += kActBackward * wide;
  }
  if (m.bias == devices::BiasKind::kAll) {
    // The QKV, output and down projections' biases each added apart over a broadcast operand
    // (2 + 2, unvectorised; the up projection's rides in the fused bias-GeLU). (Every bias's
    // gradient, a sum over the tokens, is priced as a column_sum operation: layer_cost.)
    double qkv = tokens * f(qkv_width(m) / s.tp);
    b.strided_forward += 4 * (qkv + 2 * e);
    b.forward += 4 * (qkv + 2 * e);
  }
  return b;
}

std::int64_t eager_layer_operations(const devices::ModelSpec& m, bool norm_parts) {
  // Two RMSNorms of 7 operations each (cast, square, mean, add, rsqrt, product, product, as
  // in kNormForward's count with the cast out; fused, counted with the priced operations),
  // two residual adds, one contiguous copy; RoPE's five on q and on k; SwiGLU's two (or one
  // activation).
  bool rope = m.position == devices::PositionKind::kRope;
  bool gated = m.ffn_kind == devices::FfnKind::kGated;
  return (norm_parts ? 2 * 7 : 0) + 2 + 1 + (rope ? 10 : 0) + (gated ? 2 : 1);
}

std::int64_t local_layer_operations(const devices::ModelSpec& m) {
  bool rope = m.position == devices::PositionKind::kRope;
  bool gated = m.ffn_kind == devices::FfnKind::kGated;
  // Two residual adds; RoPE's copy and six on q, six on k; the activation's three (or one);
  // three bias adds.
  return 2 + (rope ? 13 : 0) + (gated ? 3 : 1) + (m.bias == devices::BiasKind::kAll ? 3 : 0);
}

std::int64_t eager_loss_vocab(const devices::ModelSpec& m, const LayerShape& s) {
  return s.tp > 1 && !s.inference ? m.vocab : std::max<std::int64_t>(1, m.vocab / s.tp);
}

EagerBytes eager_head_bytes(const devices::ModelSpec& m, const LayerShape& s, bool norm_parts) {
  double logits = f(s.micro_batch * s.seq) * f(eager_loss_vocab(m, s));
  // bf16 logits to fp32 (2 + 4); the fp32 gradient back to bf16 (4 + 2). The final norm
  // runs like a layer's.
  double norm = norm_parts ? f(s.micro_batch * s.seq) * f(m.hidden) / (s.tp > 1 ? f(s.tp) : 1) : 0;
  EagerBytes b{6 * logits + kNormForward * norm, 6 * logits + kNormBackward * norm,
               6 * logits + kNormWiden * norm, kNormWiden * norm};
  b.strided_forward = kNormStridedForward * norm;
  b.strided_backward = kNormStridedBackward * norm;
  return b;
}

EagerBytes eager_parameter_bytes(std::int64_t micro_batches, double recast) {
  // fp32 weight read, bf16 copy written (4 + 2), per forward; the bf16 gradient read and
  // cast to fp32 (2 + 4: a widening cast); from the second micro-batch on, added into .grad
  // (4 + 4 + 4).
  double mbs = f(std::max<std::int64_t>(1, micro_batches));
  return {6.0 * (1 + recast), 6 + 12 * (mbs - 1) / mbs, 0, 6};
}

double eager_residual_bytes(const devices::ModelSpec& m, const LayerShape& s) {
  return kResidual * f(s.micro_batch * s.seq) * f(m.hidden) / (s.tp > 1 ? f(s.tp) : 1);
}

double eager_optimizer_bytes_per_parameter() {
  return 28 + 12;
}

double local_optimizer_bytes_per_parameter() {
  // torch.optim.AdamW(foreach=True) over fp32: the decay (4 + 4), the first moment's lerp
  // (4 + 4 + 4), the second's scaling (4 + 4) and addcmul (4 + 4 + 4 + 4), the denominator's
  // sqrt, division and epsilon (3 x (4 + 4)), the update's addcdiv (4 + 4 + 4 + 4): 84.
  // Megatron-LM's gradient norm and clipping (4 and 4 + 4), the fp32 weights copied into the
  // model's 16-bit ones (4 + 2), the fp32 main gradients zeroed (4): 106.
  return 84 + 12 + 6 + 4;
}

namespace {

// One pass's bytes, `bytes` in all, and of them those of each loop that is not the
// vectorised one (EagerBytes's parts).
struct PassBytes {
  double bytes = 0;
  double widen = 0;
  double strided = 0;
  double cat = 0;
  double strided_binary = 0;
};

// The seconds of `p`, each part at its kind's rate; the strided part at `strided_kind`'s.
double stream_parts(const DeviceContext& cx, PassBytes p, const char* strided_kind = "strided") {
  auto& [bytes, widen, strided, cat, strided_binary] = p;
  // Where a kind was not measured, its bytes run at the elementwise rate.
  auto has = [&](const char* kind) {
    return cx.efficiency.stream.count(kind) > 0;
  };
  widen = has("widen") ? widen : 0;
  strided = has(strided_kind) ? strided : 0;
  cat = has("cat") ? cat : 0;
  strided_binary = has("strided_binary") ? strided_binary : 0;
  auto time = [&](const char* kind, const char* what, double read, double write) {
    return costmodel::stream_kernel(cx.device, cx.efficiency, kind, what, read, write, 0)
        .time()
        .value;
  };
  double t = 0;
  double plain = bytes - widen - strided - cat - strided_binary;
  if (plain > 0)
    t += time("elementwise", "eager traffic", plain, 0);
  if (widen > 0)
    t += time("widen", "eager casts to fp32", widen / 3, 2 * widen / 3);  // 2 B in, 4 out
  if (strided > 0)
    t += time(strided_kind, "eager broadcast and strided operands", strided, 0);
  if (cat > 0)
    t += time("cat", "eager concatenations", cat, 0);
  if (strided_binary > 0)
    t += time("strided_binary", "eager binary ops over a strided operand", strided_binary, 0);
  return t;
}

}  // namespace

double eager_stream_time(const DeviceContext& cx, double bytes, double widen) {
  return stream_parts(cx, {bytes, widen});
}

double eager_accumulate_time(const DeviceContext& cx, double elements) {
  if (cx.efficiency.stream.count("accumulate") == 0)
    return stream_parts(cx, {10 * elements, 10 * elements});
  return costmodel::stream_kernel(cx.device, cx.efficiency, "accumulate",
                                  "gradients added into fp32 sums", 6 * elements, 4 * elements, 0)
      .time()
      .value;
}

double eager_forward_time(const DeviceContext& cx, const EagerBytes& b) {
  return stream_parts(
      cx, {b.forward, b.widen_forward, b.strided_forward, b.cat_forward, b.strided_binary_forward});
}

double eager_backward_time(const DeviceContext& cx, const EagerBytes& b) {
  return stream_parts(cx, {b.backward, b.widen_backward, b.strided_backward, b.cat_backward,
                           b.strided_binary_backward});
}

PassTime megatron_loss_time(const DeviceContext& cx, double logits) {
  // Forward: the cast to fp32 (2 + 4), the row maximum (4), the maximum subtracted (4 + 4),
  // exp (4 + 4), the row sum (4), the division by it (4 + 4): 38 B. Backward: the softmax
  // times the incoming gradient (4 + 4), the cast back to 16 bits (4 + 2): 14 B. The
  // subtraction, division and product take a broadcast operand, which sends them through
  // PyTorch's unvectorised loop (the "strided_binary" rate).
  return {stream_parts(cx, {38 * logits, 6 * logits, 16 * logits}, "strided_binary"),
          stream_parts(cx, {14 * logits, 0, 8 * logits}, "strided_binary")};
}

bool megatron_softmax_kernel(std::int64_t batch, std::int64_t heads, std::int64_t seq) {
  std::int64_t batches = batch * heads;
  if (seq <= 16 || seq > 4096 || seq % 4 != 0 || batches % 4 != 0)
    return false;
  // get_batch_per_block: 128 threads a block, a warp of min(32, the keys' next power of two)
  // threads, two rows a warp up to 128 keys.
  auto pow2 = static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(seq)));
  std::int64_t per_block = 128 / std::min<std::int64_t>(pow2, 32) * (pow2 <= 128 ? 2 : 1);
  return batches % per_block == 0;
}

PassTime megatron_torch_softmax(const DeviceContext& cx, std::int64_t rows, std::int64_t keys) {
  // Per score, forward: the cast to fp32 (2 + 4), the scaling (4 + 4), the mask filled in
  // place (4 + 4, the mask broadcast over batches and heads: PyTorch's unvectorised loop),
  // the cast back (4 + 2), beside the fp32 softmax. Backward: the incoming gradient cast to
  // fp32 (6), the softmax's backward, the mask's zeros filled out of place (8, broadcast),
  // the scaling (8), the cast back (6).
  double n = f(rows) * f(keys);
  double scale = cx.dtype == devices::DType::kFp16 ? 8 * n : 0;
  DeviceContext fp32 = cx;
  fp32.dtype = devices::DType::kFp32;
  double soft = price(fp32, "softmax", {rows, keys}, false).time.value;
  double back = price(fp32, "softmax_backward", {rows, keys}, false).time.value;
  double rest = stream_parts(cx, {20 * n + scale, 6 * n, 8 * n}, "strided_binary");
  return {soft + rest, back + rest};
}

}  // namespace yirage::planner
