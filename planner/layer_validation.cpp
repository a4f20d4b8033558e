#include "planner/layer_validation.h"

#include "planner/workload/layer_cost.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

namespace yirage::planner {
namespace {

struct LayerRow {
  const devices::ModelSpec* model = nullptr;
  std::int64_t batch = 0;
  std::int64_t seq = 0;
  std::int64_t keys = 0;
};

// "MODEL:BxSxK"; an empty string on success, else the reason.
std::string parse_shape(const std::string& text,
                        const devices::ModelRegistry& models,
                        LayerRow* out) {
  std::size_t colon = text.rfind(':');
  if (colon == std::string::npos)
    return "layer shape '" + text + "' is not MODEL:BxSxK";
  out->model = models.find(text.substr(0, colon));
  if (out->model == nullptr)
    return "unknown model '" + text.substr(0, colon) + "'";
  std::int64_t dims[3] = {0, 0, 0};
  std::string_view rest = std::string_view(text).substr(colon + 1);
  for (int i = 0; i < 3; ++i) {
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), dims[i]);
    bool last = i == 2;
    if (ec != std::errc() || dims[i] <= 0 ||
        (last ? end != rest.data() + rest.size() : *end != 'x'))
      return "layer shape '" + text + "' is not MODEL:BxSxK";
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()) + (last ? 0 : 1));
  }
  *out = LayerRow{out->model, dims[0], dims[1], dims[2]};
  return {};
}

// The category of a row: what it runs and on how many devices.
std::string category(const costmodel::MeasuredRow& row, const LayerRow& l) {
  std::string what = row.op == "forward" ? (l.seq == 1 ? "decode" : "prefill") : "fwd+bwd";
  return what + (row.ranks > 1 ? " tp" + std::to_string(row.ranks) : "");
}

}  // namespace

namespace {

struct Priced {
  double seconds = 0;
  double tp = 0;  // of which tensor-parallel collectives
  std::string group;
};

// One layer row priced with the efficiencies `eff` (forward rows, replayed from a CUDA graph
// by bench/layers.py, pay `eff.graph_launch` per kernel) and the collective calibrations of
// `calibrations`; nullopt with the reason when the row cannot be priced.
std::optional<Priced> price_row(const costmodel::MeasuredRow& row,
                                const devices::DeviceRegistry& registry,
                                const devices::ModelRegistry& models,
                                const costmodel::CalibrationSet* calibrations,
                                const costmodel::GpuEfficiency& eff,
                                std::string* why) {
  LayerRow l;
  if (*why = parse_shape(row.shape, models, &l); !why->empty())
    return std::nullopt;
  if (row.op != "forward" && row.op != "forward_backward") {
    *why = "unknown layer op '" + row.op + "'; expected forward or forward_backward";
    return std::nullopt;
  }
  const devices::DeviceSpec* d = registry.find(row.device);
  if (d == nullptr) {
    *why = "unknown device '" + row.device + "'";
    return std::nullopt;
  }
  bool forward_only = row.op == "forward";
  DeviceContext cx{*d, eff, devices::DType::kBf16, std::nullopt, false};
  cx.efficiency.in_graph = forward_only;
  if (row.ranks > 1) {
    costmodel::CommGroupResult g = costmodel::row_group(row, registry);
    if (!g.group) {
      *why = g.reason;
      return std::nullopt;
    }
    if (calibrations != nullptr)
      costmodel::apply_calibration(*g.group, *calibrations,
                                   costmodel::Launch::kGraph);  // the device time of its calls
    cx.tp_group = *g.group;
  }
  LayerShape s{l.batch, l.seq, row.ranks, false, false, l.keys, forward_only};
  LayerCost c = layer_cost(*l.model, s, cx);
  return Priced{c.forward + c.tp_comm + (forward_only ? 0 : c.backward), c.tp_comm,
                category(row, l)};
}

costmodel::GpuEfficiency device_efficiency(const costmodel::MeasuredRow& row,
                                           const devices::DeviceRegistry& registry,
                                           const costmodel::CalibrationSet* calibrations) {
  const devices::DeviceSpec* d = registry.find(row.device);
  if (calibrations != nullptr && d != nullptr) {
    if (const costmodel::GpuEfficiency* e = calibrations->find_gpu(d->name))
      return *e;
  }
  return {};
}

}  // namespace

costmodel::Validation validate_layers(const costmodel::MeasuredFile& file,
                                      const devices::DeviceRegistry& registry,
                                      const devices::ModelRegistry& models,
                                      const costmodel::CalibrationSet* calibrations) {
  costmodel::Validation v;
  for (const costmodel::MeasuredRow& row : file.rows) {
    if (row.kind != "layer")
      continue;
    std::string why;
    std::optional<Priced> e = price_row(row, registry, models, calibrations,
                                        device_efficiency(row, registry, calibrations), &why);
    if (!e) {
      v.skipped.push_back(row.loc.file + ":" + std::to_string(row.loc.line) + ": " + why);
      continue;
    }
    costmodel::ValidationPoint p;
    p.row = row;
    p.estimate_s = e->seconds;
    p.error = (p.estimate_s - row.time_s) / row.time_s;
    p.group = e->group;
    p.choice = "compute " + devices::format(devices::Seconds{e->seconds - e->tp}) +
               (e->tp > 0 ? ", tp " + devices::format(devices::Seconds{e->tp}) : "");
    v.points.push_back(std::move(p));
  }
  return v;
}

void fit_graph_launch(const std::vector<costmodel::MeasuredFile>& files,
                      const devices::DeviceRegistry& registry,
                      const devices::ModelRegistry& models,
                      const costmodel::CalibrationSet* calibrations,
                      std::vector<costmodel::GpuCalibrationFit>& fits) {
  for (costmodel::GpuCalibrationFit& f : fits) {
    struct Sample {
      double measured, base, kernels;
      bool fit;
    };

    std::vector<Sample> samples;
    std::vector<const costmodel::MeasuredFile*> used;
    for (const costmodel::DeviceRow& r :
         costmodel::device_rows(files, "layer", f.device, registry)) {
      // The model is linear in the launch overhead: time = base + kernels x launch.
      costmodel::GpuEfficiency eff = f.efficiency;
      eff.graph_launch = devices::Seconds{};
      std::string why;
      std::optional<Priced> base = price_row(*r.row, registry, models, calibrations, eff, &why);
      eff.graph_launch = devices::Seconds{1e-6};
      std::optional<Priced> one = price_row(*r.row, registry, models, calibrations, eff, &why);
      if (!base || !one)
        continue;
      samples.push_back(
          {r.row->time_s, base->seconds, (one->seconds - base->seconds) / 1e-6, r.fit});
      used.push_back(r.file);
    }
    if (samples.empty())
      continue;
    // Least squares of the relative error: d/dL sum ((base + n L - m) / m)^2 = 0.
    double num = 0;
    double den = 0;
    for (const Sample& s : samples) {
      if (!s.fit)
        continue;
      num += s.kernels * (s.measured - s.base) / (s.measured * s.measured);
      den += s.kernels * s.kernels / (s.measured * s.measured);
    }
    costmodel::LayerLaunchFit lf;
    lf.graph_launch = devices::Seconds{den > 0 ? std::max(0.0, num / den) : 0};
    double err = 0;
    for (const Sample& s : samples) {
      (s.fit ? lf.fit_rows : lf.held_out_rows)++;
      if (!s.fit) {
        err += std::fabs(s.base + s.kernels * lf.graph_launch.value - s.measured) / s.measured;
      }
    }
    lf.held_out_mape = lf.held_out_rows > 0 ? 100 * err / static_cast<double>(lf.held_out_rows) : 0;
    lf.fitted_on = costmodel::file_list(used) +
                   " (layer rows alternating by size: " + std::to_string(lf.fit_rows) +
                   " fitted, " + std::to_string(lf.held_out_rows) + " held out)";
    f.efficiency.graph_launch = lf.graph_launch;
    f.layers = lf;
  }
}

}  // namespace yirage::planner
