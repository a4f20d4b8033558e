#include "planner/step_trust.h"

#include "devices/support/units.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <iterator>

namespace yirage::planner {
namespace {

std::string pct(double v) {
  return devices::format_number(v, 2) + "%";
}

std::string signed_pct(double v) {
  return (v >= 0 ? "+" : "") + pct(v);
}

std::string framework_label(devices::Framework f) {
  return f == devices::Framework::kPytorch ? "eager-PyTorch" : "Megatron-LM";
}

// A row's `framework` column: `torch-<version>` for bench/run_plan.py, `megatron-<version>`.
bool same_framework(const MeasuredStep& row, devices::Framework f) {
  bool torch = row.framework.rfind("torch", 0) == 0;
  return torch == (f == devices::Framework::kPytorch);
}

// The tensor-parallel degree of a layout string ("tp=2,pp=1,..."; 1 when absent).
std::int64_t tp_of(const std::string& layout) {
  std::size_t at = layout.find("tp=");
  return at == std::string::npos ? 1 : std::atoll(layout.c_str() + at + 3);
}

// Statistics over the points `keep` says yes to.
StepStats stats_of(const std::vector<StepPoint>& points,
                   const std::function<bool(const StepPoint&)>& keep) {
  std::vector<StepPoint> mine;
  std::copy_if(points.begin(), points.end(), std::back_inserter(mine), keep);
  for (const StepStats& s : step_stats(mine)) {
    if (s.group == "all")
      return s;
  }
  return {};
}

// Whether `kernels` seconds of GPU work fill kBusyShare of a step of `total` seconds.
bool fills(double kernels, double total) {
  return total > 0 && kernels >= kBusyShare * total;
}

// Whether the model's kernels fill kBusyShare of the point's priced step.
bool busy_point(const StepPoint& p) {
  return p.estimate_s && fills(p.estimate_kernels.total(), *p.estimate_s);
}

}  // namespace

std::string framework_name(devices::Framework f) {
  return f == devices::Framework::kPytorch ? "pytorch" : "megatron";
}

StepTrust step_trust(const std::filesystem::path& benchmarks,
                     const std::string& device,
                     devices::Framework framework,
                     const devices::DeviceRegistry& registry,
                     const devices::ModelRegistry& models,
                     const costmodel::CalibrationSet& calibrations) {
  StepTrust t;
  t.device = device;
  t.framework = framework;
  std::vector<StepPoint> points;
  for (const std::filesystem::path& file : measured_files(benchmarks / device, "train_steps")) {
    std::vector<MeasuredStep> rows = load_measured_steps(file);
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [&](const MeasuredStep& r) {
                                return r.device != device || !same_framework(r, framework);
                              }),
               rows.end());
    keep_held_out(file, calibrations, rows);
    if (rows.empty())
      continue;
    std::vector<StepPoint> priced =
        price_measured_steps(file, rows, registry, models, calibrations);
    points.insert(points.end(), priced.begin(), priced.end());
  }
  for (const StepStats& s : step_stats(points)) {
    if (s.group == "all") {
      t.rows = s.rows;
      t.mape = s.mape;
      t.bias = s.bias;
    } else if (s.group.find("GPU") != std::string::npos && s.group.find(',') == std::string::npos &&
               s.rows > 0) {
      t.by_gpus.push_back(s);
    }
  }
  for (const StepPoint& p : points) {
    bool ran = p.row.status == "ok" && p.estimate_s.has_value();
    std::string layout = "," + p.row.layout + ",";
    t.without_te += ran && layout.find(",te=off,") != std::string::npos ? 1 : 0;
  }
  t.with_tp = stats_of(points, [](const StepPoint& p) { return tp_of(p.row.layout) > 1; });
  t.without_tp = stats_of(points, [](const StepPoint& p) { return tp_of(p.row.layout) == 1; });
  t.busy = stats_of(points, busy_point);
  t.idle = stats_of(points, [](const StepPoint& p) { return !busy_point(p); });
  return t;
}

bool keeps_gpu_busy(const StepBreakdown& b) {
  return fills(b.kernels.total(), b.total);
}

std::string step_trust_text(const StepTrust& t, bool tensor_parallel, bool busy) {
  if (t.rows == 0) {
    return "not validated: no measured " + framework_label(t.framework) + " steps on " + t.device +
           " (data/benchmarks/" + t.device + "/train_steps*.csv)";
  }
  std::string text = "±" + pct(t.mape) + " MAPE (bias " + signed_pct(t.bias) + ") over " +
                     std::to_string(t.rows) + " measured " + framework_label(t.framework) +
                     " steps on " + t.device;
  if (t.without_te > 0) {
    text += t.without_te == t.rows
                ? " (all without Transformer Engine)"
                : " (" + std::to_string(t.without_te) + " without Transformer Engine)";
  }
  text += ":";
  std::int64_t least = 0;
  std::int64_t most = 0;
  for (const StepStats& s : t.by_gpus) {
    std::int64_t n = std::stoll(s.group);  // "8 GPUs"
    least = least == 0 ? n : std::min(least, n);
    most = std::max(most, n);
  }
  if (t.by_gpus.size() > 4) {
    // Many GPU counts (published runs): the range, not each.
    text += " on " + std::to_string(least) + " to " + std::to_string(most) + " GPUs (" +
            std::to_string(t.by_gpus.size()) + " GPU counts)";
  } else {
    for (std::size_t i = 0; i < t.by_gpus.size(); ++i) {
      const StepStats& s = t.by_gpus[i];
      text += std::string(i == 0 ? " " : ", ") + pct(s.mape) + " on " + s.group + " (" +
              std::to_string(s.rows) + ")";
    }
  }
  // Like the plan: by what holds its step where both kinds were measured, else by tensor
  // parallelism.
  const StepStats* like = nullptr;
  if (t.busy.rows > 0 && t.idle.rows > 0) {
    like = busy ? &t.busy : &t.idle;
    text += busy ? "; where the GPU is busy for " + pct(100 * kBusyShare) +
                       " of the step or more, as in this plan: ±"
                 : "; where the host or collectives leave the GPU idle for over " +
                       pct(100 * (1 - kBusyShare)) + " of the step, as in this plan: ±";
  } else if (t.with_tp.rows > 0 && t.without_tp.rows > 0) {
    like = tensor_parallel ? &t.with_tp : &t.without_tp;
    text += std::string("; ") + (tensor_parallel ? "with" : "without") +
            " tensor parallelism, as this layout: ±";
  }
  if (like != nullptr) {
    text += pct(like->mape) + " (" + std::to_string(like->rows) + ")";
    if (like->repeat_rows > 0) {
      text += ", where one layout measured again moves by ±" + pct(like->repeat_spread) + " (" +
              std::to_string(like->repeat_rows) + ")";
    }
  }
  return text + "; none on more than " + std::to_string(most) + (most == 1 ? " GPU" : " GPUs");
}

std::vector<std::filesystem::path> measured_files(const std::filesystem::path& dir,
                                                  const std::string& prefix) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.rfind(prefix, 0) == 0 && e.path().extension() == ".csv")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // the same figures whatever the directory order
  return files;
}

}  // namespace yirage::planner
