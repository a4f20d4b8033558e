#include "planner/infer_step_validation.h"

#include "devices/cluster_loader.h"
#include "devices/task_loader.h"
#include "planner/infer_estimate.h"
#include "planner/step_validation.h"

#include <cmath>
#include <map>
#include <variant>

namespace yirage::planner {

bool is_measured_infer_steps_file(const std::filesystem::path& path) {
  return steps_csv_header_starts(path, "cluster,task,tp,");
}

std::vector<MeasuredInferStep> load_measured_infer_steps(const std::filesystem::path& path) {
  std::vector<MeasuredInferStep> rows;
  read_steps_csv(
      path,
      {"cluster", "task", "tp", "gpus", "device", "status", "batch", "context", "ttft_s", "tpot_s"},
      [&](const StepsCsvRow& c) {
        MeasuredInferStep r;
        r.cluster = c.at("cluster");
        r.task = c.at("task");
        r.device = c.at("device");
        r.status = c.at("status");
        r.line = c.line();
        auto count = [&](const char* name) {
          return static_cast<std::int64_t>(c.number(name, 1 << 30, true).value_or(1));
        };
        r.tp = count("tp");
        r.gpus = count("gpus");
        r.batch = count("batch");
        r.context = count("context");
        r.ttft_s = c.number("ttft_s", 1e6, false);
        r.tpot_s = c.number("tpot_s", 1e6, false);
        rows.push_back(r);
      });
  return rows;
}

std::vector<InferStepPoint> price_measured_infer_steps(
    const std::filesystem::path& path,
    const std::vector<MeasuredInferStep>& rows,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations) {
  StepFiles files(path, registry, models);
  std::vector<InferStepPoint> out;
  for (const MeasuredInferStep& r : rows) {
    if (r.status != "ok")
      continue;
    const devices::ClusterSpec& c = files.cluster(r.cluster);
    InferStepPoint p;
    p.row = r;
    devices::TaskSpec t = files.task(r.task);
    p.width = "h" + std::to_string(t.model.hidden);
    p.weights = t.precision;
    p.framework = t.framework;
    t.global_batch = r.batch;
    t.sequence_length = r.context;
    InferLayout l{1, r.tp, 1, r.batch};
    auto priced = [&](devices::Mode mode) -> std::optional<InferEstimate> {
      t.mode = mode;
      auto e = estimate_inference(InferContext{c, t, calibrations}, l);
      if (auto* ie = std::get_if<InferEstimate>(&e))
        return *ie;
      return std::nullopt;
    };
    if (r.ttft_s) {
      if (std::optional<InferEstimate> e = priced(devices::Mode::kPrefill))
        p.ttft_s = e->ttft;
    }
    if (r.tpot_s) {
      if (std::optional<InferEstimate> e = priced(devices::Mode::kDecode))
        p.tpot_s = e->tpot;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<InferStepStats> infer_step_stats(const std::vector<InferStepPoint>& points) {
  std::vector<InferStepStats> out;
  for (const auto& [g, members] : step_groups(points, false)) {
    InferStepStats s;
    s.group = g;
    for (const InferStepPoint* p : members) {
      if (p->ttft_s && p->row.ttft_s) {
        double rel = (*p->ttft_s - *p->row.ttft_s) / *p->row.ttft_s;
        s.ttft_mape += std::fabs(rel);
        s.ttft_bias += rel;
        ++s.ttft_rows;
      }
      if (p->tpot_s && p->row.tpot_s) {
        double rel = (*p->tpot_s - *p->row.tpot_s) / *p->row.tpot_s;
        s.tpot_mape += std::fabs(rel);
        s.tpot_bias += rel;
        ++s.tpot_rows;
      }
    }
    auto mean = [](double sum, std::size_t n) {
      return n ? 100 * sum / static_cast<double>(n) : 0;
    };
    s.ttft_mape = mean(s.ttft_mape, s.ttft_rows);
    s.ttft_bias = mean(s.ttft_bias, s.ttft_rows);
    s.tpot_mape = mean(s.tpot_mape, s.tpot_rows);
    s.tpot_bias = mean(s.tpot_bias, s.tpot_rows);
    out.push_back(s);
  }
  return out;
}

}  // namespace yirage::planner
