#include "costmodel/calibration.h"

#include "costmodel/collective.h"
#include "costmodel/validation.h"
#include "devices/support/yaml_reader.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

namespace yirage::costmodel {

void CalibrationSet::add(CollectiveCalibration c) {
  auto& list = entries_[std::make_pair(c.device, c.fabric)];
  auto same = std::find_if(list.begin(), list.end(), [&](const CollectiveCalibration& e) {
    return e.launch == c.launch && e.ranks == c.ranks;
  });
  if (same != list.end()) {
    *same = std::move(c);
  } else {
    list.push_back(std::move(c));
  }
}

bool CalibrationSet::has_collectives(const std::string& device, const std::string& fabric) const {
  return entries_.count({device, fabric}) > 0;
}

void CalibrationSet::add_gpu(const std::string& device, GpuEfficiency e) {
  gpu_[device] = std::move(e);
}

void CalibrationSet::inherit(const std::string& device, const std::string& base) {
  if (auto it = gpu_.find(base); it != gpu_.end() && gpu_.count(device) == 0)
    gpu_[device] = it->second;
  std::vector<std::pair<std::pair<std::string, std::string>, std::vector<CollectiveCalibration>>>
      copies;
  for (const auto& [key, list] : entries_) {
    if (key.first == base && entries_.count({device, key.second}) == 0)
      copies.push_back({{device, key.second}, list});
  }
  for (auto& [key, list] : copies)
    entries_[key] = std::move(list);
}

void CalibrationSet::inherit_derived(const std::vector<devices::DeviceSpec>& types) {
  for (const devices::DeviceSpec& d : types) {
    if (!d.base.empty())
      inherit(d.name, d.base);
  }
}

const GpuEfficiency* CalibrationSet::find_gpu(const std::string& device) const {
  auto it = gpu_.find(device);
  return it == gpu_.end() ? nullptr : &it->second;
}

const CollectiveCalibration* CalibrationSet::find(const std::string& device,
                                                  const std::string& fabric,
                                                  std::int64_t ranks,
                                                  Launch launch) const {
  auto it = entries_.find({device, fabric});
  if (it == entries_.end())
    return nullptr;
  // Lower is better: the launch style, then the ranks (exact, largest below, smallest
  // above, any), then the distance in ranks.
  auto rank_of = [&](const CollectiveCalibration& e) {
    int style = e.launch == launch ? 0 : e.launch == Launch::kGraph ? 1 : 2;
    int fit = e.ranks == ranks ? 0 : e.ranks == 0 ? 3 : e.ranks < ranks ? 1 : 2;
    std::int64_t distance = e.ranks == 0 ? 0 : e.ranks > ranks ? e.ranks - ranks : ranks - e.ranks;
    return std::make_tuple(style, fit, distance);
  };
  const CollectiveCalibration* best = nullptr;
  for (const CollectiveCalibration& e : it->second) {
    if (best == nullptr || rank_of(e) < rank_of(*best))
      best = &e;
  }
  return best;
}

std::string display_path(const std::string& path) {
  std::error_code ec;
  std::filesystem::path rel =
      std::filesystem::relative(path, devices::data_dir().parent_path(), ec);
  return ec || rel.empty() ? path : rel.string();
}

namespace {

// `per_collective: {all_gather: {bandwidth_scale: S, extra_latency: T, fill_ratio: R,
// fill: B, fill_power: Q}, ...}`
void read_per_collective(const devices::YamlDoc& doc,
                         const YAML::Node& map,
                         CollectiveCalibration& c) {
  if (!map.IsMap()) {
    doc.error(map, "'per_collective' must be a map from collective to its fit");
    return;
  }
  for (const auto& kv : map) {
    std::string name = kv.first.as<std::string>();
    const auto& all = all_collectives();
    if (std::none_of(all.begin(), all.end(),
                     [&](Collective op) { return collective_name(op) == name; })) {
      doc.error(kv.first, "unknown collective '" + name + "'");
      continue;
    }
    devices::MapReader m(doc, kv.second, "collective fit");
    if (!m.valid())
      continue;
    CollectiveCalibration::PerCollective p;
    p.bandwidth_scale = m.number("bandwidth_scale", true).value_or(1);
    p.extra_latency = m.quantity<devices::Dim::kSeconds>("extra_latency", true, devices::Sign::kAny)
                          .value_or(devices::Seconds{});
    p.fill_ratio = m.number("fill_ratio", false, devices::Sign::kNonNegative).value_or(0);
    p.fill_bytes = m.quantity<devices::Dim::kBytes>("fill", false, devices::Sign::kNonNegative)
                       .value_or(devices::Bytes{})
                       .value;
    p.fill_power = m.number("fill_power", false).value_or(1);
    p.issue = m.quantity<devices::Dim::kSeconds>("issue", false, devices::Sign::kNonNegative)
                  .value_or(devices::Seconds{});
    p.simple_latency =
        m.quantity<devices::Dim::kSeconds>("simple_latency", false, devices::Sign::kNonNegative)
            .value_or(devices::Seconds{});
    m.finish();
    c.per_collective[name] = p;
  }
}

void read_collectives(const devices::YamlDoc& doc,
                      const YAML::Node& list,
                      const std::string& device,
                      CalibrationSet& set) {
  if (!list.IsSequence()) {
    doc.error(list, "'collectives' must be a list");
    return;
  }
  for (const YAML::Node& n : list) {
    devices::MapReader m(doc, n, "collective calibration");
    if (!m.valid())
      continue;
    CollectiveCalibration c;
    c.device = device;
    c.loc = doc.loc(n);
    c.loc.file = display_path(c.loc.file);
    c.fabric = m.string("fabric", true).value_or("");
    if (std::optional<std::string> launch = m.choice("launch", launch_names()))
      c.launch = parse_launch(*launch).value_or(Launch::kGraph);
    c.ranks = m.integer("ranks").value_or(0);
    c.bandwidth_scale = m.number("bandwidth_scale", true).value_or(1);
    c.extra_latency = m.quantity<devices::Dim::kSeconds>("extra_latency", true, devices::Sign::kAny)
                          .value_or(devices::Seconds{});
    if (YAML::Node per = m.get("per_collective"))
      read_per_collective(doc, per, c);
    c.fitted_on = m.string("fitted_on").value_or("");
    m.number("held_out_mape", false, devices::Sign::kNonNegative);
    m.number("uncalibrated_held_out_mape", false, devices::Sign::kNonNegative);
    m.finish();
    set.add(std::move(c));
  }
}

// `stream: {rmsnorm: {traffic: X, latency: T}, ...}` (GpuEfficiency::stream)
void read_stream(const devices::YamlDoc& doc, const YAML::Node& map, GpuEfficiency& e) {
  if (!map.IsMap()) {
    doc.error(map, "'stream' must be a map from kernel kind to its fit");
    return;
  }
  for (const auto& kv : map) {
    std::string kind = kv.first.as<std::string>();
    if (!is_stream_fit_key(kind)) {
      doc.error(kv.first,
                "unknown stream kind '" + kind +
                    "' (a kernel kind that calibrate fits, or rmsnorm, layernorm or their "
                    "backward followed by .<dtype>; docs/formats.md)");
      continue;
    }
    devices::MapReader m(doc, kv.second, "stream fit");
    if (!m.valid())
      continue;
    GpuEfficiency::StreamFit fit;
    fit.traffic = m.number("traffic", true).value_or(1);
    fit.latency = m.quantity<devices::Dim::kSeconds>("latency", true, devices::Sign::kNonNegative)
                      .value_or(devices::Seconds{});
    fit.per_column =
        m.quantity<devices::Dim::kSeconds>("per_column", false, devices::Sign::kNonNegative)
            .value_or(devices::Seconds{});
    fit.vector = m.number("vector", false).value_or(0);
    if (fit.vector > 0 && (fit.vector < 1e-6 || fit.vector > 1))
      doc.error(m.get("vector"), "'vector' must be a fraction of the vector peak, 1e-06 to 1");
    m.finish();
    e.stream[kind] = fit;
  }
}

// The constants fitted on steps and on kernels measured beside other work, with the rows
// each names.
void read_measured_fits(const devices::YamlDoc& doc, devices::MapReader& m, GpuEfficiency& e) {
  e.overlap_wait = m.number("overlap_wait", false, devices::Sign::kNonNegative).value_or(0);
  m.string("overlap_wait_fitted_on");
  m.number("overlap_wait_held_out_mape", false, devices::Sign::kNonNegative);
  e.sustained_matrix = m.number("sustained_matrix", false, devices::Sign::kPositive).value_or(0);
  m.string("sustained_matrix_fitted_on");
  m.number("sustained_matrix_held_out_mape", false, devices::Sign::kNonNegative);
  e.duty_slope = m.number("duty_slope", false, devices::Sign::kNonNegative).value_or(0);
  e.duty_floor = m.number("duty_floor", false).value_or(1);
  if (e.duty_slope > 1)
    doc.error(m.get("duty_slope"),
              "'duty_slope' must be 0 to 1 (the GEMM time saved per unit of duty)");
  if (e.duty_floor < 0.1 || e.duty_floor > 1)
    doc.error(m.get("duty_floor"),
              "'duty_floor' must be 0.1 to 1 (the fastest GEMM time over the sustained one)");
  m.string("duty_slope_fitted_on");
  m.number("duty_slope_held_out_mape", false, devices::Sign::kNonNegative);
  e.allocator_cache = m.number("allocator_cache", false, devices::Sign::kNonNegative).value_or(0);
  m.string("allocator_cache_fitted_on");
  m.number("allocator_cache_held_out_mape", false, devices::Sign::kNonNegative);
  e.megatron_allocator_cache =
      m.number("megatron_allocator_cache", false, devices::Sign::kNonNegative).value_or(0);
  m.string("megatron_allocator_cache_fitted_on");
  m.number("megatron_allocator_cache_held_out_mape", false, devices::Sign::kNonNegative);
  m.string("optimizer_fitted_on");
  m.number("optimizer_held_out_mape", false, devices::Sign::kNonNegative);
}

// Fused attention's keys beyond its fraction: causal prompts, the softmax's width per score,
// the backward.
void read_attention(devices::MapReader& m, GpuEfficiency& e) {
  e.attention_causal = m.number("attention_causal", false).value_or(0);
  e.attention_score_width =
      m.number("attention_score_width", false, devices::Sign::kNonNegative).value_or(0);
  m.string("attention_score_width_fitted_on");
  m.number("attention_score_width_held_out_mape", false, devices::Sign::kNonNegative);
  m.number("attention_score_width_unfitted_held_out_mape", false, devices::Sign::kNonNegative);
  e.attention_backward = m.number("attention_backward", false).value_or(0);
  e.autograd_call =
      m.quantity<devices::Dim::kSeconds>("autograd_call", false, devices::Sign::kNonNegative)
          .value_or(devices::Seconds{});
  m.string("attention_backward_fitted_on");
  m.number("attention_backward_held_out_mape", false, devices::Sign::kNonNegative);
  m.number("attention_backward_unfitted_held_out_mape", false, devices::Sign::kNonNegative);
}

void read_ops(const devices::YamlDoc& doc,
              const YAML::Node& n,
              const std::string& device,
              CalibrationSet& set) {
  devices::MapReader m(doc, n, "ops");
  if (!m.valid())
    return;
  GpuEfficiency e;
  e.matrix = m.number("matrix", true).value_or(1);
  e.attention = m.number("attention", true).value_or(1);
  read_attention(m, e);
  e.matrix_8bit = m.number("matrix_8bit", false).value_or(0);
  e.unit_stream_8bit =
      m.quantity<devices::Dim::kBytesPerSec>("unit_stream_8bit", false, devices::Sign::kNonNegative)
          .value_or(devices::BytesPerSec{})
          .value;
  m.string("matrix_8bit_fitted_on");
  m.number("matrix_8bit_held_out_mape", false, devices::Sign::kNonNegative);
  m.number("matrix_8bit_unfitted_held_out_mape", false, devices::Sign::kNonNegative);
  e.memory = m.number("memory", true).value_or(1);
  e.vector = m.number("vector", true).value_or(1);
  e.stream_k = m.boolean("stream_k").value_or(false);
  // A non-negative duration, zero where the key is absent (not fitted).
  auto seconds = [&](const char* key, bool required = false) {
    return m.quantity<devices::Dim::kSeconds>(key, required, devices::Sign::kNonNegative)
        .value_or(devices::Seconds{});
  };
  e.launch = seconds("launch", true);
  e.graph_launch = seconds("graph_launch");
  m.string("graph_launch_fitted_on");
  e.host = seconds("host");
  e.optimizer = m.number("optimizer", false).value_or(0);
  read_measured_fits(doc, m, e);
  e.eager_tp_host = seconds("eager_tp_host");
  m.string("eager_tp_host_fitted_on");
  m.number("eager_tp_host_held_out_mape", false, devices::Sign::kNonNegative);
  e.megatron_host = seconds("megatron_host");
  e.megatron_op_host = seconds("megatron_op_host");
  m.string("megatron_host_fitted_on");
  m.number("megatron_host_held_out_mape", false, devices::Sign::kNonNegative);
  e.megatron_pp_sync = seconds("megatron_pp_sync");
  m.string("megatron_pp_sync_fitted_on");
  m.number("megatron_pp_sync_held_out_mape", false, devices::Sign::kNonNegative);
  e.megatron_dp_overlap_cost =
      m.number("megatron_dp_overlap_cost", false, devices::Sign::kNonNegative).value_or(0);
  m.string("megatron_dp_overlap_cost_fitted_on");
  m.number("megatron_dp_overlap_cost_held_out_mape", false, devices::Sign::kNonNegative);
  e.steps_fitted_on = m.string("steps_fitted_on").value_or("");
  m.number("steps_held_out_mape", false, devices::Sign::kNonNegative);
  e.matrix_fitted_on = m.string("matrix_fitted_on").value_or("");
  m.number("matrix_held_out_mape", false, devices::Sign::kNonNegative);
  m.number("matrix_unfitted_held_out_mape", false, devices::Sign::kNonNegative);
  e.block_step_cycles =
      m.number("block_step_cycles", false, devices::Sign::kNonNegative).value_or(0);
  e.block_mma_step_cycles =
      m.number("block_mma_step_cycles", false, devices::Sign::kNonNegative).value_or(0);
  e.block_barrier_cycles =
      m.number("block_barrier_cycles", false, devices::Sign::kNonNegative).value_or(0);
  e.program_launch = seconds("program_launch");
  m.string("block_fitted_on");
  m.number("block_held_out_mape", false, devices::Sign::kNonNegative);
  m.number("block_unpriced_mape", false, devices::Sign::kNonNegative);
  if (YAML::Node stream = m.get("stream"))
    read_stream(doc, stream, e);
  m.number("layers_held_out_mape", false, devices::Sign::kNonNegative);
  e.source = "calibrated by " + display_path(doc.path());
  m.string("fitted_on");
  m.number("held_out_mape", false, devices::Sign::kNonNegative);
  m.number("uncalibrated_held_out_mape", false, devices::Sign::kNonNegative);
  m.finish();
  set.add_gpu(device, e);
}

void read_file(const devices::YamlDoc& doc, CalibrationSet& set) {
  devices::MapReader top(doc, doc.root(), "calibration");
  if (!top.valid())
    return;
  std::string device = top.string("device", true).value_or("");
  if (YAML::Node list = top.get("collectives"))
    read_collectives(doc, list, device, set);
  if (YAML::Node ops = top.get("ops"))
    read_ops(doc, ops, device, set);
  top.finish();
}

}  // namespace

CalibrationSet CalibrationSet::load_dir(const std::filesystem::path& dir) {
  CalibrationSet set;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return set;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  devices::Diagnostics diag;
  for (const auto& f : files) {
    devices::YamlDoc doc = devices::YamlDoc::load(f, diag);
    if (doc.root())
      read_file(doc, set);
  }
  diag.throw_if_errors();
  return set;
}

namespace {

struct Sample {
  CommGroup group;
  Collective op = Collective::kAllReduce;
  double bytes = 0;
  double measured = 0;
  bool fit = false;  // in the fit split
};

double model_time(const Sample& s, double scale, double extra) {
  CommGroup g = s.group;
  g.intra_bw = g.intra_bw * scale;
  return estimate_collective(g, s.op, s.bytes).latency().value + extra;
}

// The extra latency minimising sum(((t + a - m) / m)^2): a = sum((m - t) / m^2) / sum(1 / m^2),
// negative at most down to the shortest time (calls queued on a stream beat NCCL's constants).
double best_extra(const std::vector<Sample>& samples, const std::vector<double>& times) {
  double num = 0;
  double den = 0;
  double shortest = 1e300;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].fit)
      continue;
    double m = samples[i].measured;
    num += (m - times[i]) / (m * m);
    den += 1 / (m * m);
    shortest = std::min(shortest, times[i]);
  }
  return den > 0 ? std::max(-shortest, num / den) : 0;
}

double mape(const std::vector<Sample>& samples, double scale, double extra, bool fit_split) {
  double sum = 0;
  std::size_t n = 0;
  for (const Sample& s : samples) {
    if (s.fit != fit_split)
      continue;
    sum += std::fabs(model_time(s, scale, extra) - s.measured) / s.measured;
    ++n;
  }
  return n > 0 ? 100 * sum / static_cast<double>(n) : 0;
}

// Squared relative error on the fit split at (scale, the best extra latency for it).
std::pair<double, double> objective(const std::vector<Sample>& samples, double scale) {
  std::vector<double> times;
  times.reserve(samples.size());
  for (const Sample& s : samples)
    times.push_back(s.fit ? model_time(s, scale, 0) : 0);
  double extra = best_extra(samples, times);
  double err = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].fit)
      continue;
    double r = (times[i] + extra - samples[i].measured) / samples[i].measured;
    err += r * r;
  }
  return {err, extra};
}

CalibrationFit fit_one(const std::vector<Sample>& samples) {
  double best_scale = 1;
  double best_err = objective(samples, 1).first;
  auto search = [&](double lo, double hi, double step) {
    for (double s = lo; s <= hi + 1e-12; s += step) {
      double err = objective(samples, s).first;
      if (err < best_err) {
        best_err = err;
        best_scale = s;
      }
    }
  };
  search(0.2, 2.0, 0.01);
  search(std::max(0.2, best_scale - 0.01), best_scale + 0.01, 0.001);
  CalibrationFit f;
  f.calibration.bandwidth_scale = best_scale;
  f.calibration.extra_latency = devices::Seconds{objective(samples, best_scale).second};
  double extra = f.calibration.extra_latency.value;
  f.fit_mape = mape(samples, best_scale, extra, true);
  f.held_out_mape = mape(samples, best_scale, extra, false);
  f.uncalibrated_held_out_mape = mape(samples, 1, 0, false);
  for (const Sample& s : samples)
    (s.fit ? f.fit_rows : f.held_out_rows)++;
  return f;
}

// The model time of `s` under a per-collective fit.
double model_time(const Sample& s, const CollectiveCalibration::PerCollective& p) {
  CommGroup g = s.group;
  g.intra_bw = g.intra_bw * p.bandwidth_scale;
  auto i = static_cast<std::size_t>(s.op);
  g.op_fill_ratio[i] = p.fill_ratio;
  g.op_fill_bytes[i] = p.fill_bytes;
  g.op_fill_power[i] = p.fill_power;
  g.op_simple_latency_s[i] = p.simple_latency.value;
  double t = estimate_collective(g, s.op, s.bytes).latency().value + p.extra_latency.value;
  return std::max(t, p.issue.value);
}

// One fit point: the candidate NCCL's model picks at scale 1, and the measured time.
struct FitPoint {
  double latency, bandwidth, bytes, measured;
  bool simple;  // the pick runs the Simple protocol
};

// Weighted least squares of y = a + b s + u x (w = 1 / m^2, x = bandwidth (1 + fill), y = m -
// latency) for one fill: (a, b, u), with b held at 0 where no point or every point is Simple,
// or where a free b would make b negative or a too low. a may be negative down to minus the
// smallest latency of NCCL's model among the points (its constants include a kernel launch
// that calls queued on a stream do not wait for), so no point's fixed cost goes below 0.
// Nullopt where no slope fits.
// A pipeline fill: the bandwidth term times 1 + ratio (min(S, cap) / S)^power.
struct Fill {
  double ratio = 0, cap = 0, power = 1;

  double x(const FitPoint& p) const {
    return p.bandwidth * (1 + ratio * std::pow(std::min(p.bytes, cap) / p.bytes, power));
  }
};

// The best fill so far, with its squared relative error.
struct FillFit {
  CollectiveCalibration::PerCollective fit;
  double err = 1e300;
};

std::optional<std::array<double, 3>> fit_linear(const std::vector<FitPoint>& pts,
                                                const Fill& fill) {
  // Sums of w, w s, w x, w y, w s s (= w s), w s x, w s y, w x x, w x y.
  double sw = 0, ss = 0, sx = 0, sy = 0, ssx = 0, ssy = 0, sxx = 0, sxy = 0;
  double a_min = pts.empty() ? 0 : -pts.front().latency;
  for (const FitPoint& p : pts)
    a_min = std::max(a_min, -p.latency);
  for (const FitPoint& p : pts) {
    double w = 1 / (p.measured * p.measured);
    double x = fill.x(p);
    double y = p.measured - p.latency;
    double k = p.simple ? 1 : 0;
    sw += w;
    ss += w * k;
    sx += w * x;
    sy += w * y;
    ssx += w * k * x;
    ssy += w * k * y;
    sxx += w * x * x;
    sxy += w * x * y;
  }
  auto det3 = [](double a, double b, double c, double d, double e, double f, double g, double h,
                 double i) {
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  };
  if (ss > 0 && ss < sw) {
    // [sw ss sx; ss ss ssx; sx ssx sxx] (a b u) = (sy ssy sxy)
    double d = det3(sw, ss, sx, ss, ss, ssx, sx, ssx, sxx);
    if (d > 0) {
      double a = det3(sy, ss, sx, ssy, ss, ssx, sxy, ssx, sxx) / d;
      double b = det3(sw, sy, sx, ss, ssy, ssx, sx, sxy, sxx) / d;
      double u = det3(sw, ss, sy, ss, ss, ssy, sx, ssx, sxy) / d;
      if (a >= a_min && b >= 0 && u > 0)
        return std::array<double, 3>{a, b, u};
    }
  }
  double det = sw * sxx - sx * sx;
  if (det <= 0)
    return std::nullopt;
  double u = (sw * sxy - sx * sy) / det;
  double a = (sy - u * sx) / sw;
  if (a < a_min) {  // no negative fixed cost: refit the slope with a at its bound
    a = a_min;
    u = (sxy - a * sx) / sxx;
  }
  if (u <= 0)
    return std::nullopt;
  return std::array<double, 3>{a, 0, u};
}

// The fill in `best` if `fill` fits `pts` better: by the squared relative error of the least
// squares (extra, simple, 1 / scale) for it.
void try_fill(const std::vector<FitPoint>& pts, const Fill& fill, FillFit& best) {
  std::optional<std::array<double, 3>> f = fit_linear(pts, fill);
  if (!f)
    return;
  auto [a, b, u] = *f;
  double err = 0;
  for (const FitPoint& p : pts) {
    double rel = (a + (p.simple ? b : 0) + p.latency + u * fill.x(p) - p.measured) / p.measured;
    err += rel * rel;
  }
  if (err < best.err) {
    best.err = err;
    bool filled = fill.ratio > 0;
    best.fit = {
        1 / u, devices::Seconds{a},    fill.ratio, filled ? fill.cap : 0, devices::Seconds{b},
        {},    filled ? fill.power : 1};
  }
}

// A collective's own fit: scale, extra latency, the Simple protocol's own fixed cost and
// pipeline fill. With the candidate NCCL's model picks at scale 1 held fixed, time = extra
// (+ simple where the pick is Simple) + latency + (bw / scale) (1 + r (min(S, C) / S)^q) is
// linear in (extra, simple, 1 / scale) for each fill (r, C, q): weighted least squares in
// closed form over a grid of r in [0, 3] by 0.05 (to 6 where q < 1), C from 256 KiB to 1 GiB
// by powers of 2 and q in {1, 1/2, 1/3, 1/4}, the best kept by its squared relative error on
// the fit split. (NCCL's jump from LL to Simple costs more fixed time than its model says: two
// H200s' all-gather took 23.5 us at 2 MiB and 39.3 us at 4 MiB.)
CollectiveCalibration::PerCollective fit_own(const std::vector<Sample>& mine) {
  std::vector<FitPoint> pts;
  for (const Sample& s : mine) {
    if (!s.fit)
      continue;
    CollectiveEstimate e = estimate_collective(s.group, s.op, s.bytes);
    pts.push_back({e.best.latency_term.value, e.best.bandwidth_term.value, s.bytes, s.measured,
                   e.best.protocol == Protocol::kSimple});
  }
  FillFit best;
  try_fill(pts, Fill{}, best);  // no fill
  for (double power : {1.0, 0.5, 1.0 / 3, 0.25}) {
    for (int rs = 1; rs <= (power == 1 ? 60 : 120); ++rs) {
      for (int cs = 18; cs <= 30; ++cs)
        try_fill(pts, Fill{rs * 0.05, std::ldexp(1.0, cs), power}, best);
    }
  }
  return best.fit;
}

// Held-out MAPE of `mine` under `p`, as (sum of relative errors, rows).
std::pair<double, std::size_t> held_out_error(const std::vector<Sample>& mine,
                                              const CollectiveCalibration::PerCollective& p) {
  double sum = 0;
  std::size_t n = 0;
  for (const Sample& s : mine) {
    if (s.fit)
      continue;
    sum += std::fabs(model_time(s, p) - s.measured) / s.measured;
    ++n;
  }
  return {sum, n};
}

// Each collective with enough rows of its own (at least 4 in each split) gets its own scale,
// extra latency and pipeline fill: NCCL's per-collective behaviour (channels, chunking, copy
// paths) that one shared pair cannot follow. The held-out error is then that of the
// combined model.
void fit_per_collective(const std::vector<Sample>& samples, CalibrationFit& f) {
  f.shared_held_out_mape = f.held_out_mape;
  if (std::all_of(samples.begin(), samples.end(),
                  [&](const Sample& s) { return s.op == samples.front().op; }))
    return;  // one collective: the shared pair is its own fit
  double sum = 0;
  std::size_t n = 0;
  for (Collective op : all_collectives()) {
    std::vector<Sample> mine;
    std::size_t fit_rows = 0;
    for (const Sample& s : samples) {
      if (s.op == op) {
        mine.push_back(s);
        fit_rows += s.fit ? 1 : 0;
      }
    }
    if (mine.empty())
      continue;
    CollectiveCalibration::PerCollective p{
        f.calibration.bandwidth_scale, f.calibration.extra_latency, 0, 0, {}, {}};
    bool own = fit_rows >= 4 && mine.size() - fit_rows >= 4;
    if (own) {
      p = fit_own(mine);
      f.calibration.per_collective[collective_name(op)] = p;
    }
    auto [op_sum, op_n] = held_out_error(mine, p);
    if (own)
      f.per_collective_held_out_mape[collective_name(op)] =
          100 * op_sum / static_cast<double>(op_n);
    sum += op_sum;
    n += op_n;
  }
  f.held_out_mape = n > 0 ? 100 * sum / static_cast<double>(n) : 0;
}

// The host's cost on top of a graph replay's kernels, fitted on the fit split of `mine`
// (one collective, or all for the shared pair) with the graph fit `p` held: eager launches
// take at least the host's interval between back-to-back calls (searched from 0 to 300 us
// by 0.1 us); a synchronised call adds the launch and the wait to every call (weighted
// least squares, as the shared extra latency).
CollectiveCalibration::PerCollective host_cost(const std::vector<Sample>& mine,
                                               CollectiveCalibration::PerCollective p,
                                               Launch launch) {
  std::vector<double> times;
  times.reserve(mine.size());
  for (const Sample& s : mine)
    times.push_back(model_time(s, p));
  if (launch == Launch::kSynced) {
    p.extra_latency += devices::Seconds{best_extra(mine, times)};
    return p;
  }
  double best = 0;
  double best_err = 1e300;
  for (int step = 0; step <= 3000; ++step) {
    double issue = step * 1e-7;
    double err = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      if (!mine[i].fit)
        continue;
      double r = (std::max(issue, times[i]) - mine[i].measured) / mine[i].measured;
      err += r * r;
    }
    if (err < best_err) {
      best_err = err;
      best = issue;
    }
  }
  p.issue = devices::Seconds{best};
  return p;
}

// Eager and synchronised launches run the kernels a queued launch runs: their fit is the
// queued fit of the same device, fabric and ranks measured in the same files, else the graph
// fit (`graph`: either), each collective's with the host's cost fitted on top (host_cost).
CalibrationFit fit_on_graph(const std::vector<Sample>& samples,
                            const CalibrationFit& graph,
                            Launch launch) {
  CalibrationFit f;
  const CollectiveCalibration& g = graph.calibration;
  CollectiveCalibration::PerCollective shared{g.bandwidth_scale, g.extra_latency, 0, 0, {}, {}};
  shared = host_cost(samples, shared, launch);
  f.calibration.bandwidth_scale = shared.bandwidth_scale;
  f.calibration.extra_latency = shared.extra_latency;
  auto [shared_sum, shared_n] = held_out_error(samples, shared);
  f.shared_held_out_mape = shared_n > 0 ? 100 * shared_sum / static_cast<double>(shared_n) : 0;
  double sum = 0;
  std::size_t n = 0;
  for (Collective op : all_collectives()) {
    std::vector<Sample> mine;
    std::copy_if(samples.begin(), samples.end(), std::back_inserter(mine),
                 [&](const Sample& s) { return s.op == op; });
    if (mine.empty())
      continue;
    auto own = g.per_collective.find(collective_name(op));
    CollectiveCalibration::PerCollective base =
        own != g.per_collective.end() ? own->second
                                      : CollectiveCalibration::PerCollective{
                                            g.bandwidth_scale, g.extra_latency, 0, 0, {}, {}};
    CollectiveCalibration::PerCollective p = host_cost(mine, base, launch);
    f.calibration.per_collective[collective_name(op)] = p;
    auto [op_sum, op_n] = held_out_error(mine, p);
    if (op_n > 0)
      f.per_collective_held_out_mape[collective_name(op)] =
          100 * op_sum / static_cast<double>(op_n);
    sum += op_sum;
    n += op_n;
  }
  f.held_out_mape = n > 0 ? 100 * sum / static_cast<double>(n) : 0;
  f.uncalibrated_held_out_mape = mape(samples, 1, 0, false);
  for (const Sample& s : samples)
    (s.fit ? f.fit_rows : f.held_out_rows)++;
  return f;
}

}  // namespace

std::vector<CalibrationFit> fit_collectives(const std::vector<MeasuredFile>& files,
                                            const devices::DeviceRegistry& registry,
                                            double min_bytes) {
  // (device, fabric, launch style, ranks)
  using Key = std::tuple<std::string, std::string, Launch, std::int64_t>;
  std::map<Key, std::vector<Sample>> by_key;
  std::map<Key, std::vector<std::string>> sources;
  for (const MeasuredFile& file : files) {
    std::vector<bool> split = fit_split(file, min_bytes);
    for (std::size_t i = 0; i < file.rows.size(); ++i) {
      const MeasuredRow& row = file.rows[i];
      if (row.kind != "collective" || row.bytes < min_bytes || row.ranks != row.ranks_per_node) {
        continue;
      }
      auto op = std::find_if(all_collectives().begin(), all_collectives().end(),
                             [&](Collective c) { return collective_name(c) == row.op; });
      CommGroupResult g = row_group(row, registry);
      if (op == all_collectives().end() || !g.group)
        continue;
      Key key{g.group->device, devices::fabric_name(g.group->fabric),
              parse_launch(row.launch).value_or(Launch::kGraph), row.ranks};
      by_key[key].push_back(Sample{*g.group, *op, row.bytes, row.time_s, split[i]});
      auto& src = sources[key];
      if (std::find(src.begin(), src.end(), file.path) == src.end())
        src.push_back(file.path);
    }
  }
  std::vector<CalibrationFit> fits;
  std::map<Key, CalibrationFit> device_fits;   // graph and queued: the kernels' own time
  for (const auto& [key, samples] : by_key) {  // in Launch's order: graph, queued, eager, synced
    Launch launch = std::get<2>(key);
    bool device_time = launch == Launch::kGraph || launch == Launch::kQueued;
    // Eager and synced calls run the kernels a queued launch runs: their host cost goes on
    // top of that fit, else on the graph fit, where the same files measured both (one host,
    // one campaign); rows of another source are fitted on their own.
    const std::vector<std::string>& mine = sources[key];
    const CalibrationFit* base = nullptr;
    for (Launch under : {Launch::kQueued, Launch::kGraph}) {
      Key k = key;
      std::get<2>(k) = under;
      auto found = device_fits.find(k);
      const std::vector<std::string>& theirs = sources[k];
      if (!device_time && !base && found != device_fits.end() &&
          std::any_of(mine.begin(), mine.end(), [&](const std::string& s) {
            return std::find(theirs.begin(), theirs.end(), s) != theirs.end();
          }))
        base = &found->second;
    }
    CalibrationFit f;
    if (base) {
      f = fit_on_graph(samples, *base, launch);
    } else {
      f = fit_one(samples);
      fit_per_collective(samples, f);
    }
    if (device_time)
      device_fits[key] = f;
    std::tie(f.calibration.device, f.calibration.fabric, f.calibration.launch,
             f.calibration.ranks) = key;
    std::string files_text;
    for (const std::string& s : sources[key])
      files_text += (files_text.empty() ? "" : ", ") + s;
    f.calibration.fitted_on = files_text + " (" + launch_name(f.calibration.launch) + " rows of " +
                              std::to_string(f.calibration.ranks) +
                              " ranks alternating by size, of " +
                              devices::format_quantity(min_bytes, devices::Dim::kBytes) +
                              " and more: " + std::to_string(f.fit_rows) + " fitted, " +
                              std::to_string(f.held_out_rows) + " held out)";
    fits.push_back(std::move(f));
  }
  return fits;
}

namespace {

// One fitted key of `ops`, with the rows it came from and its error on those held out.
void write_fitted(std::ostream& y,
                  const std::string& key,
                  const std::string& value,
                  const std::string& fitted_on,
                  double held_out_mape) {
  y << "  " << key << ": " << value << "\n"
    << "  " << key << "_fitted_on: \"" << fitted_on << "\"\n"
    << "  " << key << "_held_out_mape: " << devices::format_number(held_out_mape, 3) << "\n";
}

// The keys fitted on measured steps and on collectives measured beside compute.
void write_measured_fits(std::ostream& y, const GpuCalibrationFit& g) {
  if (g.overlap) {
    write_fitted(y, "overlap_wait", devices::format_number(g.overlap->wait, 3),
                 g.overlap->fitted_on, g.overlap->held_out_mape);
  }
  for (const auto& [key, fit] :
       {std::pair{"optimizer", &g.optimizer}, std::pair{"sustained_matrix", &g.sustained},
        std::pair{"allocator_cache", &g.allocator},
        std::pair{"megatron_allocator_cache", &g.megatron_allocator},
        std::pair{"megatron_dp_overlap_cost", &g.megatron_dp_overlap}}) {
    if (*fit) {
      write_fitted(y, key, devices::format_number((*fit)->value, 3), (*fit)->fitted_on,
                   (*fit)->held_out_mape);
    }
  }
  if (g.duty) {
    write_fitted(y, "duty_slope", devices::format_number(g.duty->value, 3), g.duty->fitted_on,
                 g.duty->held_out_mape);
    y << "  duty_floor: " << devices::format_number(g.duty->floor, 3) << "\n";
  }
  if (g.megatron_host) {
    write_fitted(y, "megatron_host", devices::format(g.megatron_host->host),
                 g.megatron_host->fitted_on, g.megatron_host->held_out_mape);
    if (g.megatron_host->op_host.value > 0)
      y << "  megatron_op_host: " << devices::format(g.megatron_host->op_host) << "\n";
  }
  if (g.megatron_pp_sync) {
    write_fitted(y, "megatron_pp_sync", devices::format(g.megatron_pp_sync->host),
                 g.megatron_pp_sync->fitted_on, g.megatron_pp_sync->held_out_mape);
  }
  if (g.eager_tp) {
    write_fitted(y, "eager_tp_host", devices::format(g.eager_tp->host), g.eager_tp->fitted_on,
                 g.eager_tp->held_out_mape);
  }
}

}  // namespace

namespace {

// One collective's own fit, on one line of `per_collective`.
void write_per_collective(std::ostream& y,
                          const std::string& name,
                          const CollectiveCalibration::PerCollective& fit) {
  using devices::format_number;
  y << "      " << name << ": {bandwidth_scale: " << format_number(fit.bandwidth_scale, 4)
    << ", extra_latency: " << devices::format(fit.extra_latency);
  if (fit.fill_ratio > 0) {
    y << ", fill_ratio: " << format_number(fit.fill_ratio, 3)
      << ", fill: " << devices::format_quantity(fit.fill_bytes, devices::Dim::kBytes);
    if (fit.fill_power != 1)
      y << ", fill_power: " << format_number(fit.fill_power, 3);
  }
  if (fit.simple_latency.value > 0)
    y << ", simple_latency: " << devices::format(fit.simple_latency);
  if (fit.issue.value > 0)
    y << ", issue: " << devices::format(fit.issue);
  y << "}\n";
}

}  // namespace

std::string calibration_yaml(const std::vector<CalibrationFit>& fits,
                             const std::vector<GpuCalibrationFit>& gpu_fits,
                             const std::string& device,
                             const std::string& date) {
  using devices::format_number;
  std::ostringstream y;
  y << "# Model calibration of " << device << ", fitted by `yirage-plan calibrate` on " << date
    << ".\n# Regenerate it with the same command; do not edit by hand.\n";
  y << "device: " << device << "\n";
  bool any = false;
  for (const CalibrationFit& f : fits) {
    if (f.calibration.device != device)
      continue;
    if (!any)
      y << "collectives:\n";
    any = true;
    y << "  - fabric: " << f.calibration.fabric << "\n"
      << "    launch: " << launch_name(f.calibration.launch) << "\n"
      << "    ranks: " << f.calibration.ranks << "\n"
      << "    bandwidth_scale: " << format_number(f.calibration.bandwidth_scale, 4) << "\n"
      << "    extra_latency: " << devices::format(f.calibration.extra_latency) << "\n";
    if (!f.calibration.per_collective.empty())
      y << "    per_collective:\n";
    for (const auto& [name, fit] : f.calibration.per_collective)
      write_per_collective(y, name, fit);
    y << "    fitted_on: \"" << f.calibration.fitted_on << "\"\n"
      << "    held_out_mape: " << format_number(f.held_out_mape, 3) << "\n"
      << "    uncalibrated_held_out_mape: " << format_number(f.uncalibrated_held_out_mape, 3)
      << "\n";
  }
  for (const GpuCalibrationFit& g : gpu_fits) {
    if (g.device != device)
      continue;
    const GpuEfficiency& e = g.efficiency;
    y << "ops:\n"
      << "  matrix: " << format_number(e.matrix, 3) << "\n"
      << "  attention: " << format_number(e.attention, 3) << "\n";
    if (e.attention_causal > 0)
      y << "  attention_causal: " << format_number(e.attention_causal, 3) << "\n";
    if (g.attention_score) {
      y << "  attention_score_width: " << format_number(e.attention_score_width, 3) << "\n"
        << "  attention_score_width_fitted_on: \"" << g.attention_score->fitted_on << "\"\n"
        << "  attention_score_width_held_out_mape: "
        << format_number(g.attention_score->held_out_mape, 3) << "\n"
        << "  attention_score_width_unfitted_held_out_mape: "
        << format_number(g.attention_score->unfitted_mape, 3) << "\n";
    }
    if (g.attention_backward) {
      y << "  attention_backward: " << format_number(e.attention_backward, 3) << "\n"
        << "  autograd_call: " << devices::format(e.autograd_call) << "\n"
        << "  attention_backward_fitted_on: \"" << g.attention_backward->fitted_on << "\"\n"
        << "  attention_backward_held_out_mape: "
        << format_number(g.attention_backward->held_out_mape, 3) << "\n"
        << "  attention_backward_unfitted_held_out_mape: "
        << format_number(g.attention_backward->unfitted_held_out_mape, 3) << "\n";
    }
    if (g.matrix_8bit) {
      y << "  matrix_8bit: " << format_number(e.matrix_8bit, 3) << "\n"
        << "  unit_stream_8bit: "
        << devices::format_quantity(e.unit_stream_8bit, devices::Dim::kBytesPerSec) << "\n"
        << "  matrix_8bit_fitted_on: \"" << g.matrix_8bit->fitted_on << "\"\n"
        << "  matrix_8bit_held_out_mape: " << format_number(g.matrix_8bit->held_out_mape, 3) << "\n"
        << "  matrix_8bit_unfitted_held_out_mape: "
        << format_number(g.matrix_8bit->unfitted_held_out_mape, 3) << "\n";
    }
    y << "  memory: " << format_number(e.memory, 3) << "\n"
      << "  vector: " << format_number(e.vector, 3) << "\n"
      << "  stream_k: " << (e.stream_k ? "true" : "false") << "\n"
      << "  launch: " << devices::format(e.launch) << "\n";
    if (g.steps) {
      y << "  host: " << devices::format(e.host) << "\n"
        << "  steps_fitted_on: \"" << g.steps->fitted_on << "\"\n"
        << "  steps_held_out_mape: " << format_number(g.steps->held_out_mape, 3) << "\n";
    }
    if (g.matrix_steps) {
      y << "  matrix_fitted_on: \"" << g.matrix_steps->fitted_on << "\"\n"
        << "  matrix_held_out_mape: " << format_number(g.matrix_steps->held_out_mape, 3) << "\n"
        << "  matrix_unfitted_held_out_mape: " << format_number(g.matrix_steps->unfitted_mape, 3)
        << "\n";
    }
    if (!e.stream.empty())
      y << "  stream:\n";
    for (const auto& [kind, fit] : e.stream) {
      y << "    " << kind << ": {traffic: " << format_number(fit.traffic, 3)
        << ", latency: " << devices::format(fit.latency)
        << ", per_column: " << devices::format(fit.per_column);
      if (fit.vector > 0)
        y << ", vector: " << format_number(fit.vector, 3);
      y << "}\n";
    }
    y << "  fitted_on: \"" << g.fitted_on << "\"\n"
      << "  held_out_mape: " << format_number(g.held_out_mape, 3) << "\n"
      << "  uncalibrated_held_out_mape: " << format_number(g.uncalibrated_held_out_mape, 3) << "\n";
    if (g.layers) {
      y << "  graph_launch: " << devices::format(g.layers->graph_launch) << "\n"
        << "  graph_launch_fitted_on: \"" << g.layers->fitted_on << "\"\n"
        << "  layers_held_out_mape: " << format_number(g.layers->held_out_mape, 3) << "\n";
    }
    write_measured_fits(y, g);
    if (g.block) {
      y << "  block_step_cycles: " << format_number(g.block->step_cycles, 3) << "\n"
        << "  block_mma_step_cycles: " << format_number(g.block->mma_step_cycles, 3) << "\n"
        << "  block_barrier_cycles: " << format_number(g.block->barrier_cycles, 3) << "\n"
        << "  program_launch: " << devices::format(g.block->launch) << "\n"
        << "  block_fitted_on: \"" << g.block->fitted_on << "\"\n"
        << "  block_held_out_mape: " << format_number(g.block->held_out_mape, 3) << "\n"
        << "  block_unpriced_mape: " << format_number(g.block->unpriced_mape, 3) << "\n";
    }
  }
  return y.str();
}

}  // namespace yirage::costmodel
