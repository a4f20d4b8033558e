#include "costmodel/gpu_calibration.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <vector>

namespace yirage::costmodel {

namespace {

// The dtype a measured row names (bf16 where it names none the registry knows).
devices::DType row_dtype(const MeasuredRow& row) {
  devices::DType dtype = devices::DType::kBf16;
  for (devices::DType t : devices::kAllDTypes) {
    if (devices::dtype_name(t) == row.dtype)
      dtype = t;
  }
  return dtype;
}

}  // namespace

std::optional<OpEstimate> estimate_op_row(const MeasuredRow& row,
                                          const devices::DeviceRegistry& registry,
                                          const GpuEfficiency& eff,
                                          std::string* why) {
  const devices::DeviceSpec* d = registry.find(row.device);
  if (d == nullptr) {
    *why = "unknown device '" + row.device + "'";
    return std::nullopt;
  }
  // A backward row is priced from its causal forward (attention_backward_time).
  bool backward = row.op == "attention_backward";
  bool causal = row.op == "attention_causal" || backward;
  const GpuOpInfo* info = find_gpu_op(causal ? "attention" : row.op);
  if (info == nullptr) {
    *why = "unknown op '" + row.op + "'";
    return std::nullopt;
  }
  OpShape shape;
  shape.causal = causal;
  if (std::string err = parse_op_shape(*info, row.shape, &shape); !err.empty()) {
    *why = err;
    return std::nullopt;
  }
  devices::DType dtype = row_dtype(row);
  std::optional<OpEstimate> est = estimate_gpu_op(*d, dtype, eff, *info, shape, false, why);
  if (est && row.op == "gemm" && eff.duty_slope > 0) {
    // bench/ops.py times each call after triton's do_bench zeroes its L2 flush buffer, so the
    // GEMM holds the GPU for its share of the pair alone and runs at that duty's clock; with
    // no flush (flush_bytes 0) the calls run back to back, at duty 1.
    double bytes = row.flush_bytes.value_or(kDoBenchFlushBytes);
    double flush = bytes > 0 ? bytes / (d->memory_bandwidth.value.value * eff.memory) +
                                   kernel_launch(eff).value
                             : 0;
    double duty = est->time.value / (est->time.value + flush);
    est = estimate_gpu_op(*d, dtype, at_duty(eff, duty), *info, shape, false, why);
  }
  if (est && backward) {
    // Timed alone through torch.autograd.grad, which takes the host longer than small
    // shapes take the GPU.
    est->op = row.op;
    est->time = devices::Seconds{
        std::max(eff.autograd_call.value,
                 attention_backward_time(eff, est->time.value, est->unequal_tail.value,
                                         est->backward_beside.value))};
  }
  return est;
}

namespace {

struct Sample {
  const MeasuredRow* row;
  bool fit;
};

// Model times without launch overhead, and the kernels that pay it (a compound op runs
// several; a fitted memory-bound kernel pays its own latency instead), for every sample of
// the fit split (0 elsewhere). The model is linear in the launch overhead.
struct Times {
  std::vector<double> base;
  std::vector<double> kernels;
};

Times times(const std::vector<Sample>& s,
            const devices::DeviceRegistry& r,
            const GpuEfficiency& eff,
            bool fit_split) {
  Times t{std::vector<double>(s.size(), 0), std::vector<double>(s.size(), 0)};
  GpuEfficiency e = eff;
  std::string why;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i].fit != fit_split)
      continue;
    e.launch = devices::Seconds{};
    auto est = estimate_op_row(*s[i].row, r, e, &why);
    e.launch = devices::Seconds{1e-6};
    auto one = estimate_op_row(*s[i].row, r, e, &why);
    if (est && one) {
      t.base[i] = est->time.value;
      t.kernels[i] = std::round((one->time.value - est->time.value) / 1e-6);
    }
  }
  return t;
}

struct Objective {
  double error = 0;
  double launch = 0;
};

Objective evaluate(const std::vector<Sample>& s,
                   const devices::DeviceRegistry& r,
                   const GpuEfficiency& eff) {
  Times t = times(s, r, eff, true);
  // d/dL sum ((base + n L - m) / m)^2 = 0
  double num = 0;
  double den = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!s[i].fit)
      continue;
    double m = s[i].row->time_s;
    num += t.kernels[i] * (m - t.base[i]) / (m * m);
    den += t.kernels[i] * t.kernels[i] / (m * m);
  }
  Objective o;
  o.launch = den > 0 ? std::max(0.0, num / den) : 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!s[i].fit)
      continue;
    double rel = (t.base[i] + t.kernels[i] * o.launch - s[i].row->time_s) / s[i].row->time_s;
    o.error += rel * rel;
  }
  return o;
}

double mape(const std::vector<Sample>& s,
            const devices::DeviceRegistry& r,
            const GpuEfficiency& eff,
            bool fit_split) {
  double sum = 0;
  std::size_t n = 0;
  std::string why;
  for (const Sample& x : s) {
    if (x.fit != fit_split)
      continue;
    auto est = estimate_op_row(*x.row, r, eff, &why);
    if (!est)
      continue;
    sum += std::fabs(est->time.value - x.row->time_s) / x.row->time_s;
    ++n;
  }
  return n > 0 ? 100 * sum / static_cast<double>(n) : 0;
}

GpuEfficiency coordinate_descent(const std::vector<Sample>& s,
                                 const devices::DeviceRegistry& r,
                                 const GpuEfficiency& start,
                                 bool fit_memory) {
  GpuEfficiency best = start;
  // Causal attention over a prompt gets its own fraction where the fit split has such rows.
  bool causal = std::any_of(
      s.begin(), s.end(), [](const Sample& x) { return x.fit && x.row->op == "attention_causal"; });
  if (causal && best.attention_causal == 0)
    best.attention_causal = best.attention;
  double best_error = evaluate(s, r, best).error;
  std::vector<double GpuEfficiency::*> params = {&GpuEfficiency::matrix, &GpuEfficiency::attention,
                                                 &GpuEfficiency::vector};
  if (fit_memory)
    params.push_back(&GpuEfficiency::memory);
  if (causal)
    params.push_back(&GpuEfficiency::attention_causal);
  for (int round = 0; round < 3; ++round) {
    for (double GpuEfficiency::*p : params) {
      for (int step = 5; step <= 100; ++step) {
        GpuEfficiency trial = best;
        trial.*p = step / 100.0;
        double err = evaluate(s, r, trial).error;
        if (err < best_error) {
          best_error = err;
          best = trial;
        }
      }
    }
  }
  best.launch = devices::Seconds{evaluate(s, r, best).launch};
  return best;
}

// Softmax's generic kinds before its kernels' (fit_stream fits each generic kind with the
// kernels' fits left out, so that its rows fall back to it).
constexpr std::array<const char*, 22> kStreamKinds = {"rmsnorm",
                                                      "layernorm",
                                                      "rmsnorm_backward",
                                                      "layernorm_backward",
                                                      "softmax",
                                                      "softmax_warp",
                                                      "softmax_warp_wide",
                                                      "softmax_reg",
                                                      "softmax_reg_wide",
                                                      "softmax_smem",
                                                      "softmax_plain",
                                                      "softmax_backward",
                                                      "softmax_backward_warp",
                                                      "softmax_backward_smem",
                                                      "softmax_backward_plain",
                                                      "elementwise",
                                                      "strided",
                                                      "strided_binary",
                                                      "cat",
                                                      "widen",
                                                      "accumulate",
                                                      "column_sum"};

// Kinds whose kernel runs at another rate in each dtype: PyTorch's norm kernel loads four
// elements a thread whatever their width, and its 16- and 32-bit rows measured apart on H200
// (H200/ops_rows.csv). Where a device's rows of such a kind hold two dtypes or more, each
// dtype is fitted on its own rows too, as "<kind>.<dtype>" (GpuEfficiency::stream).
constexpr std::array<const char*, 4> kDtypeStreamKinds = {"rmsnorm", "layernorm",
                                                          "rmsnorm_backward", "layernorm_backward"};

// Whether `row` is one of the rows of stream kind `kind`: its op's, its op's in one dtype
// ("rmsnorm.fp32"), or for softmax and its backward, its op's (the generic kind) or its
// kernel's (softmax_kernel).
bool of_stream_kind(const MeasuredRow& row, const std::string& kind) {
  if (row.op == kind)
    return true;
  if (std::size_t dot = kind.find('.'); dot != std::string::npos)
    return row.op == kind.substr(0, dot) &&
           devices::dtype_name(row_dtype(row)) == kind.substr(dot + 1);
  if (row.op != "softmax" && row.op != "softmax_backward")
    return false;
  const GpuOpInfo* info = find_gpu_op(row.op);
  OpShape shape;
  if (info == nullptr || !parse_op_shape(*info, row.shape, &shape).empty())
    return false;
  return softmax_kernel(shape.dims[1], devices::dtype_bytes(row_dtype(row)),
                        row.op == "softmax_backward") == kind;
}

// The fits of `kind` in one dtype, and of its kernels where `kind` is softmax's generic kind or
// its backward's, left out while `kind` is fitted.
void drop_kernel_kinds(GpuEfficiency& eff, const std::string& kind) {
  for (auto it = eff.stream.lower_bound(kind + ".");
       it != eff.stream.end() && it->first.compare(0, kind.size() + 1, kind + ".") == 0;)
    it = eff.stream.erase(it);
  if (kind != "softmax" && kind != "softmax_backward")
    return;
  for (const char* k : kStreamKinds) {
    std::string s = k;
    bool kernel = s.size() > kind.size() && s.compare(0, kind.size() + 1, kind + "_") == 0;
    if (kernel && (kind == "softmax_backward" || s.find("backward") == std::string::npos))
      eff.stream.erase(s);
  }
}

// One row of a stream fit: the model time is latency + hypot(per_column x columns,
// max(traffic x bytes_time, arithmetic / vector)).
struct StreamPoint {
  double bytes_time;  // the minimal bytes at the achievable HBM rate
  double columns;     // the row length (0: not a row-wise op)
  double arithmetic;  // the FLOPs at the vector peak
  double measured;
};

// The best (traffic, per_column) for one `vector` (0: bytes alone) by least squared relative
// error, over the grid of fit_stream with the latency in closed form; `*err` is that error.
GpuEfficiency::StreamFit best_stream(const std::vector<StreamPoint>& fit,
                                     double vector,
                                     double* err) {
  *err = 1e300;
  GpuEfficiency::StreamFit best;
  std::vector<double> body(fit.size());
  for (int pc = 0; pc <= 200; ++pc) {  // per column, 0 to 4 ns by 0.02 ns
    double per_column = pc * 0.02e-9;
    for (int step = 50; step <= 800; ++step) {
      double traffic = step / 100.0;
      double num = 0;
      double den = 0;
      for (std::size_t i = 0; i < fit.size(); ++i) {
        const StreamPoint& p = fit[i];
        double bound = std::max(traffic * p.bytes_time, vector > 0 ? p.arithmetic / vector : 0);
        body[i] = std::hypot(bound, per_column * p.columns);
        num += (p.measured - body[i]) / (p.measured * p.measured);
        den += 1 / (p.measured * p.measured);
      }
      double latency = std::max(0.0, num / den);
      double e = 0;
      for (std::size_t i = 0; i < fit.size(); ++i) {
        double rel = (latency + body[i] - fit[i].measured) / fit[i].measured;
        e += rel * rel;
      }
      if (e < *err) {
        *err = e;
        best = {traffic, devices::Seconds{latency}, devices::Seconds{per_column}, vector};
      }
    }
  }
  return best;
}

// Fits GpuEfficiency::stream[kind] (fit_stream) where it has at least 4 rows in each split;
// `*rows` is how many it has in the smaller split.
void fit_stream_kind(const std::vector<Sample>& s,
                     const devices::DeviceRegistry& r,
                     GpuEfficiency& eff,
                     const std::string& kind,
                     std::size_t* rows = nullptr) {
  std::vector<StreamPoint> fit;
  std::size_t held = 0;
  GpuEfficiency probe = eff;
  drop_kernel_kinds(probe, kind);
  probe.stream[kind] = {1, devices::Seconds{}, devices::Seconds{}};
  GpuEfficiency per_col = probe;
  per_col.stream[kind] = {0, devices::Seconds{}, devices::Seconds{1e-9}};
  GpuEfficiency arith = probe;
  arith.stream[kind] = {0, devices::Seconds{}, devices::Seconds{}, 1};
  for (const Sample& x : s) {
    if (!of_stream_kind(*x.row, kind))
      continue;
    if (!x.fit) {
      ++held;
      continue;
    }
    std::string why;
    auto est = estimate_op_row(*x.row, r, probe, &why);
    auto col = estimate_op_row(*x.row, r, per_col, &why);
    auto flops = estimate_op_row(*x.row, r, arith, &why);
    if (est && col && flops) {
      fit.push_back(
          {est->time.value, std::round(col->time.value / 1e-9), flops->time.value, x.row->time_s});
    }
  }
  if (rows != nullptr)
    *rows = std::min(fit.size(), held);
  if (fit.size() < 4 || held < 4)
    return;
  bool two_ratios = std::any_of(fit.begin(), fit.end(), [&](const StreamPoint& p) {
    double a = p.bytes_time * fit.front().arithmetic;
    double b = fit.front().bytes_time * p.arithmetic;
    return std::abs(a - b) > 1e-3 * std::max(a, b);
  });
  double best_err = 0;
  GpuEfficiency::StreamFit best = best_stream(fit, 0, &best_err);
  for (int k = 2; two_ratios && k <= 40; ++k) {
    double err = 0;
    GpuEfficiency::StreamFit trial = best_stream(fit, std::pow(2.0, -k / 2.0), &err);
    if (err < best_err) {
      best_err = err;
      best = trial;
    }
  }
  eff.stream[kind] = best;
}

// Fits GpuEfficiency::stream for every memory-bound op kind with at least 4 rows in each
// split (StreamPoint's model): traffic over [0.5, 8] by steps of 0.01 and per_column over
// [0, 4 ns] by 0.02 ns, each pair with the latency that minimises the squared relative error
// in closed form, clamped at zero. Where the fit rows move different bytes per element (two
// dtypes), the bytes and the arithmetic can be told apart, and `vector` is fitted too, over
// 0 and 2^(-k/2) for k = 2..40 (50% of the vector peak down to 0.1%). The kinds of
// kDtypeStreamKinds are fitted per dtype too where two dtypes or more have the rows for it.
void fit_stream(const std::vector<Sample>& s,
                const devices::DeviceRegistry& r,
                GpuEfficiency& eff) {
  for (const char* kind : kStreamKinds)
    fit_stream_kind(s, r, eff, kind);
  for (const char* kind : kDtypeStreamKinds) {
    GpuEfficiency trial = eff;
    int fitted = 0;
    for (devices::DType t : devices::kAllDTypes) {
      std::size_t rows = 0;
      fit_stream_kind(s, r, trial, std::string(kind) + "." + devices::dtype_name(t), &rows);
      fitted += rows >= 4 ? 1 : 0;
    }
    if (fitted >= 2)
      eff = trial;
  }
}

// Kinds whose rows fit only their own stream fit: PyTorch's unvectorised loops (strided, cat,
// the widening cast, the mixed-dtype accumulation) run far below the HBM rate, and softmax at
// its arithmetic's (3x its bytes' time in 16 bits); they would drag the shared fractions of
// peak down with them. The backward kernels (softmax's, the norms') price by their own fits.
bool stream_only(const std::string& op) {
  return op == "strided" || op == "strided_binary" || op == "cat" || op == "widen" ||
         op == "accumulate" || op == "column_sum" || op == "softmax" || op == "softmax_backward" ||
         op == "rmsnorm_backward" || op == "layernorm_backward";
}

bool narrow_gemm(const MeasuredRow& row) {
  return row.op == "gemm" && (row.dtype == "fp8" || row.dtype == "int8");
}

// Fits GpuEfficiency::stream[kind], the stream of a matrix-unit kernel's operands ("gemm":
// decode's GEMVs; "attention": attention over a KV cache): each row of that kind (16-bit
// GEMMs; attention, causal or not, where only the KV-split rows stream) in the fit split is priced
// as its launch and the longer of its tiles' arithmetic (with their ramps) and the stream, min(T,
// latency) + traffic x T with T its minimal bytes at the achievable HBM rate; traffic over
// [0.5, 1.5] by 0.01 and the ramp's limit over [0, 20 us] by 0.05 us, least mean absolute relative
// error (a row where the library picks a poor kernel must not drag the stream of every other).
void fit_operand_stream(const std::vector<Sample>& s,
                        const devices::DeviceRegistry& r,
                        const std::string& kind,
                        GpuEfficiency& eff) {
  struct Point {
    double launch;
    double arithmetic;
    double bytes_time;
    double measured;
  };

  GpuEfficiency tiles_only = eff;
  tiles_only.stream.erase(kind);
  std::vector<Point> fit;
  for (const Sample& x : s) {
    bool of_kind = kind == "gemm" ? x.row->op == "gemm" && !narrow_gemm(*x.row)
                                  : x.row->op.rfind(kind, 0) == 0;
    if (!x.fit || !of_kind)
      continue;
    std::string why;
    const devices::DeviceSpec* d = r.find(x.row->device);
    auto est = estimate_op_row(*x.row, r, tiles_only, &why);
    if (d == nullptr || !est)
      continue;
    const KernelEstimate& k = est->kernels.front();
    fit.push_back({k.launch.value, (k.ramp_up + k.compute + k.ramp_down).value,
                   k.stream_bytes / (d->memory_bandwidth.value.value * eff.memory), x.row->time_s});
  }
  if (fit.size() < 4)
    return;
  double best_err = 1e300;
  GpuEfficiency::StreamFit best;
  for (int step = 50; step <= 150; ++step) {
    for (int lat = 0; lat <= 400; ++lat) {
      double traffic = step / 100.0;
      double latency = lat * 0.05e-6;
      double err = 0;
      for (const Point& p : fit) {
        double ramp = std::min(p.bytes_time, latency);
        double t = p.launch + std::max(p.arithmetic, ramp + traffic * p.bytes_time);
        err += std::fabs(t - p.measured) / p.measured;
      }
      if (err < best_err) {
        best_err = err;
        best = {traffic, devices::Seconds{latency}, devices::Seconds{}};
      }
    }
  }
  eff.stream[kind] = best;
}

// How many of `s` are in the fit split; none where either split has fewer than 4 rows.
std::optional<std::size_t> split_sizes(const std::vector<Sample>& s) {
  auto fit = static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](const Sample& x) { return x.fit; }));
  if (fit < 4 || s.size() - fit < 4)
    return std::nullopt;
  return fit;
}

// "FILE, FILE (WHAT alternating by size: N fitted, M held out)".
std::string fitted_on(const std::vector<std::string>& files,
                      const std::string& what,
                      std::size_t fit,
                      std::size_t rows) {
  std::string out;
  for (const std::string& f : files)
    out += (out.empty() ? "" : ", ") + f;
  return out + " (" + what + " alternating by size: " + std::to_string(fit) + " fitted, " +
         std::to_string(rows - fit) + " held out)";
}

// The samples `keep` keeps, in order.
template <class Keep>
std::vector<Sample> rows_where(const std::vector<Sample>& samples, Keep keep) {
  std::vector<Sample> rows;
  std::copy_if(samples.begin(), samples.end(), std::back_inserter(rows), keep);
  return rows;
}

// The head dimension of an attention row (the last of its shape), 0 for other ops.
std::int64_t attention_head_dim(const MeasuredRow& row) {
  if (row.op.rfind("attention", 0) != 0)
    return 0;
  std::size_t x = row.shape.rfind('x');
  return x == std::string::npos ? 0 : std::atoll(row.shape.c_str() + x + 1);
}

bool other_head_dim(const Sample& s) {
  std::int64_t d = attention_head_dim(*s.row);
  return d > 0 && d != 128;
}

// GpuEfficiency::attention_score_width on the fit split's forward rows of head dimensions
// other than 128 (the fractions were fitted on 128 alone): the width in [0, 256] columns
// with the least mean relative error, searched on a grid of 1 then refined golden-section.
std::optional<HeldOutFit> fit_attention_score_width(const std::vector<Sample>& samples,
                                                    const std::vector<std::string>& files,
                                                    const devices::DeviceRegistry& r,
                                                    GpuEfficiency& eff) {
  std::vector<Sample> rows = rows_where(samples, [](const Sample& x) {
    return other_head_dim(x) && x.row->op != "attention_backward";
  });
  std::optional<std::size_t> fit = split_sizes(rows);
  if (!fit)
    return std::nullopt;
  HeldOutFit out;
  GpuEfficiency e = eff;
  e.attention_score_width = 0;
  out.unfitted_mape = mape(rows, r, e, false);
  auto error = [&](double c) {
    e.attention_score_width = c;
    return mape(rows, r, e, true);
  };
  double best = 0;
  double least = error(0);
  for (double c = 1; c <= 256; c += 1) {
    double err = error(c);
    if (err < least) {
      least = err;
      best = c;
    }
  }
  eff.attention_score_width = best;
  out.value = best;
  out.fit_rows = *fit;
  out.held_out_rows = rows.size() - *fit;
  out.held_out_mape = mape(rows, r, eff, false);
  out.fitted_on =
      fitted_on(files, "attention rows of head dimensions other than 128", *fit, rows.size());
  return out;
}

// GpuEfficiency::attention_backward (ratio r) and autograd_call (the host's floor h) on the
// fit split's backward rows, priced max(h, r (F - T / 2) + B) with F the modelled causal
// forward, T its unequal tail and B the kernels beside the main one: least MAPE over h in [0, 500]
// us by 1 us and r in [1, 5] by 0.005; everything else as fitted.
std::optional<AttentionBackwardFit> fit_attention_backward(const std::vector<Sample>& samples,
                                                           const std::vector<std::string>& files,
                                                           const devices::DeviceRegistry& r,
                                                           GpuEfficiency& eff) {
  // (at head dimension 128, as the fractions: other widths are priced through the forward's)
  std::vector<Sample> rows = rows_where(samples, [](const Sample& x) {
    return x.row->op == "attention_backward" && !other_head_dim(x);
  });
  std::optional<std::size_t> fit = split_sizes(rows);
  if (!fit)
    return std::nullopt;
  AttentionBackwardFit out;
  GpuEfficiency trial = eff;
  trial.attention_backward = 0;
  trial.autograd_call = devices::Seconds{};
  out.unfitted_held_out_mape = mape(rows, r, trial, false);

  // Each fit row's forward less half its tail, and the kernels beside.
  struct Priced {
    double forward, beside, measured;
  };

  std::vector<Priced> priced;
  std::string why;
  for (const Sample& x : rows) {
    if (!x.fit)
      continue;
    MeasuredRow forward = *x.row;
    forward.op = "attention_causal";
    auto est = estimate_op_row(forward, r, trial, &why);
    if (est)
      priced.push_back({est->time.value - est->unequal_tail.value / 2, est->backward_beside.value,
                        x.row->time_s});
  }
  if (priced.empty())
    return std::nullopt;
  double best = -1, best_ratio = 0, best_floor = 0;
  for (int floor_us = 0; floor_us <= 500; ++floor_us) {
    for (int step = 0; step <= 800; ++step) {
      double ratio = 1 + 0.005 * step, floor = floor_us * 1e-6, sum = 0;
      for (const Priced& p : priced)
        sum += std::abs(std::max(floor, ratio * p.forward + p.beside) / p.measured - 1);
      if (best < 0 || sum < best) {
        best = sum;
        best_ratio = ratio;
        best_floor = floor;
      }
    }
  }
  eff.attention_backward = best_ratio;
  eff.autograd_call = devices::Seconds{best_floor};
  out.held_out_mape = mape(rows, r, eff, false);
  out.fitted_on = fitted_on(files, "attention backward rows", *fit, rows.size());
  return out;
}

// GpuEfficiency::matrix_8bit over [0.3, 1] by 0.01 and unit_stream_8bit over [5, 400] GB/s by
// 0.5 GB/s on the fit split of the 8-bit GEMM rows (least MAPE), everything else as fitted on
// the 16-bit rows (which the 8-bit rows do not move).
std::optional<Matrix8bitFit> fit_matrix_8bit(const std::vector<Sample>& narrow,
                                             const std::vector<std::string>& files,
                                             const devices::DeviceRegistry& r,
                                             GpuEfficiency& eff) {
  std::optional<std::size_t> fit = split_sizes(narrow);
  if (!fit)
    return std::nullopt;
  Matrix8bitFit out;
  GpuEfficiency trial = eff;
  trial.matrix_8bit = 0;
  trial.unit_stream_8bit = 0;
  out.unfitted_held_out_mape = mape(narrow, r, trial, false);
  double best = 1e300;
  for (int stream = 10; stream <= 800; ++stream) {
    trial.unit_stream_8bit = stream * 0.5e9;
    for (int step = 30; step <= 100; ++step) {
      trial.matrix_8bit = step / 100.0;
      double err = mape(narrow, r, trial, true);
      if (err < best) {
        best = err;
        eff.matrix_8bit = trial.matrix_8bit;
        eff.unit_stream_8bit = trial.unit_stream_8bit;
      }
    }
  }
  out.held_out_mape = mape(narrow, r, eff, false);
  out.fitted_on = fitted_on(files, "8-bit GEMM rows", *fit, narrow.size());
  return out;
}

}  // namespace

const DutyFit* DutyByDevice::find(const std::string& device) const {
  auto it = own.find(device);
  if (it != own.end())
    return &it->second;
  return otherwise ? &*otherwise : nullptr;
}

std::vector<GpuCalibrationFit> fit_gpu_ops(const std::vector<MeasuredFile>& files,
                                           const devices::DeviceRegistry& registry,
                                           const DutyByDevice& duty) {
  std::map<std::string, std::vector<Sample>> by_device;
  std::map<std::string, std::vector<Sample>> narrow_by_device;  // 8-bit GEMMs, fitted apart
  std::map<std::string, std::vector<std::string>> sources;
  std::map<std::string, std::vector<std::string>> narrow_sources;
  for (const MeasuredFile& file : files) {
    std::vector<bool> split = fit_split(file, 0);
    for (std::size_t i = 0; i < file.rows.size(); ++i) {
      const MeasuredRow& row = file.rows[i];
      if (row.kind != "op")
        continue;
      const devices::DeviceSpec* d = registry.find(row.device);
      if (d == nullptr)
        continue;
      bool narrow = narrow_gemm(row);
      (narrow ? narrow_by_device : by_device)[d->name].push_back({&row, split[i]});
      auto& src = (narrow ? narrow_sources : sources)[d->name];
      if (std::find(src.begin(), src.end(), file.path) == src.end())
        src.push_back(file.path);
    }
  }
  std::vector<GpuCalibrationFit> fits;
  for (const auto& [device, samples] : by_device) {
    GpuCalibrationFit f;
    f.device = device;
    // The fractions of peak (on the rows of every kind but the stream-only ones), then the
    // memory-bound kinds and the matrix units' operand streams on their own rows, then the
    // fractions but the HBM one again with those in place (they no longer lean on the vector
    // rate; the HBM fraction stays where the memory-bound rows put it), and the memory-bound
    // kinds and streams once more.
    std::vector<Sample> shared;
    std::copy_if(samples.begin(), samples.end(), std::back_inserter(shared), [](const Sample& s) {
      return !stream_only(s.row->op) && s.row->op != "attention_backward" && !other_head_dim(s);
    });
    // Both GEMM schedules (whole tiles in waves, stream-K), kept where the fit split prices
    // better: the held-out rows do not choose.
    for (bool stream_k : {false, true}) {
      GpuEfficiency start;
      start.stream_k = stream_k;
      if (const DutyFit* d = duty.find(device)) {
        start.duty_slope = d->value;
        start.duty_floor = d->floor;
      }
      GpuEfficiency first = coordinate_descent(shared, registry, start, true);
      fit_stream(samples, registry, first);
      fit_operand_stream(samples, registry, "gemm", first);
      fit_operand_stream(samples, registry, "attention", first);
      GpuEfficiency e = coordinate_descent(shared, registry, first, false);
      fit_stream(samples, registry, e);
      fit_operand_stream(samples, registry, "gemm", e);
      fit_operand_stream(samples, registry, "attention", e);
      if (!stream_k ||
          mape(samples, registry, e, true) < mape(samples, registry, f.efficiency, true))
        f.efficiency = e;
    }
    f.efficiency.source = "";
    f.attention_score = fit_attention_score_width(samples, sources[device], registry, f.efficiency);
    f.attention_backward = fit_attention_backward(samples, sources[device], registry, f.efficiency);
    for (const Sample& s : samples)
      (s.fit ? f.fit_rows : f.held_out_rows)++;
    f.fit_mape = mape(samples, registry, f.efficiency, true);
    f.held_out_mape = mape(samples, registry, f.efficiency, false);
    f.uncalibrated_held_out_mape = mape(samples, registry, GpuEfficiency{}, false);
    for (const std::string& s : sources[device]) {
      f.fitted_on += (f.fitted_on.empty() ? "" : ", ") + s;
    }
    f.fitted_on += " (rows alternating by size within each op: " + std::to_string(f.fit_rows) +
                   " fitted, " + std::to_string(f.held_out_rows) + " held out)";
    f.matrix_8bit =
        fit_matrix_8bit(narrow_by_device[device], narrow_sources[device], registry, f.efficiency);
    fits.push_back(std::move(f));
  }
  return fits;
}

bool is_stream_fit_key(const std::string& key) {
  std::size_t dot = key.find('.');
  std::string kind = key.substr(0, dot);
  if (dot == std::string::npos)
    return kind == "gemm" || kind == "attention" ||  // the matrix units' operand streams
           std::find(kStreamKinds.begin(), kStreamKinds.end(), kind) != kStreamKinds.end();
  return std::find(kDtypeStreamKinds.begin(), kDtypeStreamKinds.end(), kind) !=
             kDtypeStreamKinds.end() &&
         std::any_of(devices::kAllDTypes.begin(), devices::kAllDTypes.end(), [&](devices::DType t) {
           return devices::dtype_name(t) == key.substr(dot + 1);
         });
}

}  // namespace yirage::costmodel
