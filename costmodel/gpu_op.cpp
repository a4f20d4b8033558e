#include "costmodel/gpu_op.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace yirage::costmodel {

using devices::DType;
using devices::Seconds;

const std::vector<GpuOpInfo>& gpu_ops() {
  static const std::vector<GpuOpInfo> kOps = {
      {GpuOp::kGemm, "gemm", "MxNxK or BxMxNxK", "C[MxN] = A[MxK] B[KxN], B times", false},
      {GpuOp::kAttention, "attention", "BxHxKVxQxLxD",
       "batch, heads, KV heads, query length (1 = decode), KV length, head dim; --causal", false},
      {GpuOp::kRmsNorm, "rmsnorm", "RxC", "RMSNorm of R rows of C", false},
      {GpuOp::kLayerNorm, "layernorm", "RxC", "LayerNorm of R rows of C", false},
      {GpuOp::kRmsNormBackward, "rmsnorm_backward", "RxC",
       "the gradients of an RMSNorm of R rows of C: the input's and its scale's", false},
      {GpuOp::kLayerNormBackward, "layernorm_backward", "RxC",
       "the gradients of a LayerNorm of R rows of C: the input's, its scale's and shift's", false},
      {GpuOp::kSoftmax, "softmax", "RxC", "softmax of R rows of C", false},
      {GpuOp::kSoftmaxBackward, "softmax_backward", "RxC",
       "the gradient of a softmax of R rows of C, from its output and the output's gradient",
       false},
      {GpuOp::kElementwise, "elementwise", "N", "a binary elementwise op on N elements", false},
      {GpuOp::kCopy, "copy", "N",
       "a unary op or copy of N elements (SiLU, negation, a cache write)", false},
      {GpuOp::kQuantize, "quantize", "RxC",
       "R rows of C quantised to 8 bits with one fp32 scale per row (W8A8's activations)", false},
      {GpuOp::kStrided, "strided", "N",
       "a unary op on N elements of a non-contiguous view, or its product with a broadcast "
       "operand (eager SiLU of a gate half, RoPE's halves)",
       false},
      {GpuOp::kStridedBinary, "strided_binary", "N",
       "a binary op on N elements, one operand a non-contiguous view (SiLU(gate) * up)", false},
      {GpuOp::kCat, "cat", "N", "a concatenation writing N elements, a strided part among them",
       false},
      {GpuOp::kWiden, "widen", "N",
       "N 16-bit elements cast to fp32 (eager PyTorch's unrolled copy: gradients and logits)",
       false},
      {GpuOp::kAccumulate, "accumulate", "N",
       "N 16-bit gradients added into fp32 sums (Megatron-LM's main gradients without "
       "gradient-accumulation fusion)",
       false},
      {GpuOp::kColumnSum, "column_sum", "RxC",
       "R rows of C summed into C (a bias's gradient: its output's gradient summed over the "
       "tokens)",
       false},
      {GpuOp::kRmsNormLinear, "rmsnorm_linear", "MxKxN", "RMSNorm of [MxK], then x [KxN]", true},
      {GpuOp::kGatedMlp, "gated_mlp", "MxHxF",
       "SiLU(x W_gate) * (x W_up), then x W_down: hidden H, FFN width F", true},
      {GpuOp::kGemmSoftmax, "gemm_softmax", "MxNxK", "softmax over the rows of A[MxK] B[KxN]",
       true},
      {GpuOp::kGemmLayerNorm, "gemm_layernorm", "MxNxK", "LayerNorm over the rows of A[MxK] B[KxN]",
       true},
      {GpuOp::kLoraLinear, "lora_linear", "MxKxNxR", "x W + (x A) B with LoRA rank R", true},
  };
  return kOps;
}

const GpuOpInfo* find_gpu_op(const std::string& name) {
  for (const GpuOpInfo& i : gpu_ops()) {
    if (i.name == name)
      return &i;
  }
  return nullptr;
}

std::string parse_op_shape(const GpuOpInfo& info, const std::string& text, OpShape* shape) {
  shape->dims.clear();
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t x = text.find('x', start);
    std::string part = text.substr(start, x == std::string::npos ? std::string::npos : x - start);
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || ptr != part.data() + part.size() || v <= 0) {
      return "'" + part + "' in shape '" + text + "' is not a positive whole number";
    }
    shape->dims.push_back(v);
    if (x == std::string::npos)
      break;
    start = x + 1;
  }
  std::size_t want =
      static_cast<std::size_t>(std::count(info.shape.begin(), info.shape.end(), 'x'));
  std::size_t n = shape->dims.size();
  bool ok = info.op == GpuOp::kGemm ? (n == 3 || n == 4) : n == want + 1;
  if (!ok)
    return info.name + " takes a shape " + info.shape + ", got '" + text + "'";
  if (info.op == GpuOp::kAttention && shape->dims[1] % shape->dims[2] != 0) {
    return "attention heads (" + std::to_string(shape->dims[1]) +
           ") must be a multiple of KV heads (" + std::to_string(shape->dims[2]) + ")";
  }
  return {};
}

std::string softmax_kernel(std::int64_t cols, double bytes, bool backward) {
  std::string kind = backward ? "softmax_backward" : "softmax";
  double row = static_cast<double>(cols) * bytes;
  // The forward's warp kernel and register kernel are instantiated per row length (the warp
  // kernel's log2 of it, the register kernel's elements a thread); the longer instantiations
  // take more registers a thread and fit fewer blocks on a unit (H200/softmax_occupancy.csv:
  // 80 registers and 6 blocks of 128 threads past 1,024 elements, against 48 and 10; 34-40 and
  // one block of 1,024 threads from seven elements a thread, against 28-30 and two), and each
  // is fitted as a kernel of its own ("_wide").
  if (backward ? cols <= 1024 : cols <= 2048 && row <= 8192)
    return kind + (!backward && cols > 1024 ? "_warp_wide" : "_warp");
  if (std::int64_t per_thread = (cols + 1023) / 1024; !backward && per_thread < 10)
    return kind + (per_thread >= 7 ? "_reg_wide" : "_reg");
  auto per_load = static_cast<std::int64_t>(std::max(1.0, 16 / bytes));
  if (row < 48 * 1024 - 128 && cols % per_load == 0)
    return kind + "_smem";
  return kind + "_plain";
}

namespace {

double f(std::int64_t v) {
  return static_cast<double>(v);
}

struct Ctx {
  const devices::DeviceSpec& d;
  DType dtype;
  const GpuEfficiency& eff;
  double b;  // bytes per element
};

// The stream fit of `kind` in the dtype priced ("rmsnorm.fp32") where the device has one,
// else `kind`'s.
std::string fit_kind(const Ctx& c, const std::string& kind) {
  std::string own = kind + "." + devices::dtype_name(c.dtype);
  return c.eff.stream.count(own) > 0 ? own : kind;
}

// A forward's estimate, every time and its bytes `ratio` times over: a backward priced from
// its forward where it has no fit of its own.
KernelEstimate scaled(KernelEstimate e, double ratio, std::string name) {
  for (devices::Seconds* t :
       {&e.launch, &e.ramp_up, &e.steady, &e.ramp_down, &e.compute, &e.memory, &e.host})
    *t = *t * ratio;
  e.hbm_bytes *= ratio;
  e.name = std::move(name);
  return e;
}

// What a row-wise kernel does besides writing its rows: the vectors of weights it reads
// (RMSNorm's scale, LayerNorm's scale and shift), its operations per element, the share of its
// rows it reads a second time from memory, and how many tensors of its rows it reads.
struct RowWork {
  double params = 0;
  double flops_per_elem = 0;
  double reread = 0;
  double reads = 1;  // tensors of the rows' size read (a backward's: the input and the gradient)
};

// A row-wise kernel over r rows of `cols` at the fit of its kind.
KernelEstimate rows(
    const Ctx& c, const std::string& name, std::int64_t r, std::int64_t cols, const RowWork& w) {
  double elems = f(r) * f(cols);
  return stream_kernel(c.d, c.eff, fit_kind(c, name),
                       name + " " + std::to_string(r) + "x" + std::to_string(cols),
                       elems * c.b * (w.reads + w.reread) + w.params * f(cols) * c.b, elems * c.b,
                       w.flops_per_elem * elems, cols);
}

// PyTorch's RMSNorm and LayerNorm (layer_norm_kernel.cu, vectorized_layer_norm_kernel) take
// each row in a block of 128 threads and pass over it twice: its statistics, then the output.
// The second pass finds the row in L2 unless the rows read since have pushed it out; with the
// rows in flight (a unit's resident threads over 128, on every unit) filling a share of L2,
// that share of the second pass reads memory again (capped at all of it). A device without
// the L2's size or the resident threads is taken to hit.
double norm_rereads_missed(const Ctx& c, std::int64_t r, double row_bytes) {
  const devices::OnChip& o = c.d.onchip;
  if (!o.l2 || !o.threads_per_unit || !o.compute_units)
    return 0;
  double blocks = f(o.compute_units->value) * std::max(1.0, f(o.threads_per_unit->value) / 128);
  return std::min(1.0, std::min(f(r), blocks) * row_bytes / o.l2->value.value);
}

// What a norm's rows cost besides themselves: RMSNorm reads its scale and does four operations
// an element, its second pass's misses read again; LayerNorm reads its scale and shift and
// does eight (the second pass's misses are not charged there: on the H200 row grid they
// made its held-out error worse, docs/step-model.md).
RowWork norm_work(const Ctx& c, const std::string& kind, std::int64_t r, std::int64_t cols) {
  if (kind == "rmsnorm")
    return {1, 4, norm_rereads_missed(c, r, f(cols) * c.b)};
  return {2, 8};
}

KernelEstimate norm_rows(const Ctx& c, const std::string& kind, std::int64_t r, std::int64_t cols) {
  return rows(c, kind, r, cols, norm_work(c, kind, r, cols));
}

// A norm's backward (PyTorch: the input's gradient, then the weights' summed over the rows),
// which reads the input and the gradient in each of its two kernels, at the fit of
// "<kind>_backward" where the device has one, else kNormBackwardRatio times its forward.
KernelEstimate norm_backward_rows(const Ctx& c,
                                  const std::string& kind,
                                  std::int64_t r,
                                  std::int64_t cols) {
  std::string name = kind + "_backward";
  if (c.eff.stream.count(fit_kind(c, name)) == 0) {
    return scaled(norm_rows(c, kind, r, cols), kNormBackwardRatio,
                  name + " " + std::to_string(r) + "x" + std::to_string(cols));
  }
  RowWork w = norm_work(c, kind, r, cols);
  w.reread = 0;
  w.reads = 4;
  return rows(c, name, r, cols, w);
}

// PyTorch's plain softmax kernel takes each row in a block of 1,024 threads and passes over
// it three times (its maximum, its sum, the output). The later passes find the row in L2
// while the rows in flight (a unit's resident threads over 1,024, on every unit) fill at most
// three quarters of it, else they read it from memory again: 1 where they miss, 0 where they
// hit. Three quarters lies between what the forward rows measured on H200 show: fp32 rows of
// 32,000 elements, 34 MB in flight, hit its 50 MiB; rows of 40,960, 42 MB, miss
// (ops_loss.csv, ops_softmax.csv). A device without the L2's size or the resident threads is
// taken to hit. (The backward's plain kernel misses already at 34 MB, two rows a block: it is
// priced by its fit alone.)
double plain_rereads_missed(const Ctx& c, std::int64_t r, double row_bytes) {
  const devices::OnChip& o = c.d.onchip;
  if (!o.l2 || !o.threads_per_unit || !o.compute_units)
    return 0;
  double blocks = f(o.compute_units->value) * std::max(1.0, f(o.threads_per_unit->value) / 1024);
  double in_flight = std::min(f(r), blocks) * row_bytes;
  return in_flight > 0.75 * o.l2->value.value ? 1 : 0;
}

// A softmax over rows: at the fit of the kernel PyTorch runs for them where the device has
// one, else at the fit of all softmax rows.
KernelEstimate softmax_rows(const Ctx& c, std::int64_t r, std::int64_t cols) {
  std::string kind = softmax_kernel(cols, c.b, false);
  std::string name = "softmax " + std::to_string(r) + "x" + std::to_string(cols);
  double elems = f(r) * f(cols);
  if (kind == "softmax_plain" && c.eff.stream.count(kind) > 0) {
    // Three passes over each row: its maximum, its sum, the output.
    double again = 2 * plain_rereads_missed(c, r, f(cols) * c.b);
    return stream_kernel(c.d, c.eff, kind, name, elems * c.b * (1 + again), elems * c.b, 5 * elems,
                         cols);
  }
  KernelEstimate e = rows(c, c.eff.stream.count(kind) > 0 ? kind : "softmax", r, cols, {0, 5});
  e.name = name;
  return e;
}

// Its backward reads the output and the gradient and writes the input's gradient (about four
// operations an element), at the fit of the backward's kernel, or of all backward rows, where
// the device has one, else kSoftmaxBackwardRatio times the forward.
KernelEstimate softmax_backward_rows(const Ctx& c, std::int64_t r, std::int64_t cols) {
  std::string kind = softmax_kernel(cols, c.b, true);
  if (c.eff.stream.count(kind) == 0)
    kind = "softmax_backward";
  std::string name = "softmax_backward " + std::to_string(r) + "x" + std::to_string(cols);
  if (c.eff.stream.count(kind) == 0)
    return scaled(softmax_rows(c, r, cols), kSoftmaxBackwardRatio, name);
  double elems = f(r) * f(cols);
  return stream_kernel(c.d, c.eff, kind, name, 2 * elems * c.b, elems * c.b, 4 * elems, cols);
}

// A GEMM whose epilogue also does `flops_per_out` vector operations per output element and
// writes only `write_fraction` of its output (a fused epilogue).
KernelEstimate gemm_epilogue(const Ctx& c,
                             std::int64_t m,
                             std::int64_t n,
                             std::int64_t k,
                             double flops_per_out,
                             double write_fraction,
                             double extra_read) {
  KernelEstimate e = gemm_kernel(c.d, c.dtype, c.eff, m, n, k);
  double out_b = std::max(2.0, c.b);
  double vector = flops_per_out * f(m) * f(n);
  double vrate = (c.d.peak_rate(DType::kFp32) ? c.d.peak_rate(DType::kFp32)->value
                                              : matrix_peak(c.d, DType::kFp32).value) *
                 c.eff.vector;
  e.flops += vector;
  e.compute = e.compute + Seconds{vector / vrate};
  double extra = extra_read - (1 - write_fraction) * f(m) * f(n) * out_b;
  e.hbm_bytes += extra;
  double hbm = c.d.memory_bandwidth.value.value * c.eff.memory;
  e.memory = Seconds{e.hbm_bytes / hbm};
  // Where the GEMM's operands stream at their fitted rate, so do the epilogue's bytes.
  if (auto it = c.eff.stream.find("gemm"); it != c.eff.stream.end() && e.stream_bytes > 0) {
    e.stream_bytes += extra;
    e.memory = Seconds{it->second.traffic * e.stream_bytes / hbm};
  }
  e.steady = std::max(e.compute, e.memory);
  return e;
}

// Can one thread block hold `rows` full rows of `cols` fp32 accumulators on chip?
bool rows_fit(const devices::DeviceSpec& d, std::int64_t rows, std::int64_t cols) {
  double onchip = (d.onchip.scratchpad_per_unit ? d.onchip.scratchpad_per_unit->value.value : 0) +
                  (d.onchip.registers_per_unit ? d.onchip.registers_per_unit->value.value : 0);
  return f(rows) * f(cols) * 4 <= onchip;
}

std::vector<KernelEstimate> single(const Ctx& c, GpuOp op, const OpShape& s) {
  const auto& x = s.dims;
  switch (op) {
    case GpuOp::kGemm:
      return {x.size() == 4 ? gemm_kernel(c.d, c.dtype, c.eff, x[1], x[2], x[3], x[0])
                            : gemm_kernel(c.d, c.dtype, c.eff, x[0], x[1], x[2])};
    case GpuOp::kAttention:
      return {attention_kernel(c.d, c.dtype, c.eff,
                               AttentionShape{x[0], x[1], x[2], x[3], x[4], x[5], s.causal})};
    case GpuOp::kRmsNorm:
      return {norm_rows(c, "rmsnorm", x[0], x[1])};
    case GpuOp::kLayerNorm:
      return {norm_rows(c, "layernorm", x[0], x[1])};
    case GpuOp::kRmsNormBackward:
      return {norm_backward_rows(c, "rmsnorm", x[0], x[1])};
    case GpuOp::kLayerNormBackward:
      return {norm_backward_rows(c, "layernorm", x[0], x[1])};
    case GpuOp::kSoftmax:
      return {softmax_rows(c, x[0], x[1])};
    case GpuOp::kSoftmaxBackward:
      return {softmax_backward_rows(c, x[0], x[1])};
    case GpuOp::kCopy:
      return {stream_kernel(c.d, c.eff, "elementwise", "copy " + std::to_string(x[0]),
                            f(x[0]) * c.b, f(x[0]) * c.b, f(x[0]))};
    // PyTorch's unvectorised TensorIterator loop and its cat kernel: the same bytes as the
    // contiguous ops, at the rate fitted on their own kinds (bench/ops.py --only strided).
    case GpuOp::kStrided:
    case GpuOp::kCat:
      return {
          stream_kernel(c.d, c.eff, op == GpuOp::kCat ? "cat" : "strided",
                        std::string(op == GpuOp::kCat ? "cat " : "strided ") + std::to_string(x[0]),
                        f(x[0]) * c.b, f(x[0]) * c.b, f(x[0]))};
    case GpuOp::kWiden:
      // The unrolled loop casts on every load: its own rate (bench/ops.py --only casts).
      return {stream_kernel(c.d, c.eff, "widen", "widen " + std::to_string(x[0]), f(x[0]) * c.b,
                            4 * f(x[0]), f(x[0]))};
    case GpuOp::kAccumulate:
      // The unrolled loop casts both loads: the fp32 sum and the 16-bit gradient read, the
      // sum written (bench/ops.py --only accumulate).
      return {stream_kernel(c.d, c.eff, "accumulate", "accumulate " + std::to_string(x[0]),
                            f(x[0]) * (4 + c.b), 4 * f(x[0]), f(x[0]))};
    case GpuOp::kColumnSum:
      // PyTorch's reduce_kernel over the outer dimension: every element read once, the sums
      // written, a block's walk down its columns (bench/ops.py --only column_sum).
      return {stream_kernel(c.d, c.eff, "column_sum",
                            "column_sum " + std::to_string(x[0]) + "x" + std::to_string(x[1]),
                            f(x[0] * x[1]) * c.b, f(x[1]) * c.b, f(x[0] * x[1]), x[0])};
    case GpuOp::kStridedBinary:
      return {stream_kernel(c.d, c.eff, "strided_binary", "strided_binary " + std::to_string(x[0]),
                            2 * f(x[0]) * c.b, f(x[0]) * c.b, f(x[0]))};
    case GpuOp::kQuantize:
      // Reads the rows at the activations' width, writes one byte an element and a scale.
      return {stream_kernel(c.d, c.eff, "elementwise",
                            "quantize " + std::to_string(x[0]) + "x" + std::to_string(x[1]),
                            f(x[0] * x[1]) * c.b, f(x[0] * x[1]) + 4 * f(x[0]),
                            3 * f(x[0] * x[1]))};
    default:
      return {stream_kernel(c.d, c.eff, "elementwise", "elementwise " + std::to_string(x[0]),
                            2 * f(x[0]) * c.b, f(x[0]) * c.b, f(x[0]))};
  }
}

std::vector<KernelEstimate> unfused(const Ctx& c, GpuOp op, const std::vector<std::int64_t>& x) {
  switch (op) {
    case GpuOp::kRmsNormLinear:
      return {norm_rows(c, "rmsnorm", x[0], x[1]),
              gemm_kernel(c.d, c.dtype, c.eff, x[0], x[2], x[1])};
    case GpuOp::kGatedMlp:
      // As frameworks run it: one GEMM for gate and up, SiLU, the product, the down GEMM.
      return {gemm_kernel(c.d, c.dtype, c.eff, x[0], 2 * x[2], x[1]),
              stream_kernel(c.d, c.eff, "elementwise", "silu", f(x[0] * x[2]) * c.b,
                            f(x[0] * x[2]) * c.b, 5 * f(x[0] * x[2])),
              stream_kernel(c.d, c.eff, "elementwise", "mul", 2 * f(x[0] * x[2]) * c.b,
                            f(x[0] * x[2]) * c.b, f(x[0] * x[2])),
              gemm_kernel(c.d, c.dtype, c.eff, x[0], x[1], x[2])};
    case GpuOp::kGemmSoftmax:
      return {gemm_kernel(c.d, c.dtype, c.eff, x[0], x[1], x[2]), softmax_rows(c, x[0], x[1])};
    case GpuOp::kGemmLayerNorm:
      return {gemm_kernel(c.d, c.dtype, c.eff, x[0], x[1], x[2]),
              norm_rows(c, "layernorm", x[0], x[1])};
    default:  // LoRA: x W, x A, (x A) B, and the sum
      return {gemm_kernel(c.d, c.dtype, c.eff, x[0], x[2], x[1]),
              gemm_kernel(c.d, c.dtype, c.eff, x[0], x[3], x[1]),
              gemm_kernel(c.d, c.dtype, c.eff, x[0], x[2], x[3]),
              stream_kernel(c.d, c.eff, "elementwise", "add", 2 * f(x[0] * x[2]) * c.b,
                            f(x[0] * x[2]) * c.b, f(x[0] * x[2]))};
  }
}

std::optional<std::vector<KernelEstimate>> fused(const Ctx& c,
                                                 GpuOp op,
                                                 const std::vector<std::int64_t>& x,
                                                 std::string* why) {
  switch (op) {
    case GpuOp::kRmsNormLinear: {
      // The prologue needs each row's RMS: rows of 64 x K held on chip, or A read twice.
      bool hold =
          f(64 * x[1]) * c.b <=
          (c.d.onchip.scratchpad_per_unit ? c.d.onchip.scratchpad_per_unit->value.value : 0);
      double reread = hold ? 0 : f(x[0] * x[1]) * c.b;
      KernelEstimate e = gemm_epilogue(c, x[0], x[2], x[1], 0, 1, reread + f(x[1]) * c.b);
      e.name = "rmsnorm_linear (fused) " + e.name.substr(5);
      return std::vector<KernelEstimate>{e};
    }
    case GpuOp::kGatedMlp: {
      KernelEstimate up = gemm_epilogue(c, x[0], 2 * x[2], x[1], 3, 0.5, 0);
      up.name = "gate_up_silu_mul (fused) " + up.name.substr(5);
      return std::vector<KernelEstimate>{up, gemm_kernel(c.d, c.dtype, c.eff, x[0], x[1], x[2])};
    }
    case GpuOp::kGemmSoftmax:
    case GpuOp::kGemmLayerNorm: {
      if (!rows_fit(c.d, 64, x[1])) {
        *why = "a thread block cannot hold 64 rows of " + std::to_string(x[1]) +
               " fp32 accumulators on chip (registers + shared memory of one " +
               (c.d.onchip.compute_unit_name.empty() ? "unit" : c.d.onchip.compute_unit_name) + ")";
        return std::nullopt;
      }
      bool ln = op == GpuOp::kGemmLayerNorm;
      KernelEstimate e =
          gemm_epilogue(c, x[0], x[1], x[2], ln ? 8 : 5, 1, ln ? 2 * f(x[1]) * c.b : 0);
      e.name = std::string(ln ? "gemm_layernorm" : "gemm_softmax") + " (fused) " + e.name.substr(5);
      return std::vector<KernelEstimate>{e};
    }
    default: {
      // LoRA as one GEMM over the concatenated inner dimension: [x, xA] [W; B].
      KernelEstimate xa = gemm_kernel(c.d, c.dtype, c.eff, x[0], x[3], x[1]);
      KernelEstimate main = gemm_kernel(c.d, c.dtype, c.eff, x[0], x[2], x[1] + x[3]);
      main.name = "lora_linear (fused) " + main.name.substr(5);
      return std::vector<KernelEstimate>{xa, main};
    }
  }
}

}  // namespace

std::optional<OpEstimate> estimate_gpu_op(const devices::DeviceSpec& d,
                                          DType dtype,
                                          const GpuEfficiency& eff,
                                          const GpuOpInfo& info,
                                          const OpShape& shape,
                                          bool fuse,
                                          std::string* why) {
  Ctx c{d, dtype, eff, devices::dtype_bytes(dtype)};
  OpEstimate o;
  o.op = info.name;
  o.fused = info.compound && fuse;
  if (!info.compound) {
    o.kernels = single(c, info.op, shape);
  } else if (fuse) {
    auto k = fused(c, info.op, shape.dims, why);
    if (!k)
      return std::nullopt;
    o.kernels = *k;
  } else {
    o.kernels = unfused(c, info.op, shape.dims);
  }
  for (const KernelEstimate& k : o.kernels) {
    o.time += k.time();
    o.unequal_tail += k.unequal_tail;
    o.flops += k.flops;
    o.hbm_bytes += k.hbm_bytes;
  }
  if (info.op == GpuOp::kAttention) {
    const auto& x = shape.dims;
    AttentionShape a{x[0], x[1], x[2], x[3], x[4], x[5], shape.causal};
    for (const KernelEstimate& k : attention_backward_kernels(d, dtype, eff, a))
      o.backward_beside += k.time();
  }
  if (d.tdp)
    o.energy = d.tdp->value * o.time;
  return o;
}

}  // namespace yirage::costmodel
