#include "cli/calibrate_document.h"

namespace yirage::cli {

namespace {

using Json = nlohmann::ordered_json;

// A constant fitted on half of some rows, checked on the others against `without_mape` (its
// error without the constant).
struct HeldOut {
  std::string part;
  std::string name;
  double value = 0;
  std::size_t fit_rows = 0;
  std::size_t held_out_rows = 0;
  double held_out_mape = 0;
  double without_mape = 0;
  std::string fitted_on;
};

Json held_out(const std::string& device, const HeldOut& h) {
  return {{"device", device},
          {"part", h.part},
          {"name", h.name},
          {"value", h.value},
          {"fit_rows", h.fit_rows},
          {"held_out_rows", h.held_out_rows},
          {"held_out_mape_percent", h.held_out_mape},
          {"without_mape_percent", h.without_mape},
          {"fitted_on", h.fitted_on}};
}

void collective_rows(const costmodel::CalibrationFit& f, Json& rows) {
  const costmodel::CollectiveCalibration& c = f.calibration;
  Json key = {{"device", c.device},
              {"part", "collectives"},
              {"fabric", c.fabric},
              {"launch", costmodel::launch_name(c.launch)},
              {"ranks", c.ranks}};
  Json shared = key;
  shared["collective"] = "shared";
  shared["bandwidth_scale"] = c.bandwidth_scale;
  shared["extra_latency_s"] = c.extra_latency.value;
  shared["fit_rows"] = f.fit_rows;
  shared["held_out_rows"] = f.held_out_rows;
  shared["held_out_mape_percent"] = f.shared_held_out_mape;
  shared["without_mape_percent"] = f.uncalibrated_held_out_mape;
  rows.push_back(shared);
  for (const auto& [name, fit] : c.per_collective) {
    Json r = key;
    r["collective"] = name;
    r["bandwidth_scale"] = fit.bandwidth_scale;
    r["extra_latency_s"] = fit.extra_latency.value;
    r["fill_ratio"] = fit.fill_ratio;
    r["fill_bytes"] = fit.fill_bytes;
    r["fill_power"] = fit.fill_power;
    r["issue_s"] = fit.issue.value;
    r["held_out_mape_percent"] = f.per_collective_held_out_mape.at(name);
    rows.push_back(r);
  }
}

void operation_rows(const costmodel::GpuCalibrationFit& f, Json& rows) {
  const costmodel::GpuEfficiency& e = f.efficiency;
  rows.push_back({{"device", f.device},
                  {"part", f.steps ? "steps" : "operations"},
                  {"matrix", e.matrix},
                  {"attention", e.attention},
                  {"attention_causal", e.attention_causal},
                  {"memory", e.memory},
                  {"vector", e.vector},
                  {"launch_s", e.launch.value},
                  {"host_s", f.steps ? Json(e.host.value) : Json(nullptr)},
                  {"fit_rows", f.fit_rows},
                  {"held_out_rows", f.held_out_rows},
                  {"fit_mape_percent", f.steps ? Json(nullptr) : Json(f.fit_mape)},
                  {"held_out_mape_percent", f.held_out_mape},
                  {"without_mape_percent", f.uncalibrated_held_out_mape},
                  {"fitted_on", f.fitted_on}});
  for (const auto& [kind, fit] : e.stream) {
    rows.push_back({{"device", f.device},
                    {"part", "memory-bound kernels"},
                    {"name", kind},
                    {"traffic", fit.traffic},
                    {"latency_s", fit.latency.value},
                    {"per_column_s", fit.per_column.value}});
  }
  if (f.matrix_8bit) {
    rows.push_back({{"device", f.device},
                    {"part", "8-bit GEMMs"},
                    {"name", "matrix_8bit"},
                    {"value", e.matrix_8bit},
                    {"unit_stream_8bit_bytes_per_s", e.unit_stream_8bit},
                    {"held_out_mape_percent", f.matrix_8bit->held_out_mape},
                    {"without_mape_percent", f.matrix_8bit->unfitted_held_out_mape},
                    {"fitted_on", f.matrix_8bit->fitted_on}});
  }
}

void measured_rows(const costmodel::GpuCalibrationFit& f, Json& rows) {
  if (f.layers) {
    const costmodel::LayerLaunchFit& l = *f.layers;
    rows.push_back({{"device", f.device},
                    {"part", "layers"},
                    {"name", "graph_launch_s"},
                    {"value", l.graph_launch.value},
                    {"fit_rows", l.fit_rows},
                    {"held_out_rows", l.held_out_rows},
                    {"held_out_mape_percent", l.held_out_mape},
                    {"fitted_on", l.fitted_on}});
  }
  if (f.block) {
    const costmodel::BlockLatencyFit& b = *f.block;
    rows.push_back({{"device", f.device},
                    {"part", "generated kernels"},
                    {"step_cycles", b.step_cycles},
                    {"mma_step_cycles", b.mma_step_cycles},
                    {"barrier_cycles", b.barrier_cycles},
                    {"launch_s", b.launch.value},
                    {"fit_rows", b.fit_rows},
                    {"held_out_rows", b.held_out_rows},
                    {"held_out_mape_percent", b.held_out_mape},
                    {"without_mape_percent", b.unpriced_mape},
                    {"fitted_on", b.fitted_on}});
  }
  if (const auto& o = f.overlap) {
    rows.push_back(
        held_out(f.device, {"overlap", "overlap_wait", o->wait, o->fit_rows, o->held_out_rows,
                            o->held_out_mape, o->unpriced_mape, o->fitted_on}));
  }
  if (const auto& e = f.eager_tp) {
    rows.push_back(held_out(
        f.device, {"eager tensor parallelism", "eager_tp_host_s", e->host.value, e->fit_rows,
                   e->held_out_rows, e->held_out_mape, e->unpriced_mape, e->fitted_on}));
  }
  auto constant = [&](const std::optional<costmodel::HeldOutFit>& h, const char* part,
                      const char* name) {
    if (h) {
      rows.push_back(held_out(f.device, {part, name, h->value, h->fit_rows, h->held_out_rows,
                                         h->held_out_mape, h->unfitted_mape, h->fitted_on}));
    }
  };
  constant(f.optimizer, "optimizer", "optimizer");
  constant(f.allocator, "allocator", "allocator_cache");
  constant(f.megatron_allocator, "allocator, Megatron-LM", "megatron_allocator_cache");
  constant(f.sustained, "sustained GEMMs", "sustained_matrix");
  if (f.duty)
    constant(*f.duty, "GEMM duty", "duty_slope");
}

}  // namespace

nlohmann::ordered_json calibration_rows(const std::vector<costmodel::CalibrationFit>& fits,
                                        const std::vector<costmodel::GpuCalibrationFit>& gpu_fits) {
  Json rows = Json::array();
  for (const costmodel::CalibrationFit& f : fits)
    collective_rows(f, rows);
  for (const costmodel::GpuCalibrationFit& f : gpu_fits) {
    operation_rows(f, rows);
    measured_rows(f, rows);
  }
  return rows;
}

}  // namespace yirage::cli
