#include "planner/infer_trust.h"

#include "devices/support/units.h"
#include "planner/infer_step_validation.h"
#include "planner/step_trust.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace yirage::planner {
namespace {

bool eight_bit(devices::DType t) {
  return t == devices::DType::kFp8 || t == devices::DType::kInt8;
}

std::string pct(double v, bool sign) {
  return (sign && v >= 0 ? "+" : "") + devices::format_number(v, 2) + "%";
}

void add(InferErrors& e, const InferStepPoint& p) {
  if (p.ttft_s && p.row.ttft_s) {
    double rel = 100 * (*p.ttft_s - *p.row.ttft_s) / *p.row.ttft_s;
    e.ttft_mape += std::fabs(rel);
    e.ttft_bias += rel;
    ++e.ttft_rows;
  }
  if (p.tpot_s && p.row.tpot_s) {
    double rel = 100 * (*p.tpot_s - *p.row.tpot_s) / *p.row.tpot_s;
    e.tpot_mape += std::fabs(rel);
    e.tpot_bias += rel;
    ++e.tpot_rows;
  }
}

void finish(InferErrors& e) {
  if (e.ttft_rows > 0) {
    e.ttft_mape /= static_cast<double>(e.ttft_rows);
    e.ttft_bias /= static_cast<double>(e.ttft_rows);
  }
  if (e.tpot_rows > 0) {
    e.tpot_mape /= static_cast<double>(e.tpot_rows);
    e.tpot_bias /= static_cast<double>(e.tpot_rows);
  }
}

std::string errors_text(const InferErrors& e) {
  std::string out;
  if (e.ttft_rows > 0) {
    out += "TTFT ±" + pct(e.ttft_mape, false) + " (bias " + pct(e.ttft_bias, true) + ") over " +
           std::to_string(e.ttft_rows);
  }
  if (e.tpot_rows > 0) {
    out += std::string(out.empty() ? "" : ", ") + "TPOT ±" + pct(e.tpot_mape, false) + " (bias " +
           pct(e.tpot_bias, true) + ") over " + std::to_string(e.tpot_rows);
  }
  return out;
}

bool empty(const InferErrors& e) {
  return e.ttft_rows == 0 && e.tpot_rows == 0;
}

}  // namespace

InferTrust infer_trust(const std::filesystem::path& benchmarks,
                       const std::string& device,
                       const devices::TaskSpec& task,
                       const devices::DeviceRegistry& registry,
                       const devices::ModelRegistry& models,
                       const costmodel::CalibrationSet& calibrations) {
  InferTrust t;
  t.device = device;
  t.eight_bit = eight_bit(task.precision);
  t.framework = task.framework;
  for (const std::filesystem::path& f : measured_files(benchmarks / device, "infer_steps")) {
    std::vector<MeasuredInferStep> rows = load_measured_infer_steps(f);
    for (const InferStepPoint& p :
         price_measured_infer_steps(f, rows, registry, models, calibrations)) {
      if (eight_bit(p.weights) == t.eight_bit)
        add(p.framework == t.framework ? t.same : t.other, p);
    }
  }
  finish(t.same);
  finish(t.other);
  return t;
}

std::string infer_trust_text(const InferTrust& t) {
  std::string kind = std::string(t.eight_bit ? "8-bit" : "16-bit") + " weights on " + t.device;
  if (!empty(t.same))
    return errors_text(t.same) + " measured steps with " + kind;
  if (!empty(t.other)) {
    return "not validated for a fused engine's kernels; plain PyTorch's steps (bench/run_infer.py) "
           "with " +
           kind + ": " + errors_text(t.other);
  }
  return "not validated: no measured inference steps with " + kind;
}

}  // namespace yirage::planner
