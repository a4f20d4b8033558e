#include "costmodel/gpu_kernel.h"

#include "devices/support/check.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace yirage::costmodel {

using devices::DType;
using devices::Seconds;

devices::FlopsPerSec matrix_peak(const devices::DeviceSpec& d, DType dtype) {
  // A type the device lacks runs at the next wider type it has (fp8 -> bf16/fp16 -> fp32).
  static constexpr std::array kWider = {DType::kFp8,  DType::kInt8, DType::kBf16, DType::kFp16,
                                        DType::kTf32, DType::kFp32, DType::kFp64};
  auto start = std::find(kWider.begin(), kWider.end(), dtype);
  for (auto it = start; it != kWider.end(); ++it) {
    if (auto r = d.peak_rate(*it))
      return *r;
  }
  CHECK(!d.peak.empty()) << d.name << " has no peak rate";
  return d.peak.begin()->second.value;
}

Seconds kernel_launch(const GpuEfficiency& eff) {
  return eff.in_graph ? eff.graph_launch : eff.launch;
}

namespace {

std::int64_t compute_units(const devices::DeviceSpec& d) {
  return d.onchip.compute_units ? std::max<std::int64_t>(1, d.onchip.compute_units->value) : 1;
}

double vector_peak(const devices::DeviceSpec& d) {
  if (auto r = d.peak_rate(DType::kFp32))
    return r->value;
  return matrix_peak(d, DType::kFp32).value;
}

double hbm(const devices::DeviceSpec& d, const GpuEfficiency& eff) {
  return d.memory_bandwidth.value.value * eff.memory;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

struct Tile {
  std::int64_t m;
  std::int64_t n;
};

// The k-depth of one pipeline stage: 128 bytes of each row (CUTLASS's usual choice).
std::int64_t tile_k(DType t) {
  return static_cast<std::int64_t>(128 / devices::dtype_bytes(t));
}

KernelEstimate gemm_with_tile(const devices::DeviceSpec& d,
                              DType dtype,
                              const GpuEfficiency& eff,
                              Tile tile,
                              std::int64_t m,
                              std::int64_t n,
                              std::int64_t k,
                              std::int64_t batch) {
  double b = devices::dtype_bytes(dtype);
  double out_b = std::max(2.0, b);  // fp8/int8 GEMMs write 16-bit results
  double stage = static_cast<double>((tile.m + tile.n) * tile_k(dtype)) * b;
  double smem = d.onchip.scratchpad_per_unit ? d.onchip.scratchpad_per_unit->value.value : 0;
  // Thread blocks per compute unit: as many double-buffered stages as shared memory holds.
  std::int64_t per_unit =
      smem > 0 ? std::clamp<std::int64_t>(static_cast<std::int64_t>(smem / (2 * stage)), 0, 2) : 1;
  KernelEstimate e;
  if (per_unit == 0)
    return e;  // does not fit: tiles == 0 marks it infeasible
  std::int64_t units = compute_units(d);
  std::int64_t slots = units * per_unit;
  e.tiles = ceil_div(m, tile.m) * ceil_div(n, tile.n) * batch;
  e.waves = ceil_div(e.tiles, slots);
  e.wave_efficiency = static_cast<double>(e.tiles) / static_cast<double>(e.waves * slots);
  e.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
            static_cast<double>(batch);
  // Each wave runs full tiles (tile and wave quantization): per_unit blocks share a unit.
  bool narrow = dtype == DType::kFp8 || dtype == DType::kInt8;
  double fraction = narrow && eff.matrix_8bit > 0 ? eff.matrix_8bit : eff.matrix;
  double unit_rate = matrix_peak(d, dtype).value * fraction / static_cast<double>(units);
  // The matrix units read their operands from shared memory: 32 banks of 4 bytes per clock
  // (CUDA C++ Programming Guide, "Shared Memory"), and with a 2 x 2 grid of warps each
  // operand element is read twice per k-step. A small tile cannot feed the units.
  if (d.onchip.clock) {
    double smem_bw = 128.0 * d.onchip.clock->value.value;
    double smem_rate = 2.0 * static_cast<double>(tile.m * tile.n) * smem_bw /
                       (2.0 * static_cast<double>(tile.m + tile.n) * b);
    unit_rate = std::min(unit_rate, smem_rate);
  }
  double tile_flops = 2.0 * static_cast<double>(tile.m * tile.n * k);
  // The blocks resident on a unit time-share it rather than run in lock-step waves: the
  // busiest unit runs ceil(tiles / units) tiles at the unit's rate.
  e.compute = Seconds{static_cast<double>(ceil_div(e.tiles, units)) * tile_flops / unit_rate};
  // HBM traffic: the concurrent tiles of a wave form a sqrt(w) x sqrt(w) block that shares
  // its rows of A and columns of B through L2; an operand that fits half of L2 is read once.
  double w = std::sqrt(static_cast<double>(std::min(e.tiles, slots)));
  double l2 = d.onchip.l2 ? d.onchip.l2->value.value : 0;
  double a_bytes = static_cast<double>(m * k) * b * static_cast<double>(batch);
  double b_bytes = static_cast<double>(k * n) * b * static_cast<double>(batch);
  double a_reads = a_bytes <= l2 / 2 ? 1 : std::ceil(static_cast<double>(ceil_div(n, tile.n)) / w);
  double b_reads = b_bytes <= l2 / 2 ? 1 : std::ceil(static_cast<double>(ceil_div(m, tile.m)) / w);
  double c_bytes = static_cast<double>(m * n) * out_b * static_cast<double>(batch);
  e.hbm_bytes = a_bytes * a_reads + b_bytes * b_reads + c_bytes;
  e.stream_bytes = a_bytes + b_bytes + c_bytes;
  e.memory = Seconds{e.hbm_bytes / hbm(d, eff)};
  if (narrow && eff.unit_stream_8bit > 0) {
    // The busiest unit's tiles each stream a k-deep strip of A and of B, on top of the
    // kernel's traffic at the HBM rate (GpuEfficiency::unit_stream_8bit).
    double unit_bytes = static_cast<double>(ceil_div(e.tiles, units) * (tile.m + tile.n) * k) * b;
    e.memory = e.memory + Seconds{unit_bytes / eff.unit_stream_8bit};
  }
  e.steady = std::max(e.compute, e.memory);
  double first = static_cast<double>(std::min(e.tiles, slots)) * stage;
  e.ramp_up = Seconds{first / hbm(d, eff)};
  double last = static_cast<double>(std::min(e.tiles, slots) * tile.m * tile.n) * out_b;
  e.ramp_down = Seconds{last / hbm(d, eff)};
  e.launch = kernel_launch(eff);
  e.host = eff.in_graph ? Seconds{} : eff.host;
  e.tile =
      std::to_string(tile.m) + "x" + std::to_string(tile.n) + "x" + std::to_string(tile_k(dtype));
  return e;
}

const GpuEfficiency::StreamFit* stream_fit(const GpuEfficiency& eff, const std::string& kind) {
  auto it = eff.stream.find(kind);
  return it == eff.stream.end() ? nullptr : &it->second;
}

// Where fitted (GpuEfficiency::stream, kind "gemm" or "attention"), a matrix-unit kernel's
// operands stream at the rate the library's kernels of that kind reach (GEMVs, attention over
// a KV cache), in place of the tile model's HBM term, after a ramp while the stream fills (the
// time of its first bytes, up to the fitted `latency`); the kernel takes the longer of that
// stream and its tiles' arithmetic.
void operand_stream(const devices::DeviceSpec& d,
                    const GpuEfficiency& eff,
                    const GpuEfficiency::StreamFit* fit,
                    KernelEstimate& e) {
  if (fit == nullptr || e.stream_bytes <= 0)
    return;
  Seconds bytes{e.stream_bytes / hbm(d, eff)};
  Seconds ramp{std::min(bytes.value, fit->latency.value)};
  e.memory = Seconds{fit->traffic * bytes.value};
  if ((ramp + e.memory).value > (e.ramp_up + e.compute + e.ramp_down).value) {
    e.ramp_up = ramp;
    e.ramp_down = Seconds{};
    e.tile += " (operand stream)";
  }
  e.steady = std::max(e.compute, e.memory);
}

// Split-K (CUTLASS's "split-K serial/parallel", cuBLAS's heuristics for small M x N and long
// K): `split` slices of K run as separate tiles, each writing an fp32 partial product;
// a second kernel reduces them. Worth it only when M x N has fewer tiles than the device
// has slots, so that otherwise idle units share the K loop.
constexpr std::int64_t kMaxSplitK = 16;

KernelEstimate split_k(const devices::DeviceSpec& d,
                       DType dtype,
                       const GpuEfficiency& eff,
                       Tile tile,
                       std::int64_t m,
                       std::int64_t n,
                       std::int64_t k,
                       std::int64_t batch,
                       std::int64_t split) {
  std::int64_t slice = ceil_div(k, split);
  if (slice < 4 * tile_k(dtype))
    return {};  // tiles == 0: not a candidate
  KernelEstimate e = gemm_with_tile(d, dtype, eff, tile, m, n, slice, batch * split);
  if (e.tiles == 0 || e.waves > 1)
    return {};
  // Partials in fp32 (bytes: split x M x N x 4 written, read back) replace the split x M x N
  // outputs counted above; the reduction writes the M x N result.
  double out_b = std::max(2.0, devices::dtype_bytes(dtype));
  double mn = static_cast<double>(m * n * batch);
  double partial = static_cast<double>(split) * mn * 4;
  e.hbm_bytes += partial - static_cast<double>(split) * mn * out_b + partial + mn * out_b;
  e.stream_bytes += partial - static_cast<double>(split) * mn * out_b + partial + mn * out_b;
  e.memory = Seconds{e.hbm_bytes / hbm(d, eff)};
  e.steady = std::max(e.compute, e.memory);
  // The reduction kernel is queued behind the GEMM, so it costs the gap between back-to-back
  // kernels (as in a graph), not a second lone launch.
  e.launch = kernel_launch(eff) + eff.graph_launch;
  e.tile += " split-k " + std::to_string(split);
  return e;
}

// Stream-K (Osama et al., PPoPP'23; cuBLAS's persistent kernels on Hopper; where
// GpuEfficiency::stream_k): the tiles of the full waves run one per unit, and the K loops of the
// last, partial wave are split evenly over every unit, so no unit idles through the tail. The units
// that share a tile write fp32 partials that one of them reads back. `e` is the tile's estimate
// in whole waves.
KernelEstimate stream_k(const devices::DeviceSpec& d,
                        const GpuEfficiency& eff,
                        Tile tile,
                        KernelEstimate e) {
  std::int64_t units = compute_units(d);
  if (e.tiles <= units || e.tiles % units == 0)
    return {};  // tiles == 0: nothing to even out
  double busiest = static_cast<double>(ceil_div(e.tiles, units));
  double even = static_cast<double>(e.tiles) / static_cast<double>(units);
  e.compute = Seconds{e.compute.value * even / busiest};
  double fixup = 2.0 * static_cast<double>(units * tile.m * tile.n) * 4;
  e.hbm_bytes += fixup;
  e.stream_bytes += fixup;
  e.memory = Seconds{e.hbm_bytes / hbm(d, eff)};
  e.steady = std::max(e.compute, e.memory);
  e.tile += " stream-k";
  return e;
}

}  // namespace

double attention_backward_time(const GpuEfficiency& e,
                               double forward,
                               double unequal_tail,
                               double beside) {
  double ratio = e.attention_backward > 0 ? e.attention_backward : kFlashBackward;
  return ratio * (forward - unequal_tail / 2) + beside;
}

GpuEfficiency sustained(const GpuEfficiency& e) {
  GpuEfficiency out = e;
  if (e.sustained_matrix > 0) {
    out.matrix *= e.sustained_matrix;
    out.attention *= e.sustained_matrix;
    out.attention_causal *= e.sustained_matrix;
    out.matrix_8bit *= e.sustained_matrix;
  }
  return out;
}

double duty_factor(const GpuEfficiency& e, double duty) {
  if (e.duty_slope <= 0 || !std::isfinite(duty))
    return 1;
  double idle = 1 - std::clamp(duty, 0.0, 1.0);
  return std::clamp(1 - e.duty_slope * idle, std::min(e.duty_floor, 1.0), 1.0);
}

GpuEfficiency at_duty(const GpuEfficiency& e, double duty) {
  double r = duty_factor(e, duty);
  GpuEfficiency out = e;
  if (r < 1) {  // fitted on GEMMs alone: fused attention keeps the sustained rate
    out.matrix /= r;
    out.matrix_8bit /= r;
  }
  return out;
}

KernelEstimate gemm_kernel(const devices::DeviceSpec& d,
                           DType dtype,
                           const GpuEfficiency& eff,
                           std::int64_t m,
                           std::int64_t n,
                           std::int64_t k,
                           std::int64_t batch) {
  CHECK(m > 0 && n > 0 && k > 0 && batch > 0) << "empty GEMM";
  static constexpr std::array<Tile, 6> kTiles = {
      {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}}};
  KernelEstimate best;
  bool fixed = (dtype == DType::kFp8 || dtype == DType::kInt8) && eff.unit_stream_8bit > 0;
  static const std::string gemm_fit = "gemm";
  const GpuEfficiency::StreamFit* operands = fixed ? nullptr : stream_fit(eff, gemm_fit);
  for (Tile t : kTiles) {
    if (fixed && (t.m != 128 || t.n != 128))
      continue;
    for (std::int64_t split = 1; split <= (fixed ? 1 : kMaxSplitK); split *= 2) {
      KernelEstimate e = split == 1 ? gemm_with_tile(d, dtype, eff, t, m, n, k, batch)
                                    : split_k(d, dtype, eff, t, m, n, k, batch, split);
      if (e.tiles == 0)
        continue;
      operand_stream(d, eff, operands, e);
      if (best.tiles == 0 || e.time() < best.time())
        best = e;  // ties keep the larger tile and the fewer splits
    }
    if (fixed || !eff.stream_k)
      continue;
    KernelEstimate e = stream_k(d, eff, t, gemm_with_tile(d, dtype, eff, t, m, n, k, batch));
    if (e.tiles == 0)
      continue;
    operand_stream(d, eff, operands, e);
    if (e.time() < best.time())
      best = e;
  }
  CHECK(best.tiles > 0) << "no GEMM tile fits the shared memory of " << d.name;
  best.name = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
              (batch > 1 ? " x" + std::to_string(batch) : "");
  return best;
}

KernelEstimate stream_kernel(const devices::DeviceSpec& d,
                             const GpuEfficiency& eff,
                             const std::string& kind,
                             std::string name,
                             double read_bytes,
                             double write_bytes,
                             double flops,
                             std::int64_t row_length) {
  KernelEstimate e;
  e.name = std::move(name);
  e.tile = "stream";
  e.flops = flops;
  e.hbm_bytes = read_bytes + write_bytes;
  std::int64_t units = compute_units(d);
  e.tiles = units;
  e.waves = 1;
  e.compute = Seconds{flops / (vector_peak(d) * eff.vector)};
  e.memory = Seconds{e.hbm_bytes / hbm(d, eff)};
  e.steady = std::max(e.compute, e.memory);
  // The first and last 128-byte rows of every unit's share cannot overlap anything.
  double edge = std::min(e.hbm_bytes, 128.0 * 128.0 * static_cast<double>(units));
  e.ramp_up = Seconds{std::min(edge, read_bytes) / hbm(d, eff)};
  e.ramp_down = Seconds{std::min(edge, write_bytes) / hbm(d, eff)};
  e.launch = kernel_launch(eff);
  e.host = eff.in_graph ? Seconds{} : eff.host;
  if (auto it = eff.stream.find(kind); it != eff.stream.end()) {
    // A fitted kernel (GpuEfficiency::stream): latency, then the stream of traffic x bytes at
    // the achievable HBM rate and a block's walk along its row (per_column x the row length),
    // which overlap: the root of the sum of their squares (the walk alone for one row, the
    // stream alone for many short ones).
    e.tile = "stream (fitted)";
    e.fitted_start = true;
    const GpuEfficiency::StreamFit& fit = it->second;
    e.compute = Seconds{fit.vector > 0 ? flops / (vector_peak(d) * fit.vector) : 0};
    e.memory = Seconds{fit.traffic * e.hbm_bytes / hbm(d, eff)};
    double walk = fit.per_column.value * static_cast<double>(row_length);
    e.steady = Seconds{std::hypot(walk, std::max(e.memory.value, e.compute.value))};
    e.ramp_up = Seconds{};
    e.ramp_down = Seconds{};
    // The fitted latency holds a lone launch; in a graph the launch shrinks to graph_launch.
    double fixed = fit.latency.value;
    e.launch = eff.in_graph ? Seconds{std::max(eff.graph_launch.value,
                                               fixed - eff.launch.value + eff.graph_launch.value)}
                            : Seconds{fixed};
  }
  return e;
}

double prompt_attention_width(std::int64_t head_dim, const GpuEfficiency& eff) {
  // cuDNN's sm90 flash kernels compute the head dimension in a tile of 64 columns up to 64
  // and of 128 above (their names: 64x128x64 at 64, 64x128x128 at 80, 96 and 128; measured,
  // H200/ops_attention_head_dims.csv); above 128, whole.
  double tile = head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : static_cast<double>(head_dim);
  double c = eff.attention_score_width;
  return 128 * (tile + c) / (128 + c);
}

KernelEstimate attention_kernel(const devices::DeviceSpec& d,
                                DType dtype,
                                const GpuEfficiency& eff,
                                const AttentionShape& s) {
  CHECK(s.heads % s.kv_heads == 0) << "heads must be a multiple of kv_heads";
  auto f = [](std::int64_t v) {
    return static_cast<double>(v);
  };
  double b = devices::dtype_bytes(dtype);
  // Causal masking skips the upper triangle: each query sees on average (kv_len - q_len) +
  // (q_len + 1) / 2 keys.
  double keys = s.causal ? f(s.kv_len - s.q_len) + f(s.q_len + 1) / 2 : f(s.kv_len);
  double flops = 4.0 * f(s.batch * s.heads * s.q_len) * keys * f(s.head_dim);
  double q_o = 2.0 * f(s.batch * s.heads * s.q_len * s.head_dim) * b;
  double kv = 2.0 * f(s.batch * s.kv_heads * s.kv_len * s.head_dim) * b;
  KernelEstimate e;
  e.flops = flops;
  e.hbm_bytes = q_o + kv;
  std::int64_t units = compute_units(d);
  std::int64_t q_tiles = s.q_len > 1 ? (s.q_len + 127) / 128 : 1;
  e.tiles = s.q_len > 1 ? s.batch * s.heads * q_tiles : units;  // decode splits the cache
  e.waves = (e.tiles + units - 1) / units;
  e.wave_efficiency = f(e.tiles) / f(e.waves * units);
  bool causal_prompt = s.causal && s.q_len > 1 && eff.attention_causal > 0;
  double unit_rate = matrix_peak(d, dtype).value *
                     (causal_prompt ? eff.attention_causal : eff.attention) / f(units);
  // A prompt's tile computes 128 query rows however many are real: a short block of queries
  // (a decode step's GQA group run as one) costs the whole tile. Under a causal mask the
  // i-th block of 128 queries computes i + 1 whole blocks of 128 keys, the diagonal one
  // included: (n + 1) / 2 blocks on average over n, where the useful keys are half of n.
  double computed = keys;
  if (s.causal && s.q_len > 1)
    computed = f(s.kv_len - s.q_len) + 128.0 * f(q_tiles + 1) / 2;
  double per_key = s.q_len > 1 ? 4.0 * 128 * prompt_attention_width(s.head_dim, eff) : 0;
  double per_tile = s.q_len > 1 ? per_key * computed : flops / f(e.tiles);
  e.compute = Seconds{f(e.waves) * per_tile / unit_rate};
  if (s.causal && s.q_len > 1) {
    // Tiles of unequal work do not run in waves: a unit takes the next tile when its last one
    // ends, so the kernel lasts the units' average share of the work and then, on the unit
    // that took the last tile, about half the longest one (the last block of queries, which
    // sees every key). The backward's main kernel carries half of it (attention_backward_time).
    double longest = per_key * (f(s.kv_len - s.q_len) + 128.0 * f(q_tiles));
    e.unequal_tail = Seconds{longest / 2 / unit_rate};
    e.compute = Seconds{f(e.tiles) * per_tile / f(units) / unit_rate} + e.unequal_tail;
  }
  e.memory = Seconds{e.hbm_bytes / hbm(d, eff)};
  e.steady = std::max(e.compute, e.memory);
  e.ramp_up =
      Seconds{std::min(e.hbm_bytes, f(std::min(e.tiles, units)) * 128 * f(s.head_dim) * b * 2) /
              hbm(d, eff)};
  e.ramp_down = Seconds{f(std::min(e.tiles, units)) * 128 * f(s.head_dim) * b / hbm(d, eff)};
  e.launch = kernel_launch(eff);
  e.host = eff.in_graph ? Seconds{} : eff.host;
  e.tile = s.q_len > 1 ? "128 queries x head" : "KV split";
  // The operand stream is fitted on (and applies to) attention over a KV cache split across
  // the units; a block of queries per head (a prompt, or a decode step's GQA group run as
  // one) keeps the tile model's traffic.
  e.stream_bytes = s.q_len > 1 ? 0 : e.hbm_bytes;
  static const std::string attention_fit = "attention";
  operand_stream(d, eff, stream_fit(eff, attention_fit), e);
  e.name = std::string(s.q_len > 1 ? "attention prefill" : "attention decode") +
           (s.causal ? " (causal)" : "");
  return e;
}

std::vector<KernelEstimate> attention_backward_kernels(const devices::DeviceSpec& d,
                                                       DType dtype,
                                                       const GpuEfficiency& eff,
                                                       const AttentionShape& s) {
  if (s.q_len <= 1)
    return {};
  auto f = [](std::int64_t v) {
    return static_cast<double>(v);
  };
  double b = devices::dtype_bytes(dtype);
  double rows = f(s.batch * s.heads * s.q_len);
  double q = rows * f(s.head_dim);
  std::vector<KernelEstimate> out = {
      stream_kernel(d, eff, "elementwise", "attention backward dot(dO, O)", 2 * q * b, rows * 4,
                    2 * q),
      stream_kernel(d, eff, "elementwise", "attention backward dQ to 16 bits", q * 4, q * b, q)};
  if (s.kv_heads < s.heads) {
    double keys = f(s.batch * s.kv_len * s.head_dim);
    out.push_back(stream_kernel(d, eff, "elementwise", "attention backward dK, dV over groups",
                                2 * keys * f(s.heads) * b, 2 * keys * f(s.kv_heads) * b,
                                2 * keys * f(s.heads)));
  }
  return out;
}

}  // namespace yirage::costmodel
