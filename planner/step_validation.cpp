#include "planner/step_validation.h"

#include "costmodel/measured.h"
#include "devices/cluster_loader.h"
#include "devices/support/units.h"
#include "devices/support/yaml_reader.h"
#include "devices/task_loader.h"
#include "planner/fidelity.h"
#include "planner/train_estimate.h"

#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <variant>

namespace yirage::planner {
namespace {

// The cells of one CSV line; a cell may be quoted ("a,b"), with "" for a quote inside.
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

// One plain path component: letters, digits, '.', '_', '-', not starting with '.'.
bool plain_file_name(const std::string& s) {
  if (s.empty() || s.front() == '.')
    return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok)
      return false;
  }
  return true;
}

}  // namespace

StepsCsvRow::StepsCsvRow(const std::filesystem::path& path,
                         int line,
                         const std::string& text,
                         const std::map<std::string, std::size_t>& columns,
                         std::vector<std::string> cells,
                         devices::Diagnostics& diag)
    : path_(path),
      line_(line),
      text_(text),
      columns_(columns),
      cells_(std::move(cells)),
      diag_(diag) {}

const std::string& StepsCsvRow::at(const char* column) const {
  return cells_[columns_.at(column)];
}

std::optional<double> StepsCsvRow::number(const char* column,
                                          double max,
                                          bool required,
                                          bool zero_allowed) const {
  const std::string& s = at(column);
  if (s.empty() && !required)
    return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v < 0 ||
      (v == 0 && !zero_allowed) || v > max) {
    diag_.error({path_.string(), line_, 1},
                std::string(column) + " '" + s + "' is not a " +
                    (zero_allowed ? "non-negative" : "positive") + " number of at most " +
                    devices::format_number(max),
                text_);
    return std::nullopt;
  }
  return v;
}

void read_steps_csv(const std::filesystem::path& path,
                    const std::vector<std::string>& required,
                    const std::function<void(const StepsCsvRow&)>& row) {
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  std::map<std::string, std::size_t> columns;
  std::istringstream in(*text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line.front() == '#')
      continue;
    std::vector<std::string> c = csv_cells(line);
    if (columns.empty()) {
      for (std::size_t i = 0; i < c.size(); ++i)
        columns[c[i]] = i;
      for (const std::string& need : required) {
        if (columns.count(need) == 0)
          diag.error({path.string(), n, 1}, "the header has no column '" + need + "'", line);
      }
      if (!diag.empty())
        break;
      continue;
    }
    if (c.size() != columns.size()) {
      diag.error(
          {path.string(), n, 1},
          std::to_string(c.size()) + " cells, the header has " + std::to_string(columns.size()),
          line);
      continue;
    }
    StepsCsvRow r(path, n, line, columns, std::move(c), diag);
    for (const char* name : {"cluster", "task"}) {
      if (!plain_file_name(r.at(name))) {
        diag.error({path.string(), n, 1},
                   "'" + r.at(name) + "' is not a plain file name (letters, digits, '.', '_', '-')",
                   line);
      }
    }
    const std::string& status = r.at("status");
    if (status != "ok" && status != "oom" && status != "error")
      diag.error({path.string(), n, 1}, "status must be ok, oom or error, got '" + status + "'",
                 line);
    row(r);
  }
  if (columns.empty() && diag.empty())
    diag.error({path.string(), 0, 0}, "no header line");
  diag.throw_if_errors();
}

bool steps_csv_header_starts(const std::filesystem::path& path, const std::string& start) {
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  if (!text)
    return false;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.front() != '#')
      return line.rfind(start, 0) == 0;
  }
  return false;
}

bool is_measured_steps_file(const std::filesystem::path& path) {
  return steps_csv_header_starts(path, "cluster,task,layout,gpus,");
}

namespace {

// The kernel_*_s columns of a profiled row (bench/run_plan.py) as the model's kinds; the
// collectives (kernel_nccl_s) are not among them.
KernelTime profiled_kernels(const StepsCsvRow& c) {
  auto cell = [&](const char* column) {
    return c.has(column) ? c.number(column, 1e6, true, true).value_or(0) : 0.0;
  };
  KernelTime k;
  k.gemm = cell("kernel_gemm_s");
  k.attention = cell("kernel_attention_s");
  k.loss = cell("kernel_loss_s");
  k.optimizer = cell("kernel_optimizer_s");
  for (const char* column : {"kernel_norm_s", "kernel_embedding_s", "kernel_copy_s",
                             "kernel_reduce_s", "kernel_elementwise_s", "kernel_other_s"})
    k.memory += cell(column);
  return k;
}

}  // namespace

std::vector<MeasuredStep> load_measured_steps(const std::filesystem::path& path) {
  std::vector<MeasuredStep> rows;
  read_steps_csv(path,
                 {"cluster", "task", "layout", "gpus", "device", "framework", "status", "step_s",
                  "peak_allocated_bytes", "peak_reserved_bytes"},
                 [&](const StepsCsvRow& c) {
                   MeasuredStep r;
                   r.cluster = c.at("cluster");
                   r.task = c.at("task");
                   r.layout = c.at("layout");
                   r.device = c.at("device");
                   r.framework = c.at("framework");
                   r.status = c.at("status");
                   r.line = c.line();
                   r.gpus = static_cast<std::int64_t>(c.number("gpus", 1 << 30, true).value_or(1));
                   bool ok = r.status == "ok";
                   r.step_s = c.number("step_s", 1e6, ok).value_or(0);
                   // Published runs state no memory: both may be empty.
                   r.peak_reserved = c.number("peak_reserved_bytes", 1e15, false).value_or(0);
                   r.peak_allocated = c.number("peak_allocated_bytes", 1e15, false).value_or(0);
                   if (c.has("leftover_bytes"))
                     r.leftover = c.number("leftover_bytes", 1e15, false).value_or(0);
                   if (r.leftover > 0) {
                     r.peak_allocated = std::max(0.0, r.peak_allocated - r.leftover);
                     r.peak_reserved = std::max(r.peak_allocated, r.peak_reserved - r.leftover);
                   }
                   if (c.has("optimizer_s"))
                     r.optimizer_s = c.number("optimizer_s", 1e6, false).value_or(0);
                   if (c.has("host_forward_s"))
                     r.host_forward_s = c.number("host_forward_s", 1e6, false).value_or(0);
                   if (ok && c.has("kernel_gemm_s") && !c.at("kernel_gemm_s").empty())
                     r.kernels = profiled_kernels(c);
                   rows.push_back(r);
                 });
  if (std::filesystem::path probe = probe_beside(path); std::filesystem::exists(probe))
    subtract_leftover(load_probe_peaks(probe), rows);
  return rows;
}

StepFiles::StepFiles(const std::filesystem::path& csv,
                     const devices::DeviceRegistry& registry,
                     const devices::ModelRegistry& models)
    : dir_(csv.parent_path() / "steps"), registry_(registry), models_(models) {}

const devices::ClusterSpec& StepFiles::cluster(const std::string& name) {
  auto it = clusters_.find(name);
  if (it == clusters_.end()) {
    it = clusters_
             .emplace(name, devices::load_cluster(dir_ / "clusters" / (name + ".yaml"), registry_))
             .first;
  }
  return it->second;
}

const devices::TaskSpec& StepFiles::task(const std::string& name) {
  auto it = tasks_.find(name);
  if (it == tasks_.end())
    it = tasks_.emplace(name, devices::load_task(dir_ / "tasks" / (name + ".yaml"), models_)).first;
  return it->second;
}

namespace {

constexpr std::string_view kBestMicroBatch = "mb=best";

// The layout of a measured row, and whether its micro-batch is `best` (not published: priced
// at the fastest that fits, as the run's authors tuned it).
Layout measured_layout(const std::filesystem::path& path, const MeasuredStep& r, bool* best) {
  std::string text = r.layout;
  auto at = text.find(kBestMicroBatch);
  *best = at != std::string::npos &&
          (at + kBestMicroBatch.size() == text.size() || text[at + kBestMicroBatch.size()] == ',');
  if (*best)
    text.replace(at, kBestMicroBatch.size(), "mb=1");
  Layout l;
  if (std::string err = parse_layout(text, &l); !err.empty()) {
    devices::Diagnostics diag;
    diag.error({path.string(), r.line, 1}, "layout: " + err);
    diag.throw_if_errors();
  }
  return l;
}

// Prices row `r` into `p`: its layout, or with `mb=best` every power of two up to the
// replica's batch, the fastest that fits.
void price_row(const std::filesystem::path& path,
               const MeasuredStep& r,
               const TrainContext& cx,
               StepPoint* p) {
  bool best = false;
  Layout l = measured_layout(path, r, &best);
  std::int64_t last = best ? cx.task.global_batch / std::max<std::int64_t>(1, l.dp) : l.micro_batch;
  std::optional<PlanEstimate> chosen;
  for (std::int64_t mb = l.micro_batch; mb <= std::max(last, l.micro_batch); mb *= 2) {
    Layout tried = l;
    tried.micro_batch = mb;
    auto e = estimate_training(cx, tried);
    if (auto* pe = std::get_if<PlanEstimate>(&e)) {
      if (!chosen || pe->step.total < chosen->step.total) {
        chosen = *pe;
        p->micro_batch = mb;
      }
    } else if (p->rejected.empty()) {
      p->rejected = std::get<Rejected>(e).reason;
    }
  }
  if (chosen) {
    p->estimate_s = chosen->step.total;
    p->estimate_memory = chosen->memory.total() + chosen->memory.reserve;
    p->estimate_live = chosen->memory.total();
    p->estimate_optimizer_s = chosen->step.optimizer;
    p->estimate_host_forward_s = chosen->step.host_forward;
    p->estimate_kernels = chosen->step.kernels;
    // bench/run_megatron.py profiles rank 0, on the first pipeline stage; bench/run_plan.py
    // records each kind's largest over the ranks, the critical stage's.
    bool rank0 = p->row.framework.rfind("megatron", 0) == 0;
    p->estimate_profiled_kernels = rank0 ? chosen->step.first_kernels : chosen->step.kernels;
    p->rejected.clear();
  }
}

}  // namespace

// Where a device's shipped matrix efficiency was fitted on the even rows of `file` (`calibrate
// --matrix-steps`), keeps that device's odd rows only, in the fit's order (rows that ran);
// returns the device, or empty when nothing was fitted on the file.
std::string keep_held_out(const std::filesystem::path& file,
                          const costmodel::CalibrationSet& calibrations,
                          std::vector<MeasuredStep>& rows) {
  std::string fitted;
  for (const MeasuredStep& r : rows) {
    const costmodel::GpuEfficiency* e = calibrations.find_gpu(r.device);
    if (e != nullptr && !e->matrix_fitted_on.empty() &&
        e->matrix_fitted_on.rfind(costmodel::display_path(file.string()) + " ", 0) == 0) {
      fitted = r.device;
      break;
    }
  }
  if (fitted.empty())
    return {};
  std::size_t n = 0;
  std::erase_if(rows, [&](const MeasuredStep& r) {
    return r.device == fitted && r.status == "ok" && n++ % 2 == 0;
  });
  return fitted;
}

std::vector<StepPoint> price_measured_steps(const std::filesystem::path& path,
                                            const std::vector<MeasuredStep>& rows,
                                            const devices::DeviceRegistry& registry,
                                            const devices::ModelRegistry& models,
                                            const costmodel::CalibrationSet& calibrations) {
  StepFiles files(path, registry, models);
  std::vector<StepPoint> out;
  for (const MeasuredStep& r : rows) {
    if (r.status == "error")
      continue;
    const devices::ClusterSpec& c = files.cluster(r.cluster);
    const devices::TaskSpec& t = files.task(r.task);
    StepPoint p;
    p.row = r;
    p.width = "h" + std::to_string(t.model.hidden);
    price_row(path, r, TrainContext{c, t, calibrations}, &p);
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

struct MeasuredLayout {
  double estimate = 0;
  std::vector<double> measured;
};

// The members that ran and the model priced, by task and cluster, then by layout.
using MeasuredLayouts =
    std::map<std::pair<std::string, std::string>, std::map<std::string, MeasuredLayout>>;

MeasuredLayouts measured_layouts(const std::vector<const StepPoint*>& members) {
  MeasuredLayouts out;
  for (const StepPoint* p : members) {
    if (p->row.status != "ok" || !p->estimate_s)
      continue;
    MeasuredLayout& l = out[{p->row.cluster, p->row.task}][p->row.layout];
    l.estimate = *p->estimate_s;
    l.measured.push_back(p->row.step_s);
  }
  return out;
}

// The worst shortfall of the model's pick among each task's measured layouts on one cluster
// (StepStats::regret), and how many such choices there were.
std::pair<double, std::size_t> choice_regret(const MeasuredLayouts& choices) {
  double worst = 0;
  std::size_t n = 0;
  for (const auto& [key, layouts] : choices) {
    if (layouts.size() < 2)
      continue;
    ++n;
    const MeasuredLayout* pick = nullptr;
    double best = 0;
    for (const auto& [name, l] : layouts) {
      if (!pick || l.estimate < pick->estimate)
        pick = &l;
      double m = costmodel::median(l.measured);
      best = best > 0 ? std::min(best, m) : m;
    }
    if (pick != nullptr)  // a choice has two layouts or more
      worst = std::max(worst, 100 * (costmodel::median(pick->measured) / best - 1));
  }
  return {worst, n};
}

// StepStats' repeatability and per-layout error.
void layout_stats(const MeasuredLayouts& all, StepStats& s) {
  double spread = 0;
  double error = 0;
  for (const auto& [key, layouts] : all) {
    for (const auto& [name, l] : layouts) {
      double m = costmodel::median(l.measured);
      ++s.layouts;
      error += std::fabs(l.estimate - m) / m;
      if (l.measured.size() < 2)
        continue;
      for (double x : l.measured) {
        spread += std::fabs(x - m) / m;
        ++s.repeat_rows;
      }
    }
  }
  s.layout_mape = s.layouts > 0 ? 100 * error / static_cast<double>(s.layouts) : 0;
  s.repeat_spread = s.repeat_rows > 0 ? 100 * spread / static_cast<double>(s.repeat_rows) : 0;
}

}  // namespace

std::vector<StepStats> step_stats(const std::vector<StepPoint>& points) {
  std::vector<StepStats> out;
  for (const auto& [g, members] : step_groups(points, true)) {
    StepStats s;
    s.group = g;
    std::vector<double> est;
    std::vector<double> meas;
    double mem = 0;
    for (const StepPoint* p : members) {
      bool ran = p->row.status == "ok";
      ++s.fit_rows;
      if (ran == p->estimate_s.has_value())
        ++s.fit_agree;
      if (!ran || !p->estimate_s)
        continue;
      est.push_back(*p->estimate_s);
      meas.push_back(p->row.step_s);
      double rel = (*p->estimate_s - p->row.step_s) / p->row.step_s;
      s.mape += std::fabs(rel);
      s.bias += rel;
      if (p->row.peak_reserved > 0) {
        mem += std::fabs(p->estimate_memory - p->row.peak_reserved) / p->row.peak_reserved;
        ++s.memory_rows;
      }
    }
    s.rows = est.size();
    if (s.rows > 0) {
      double n = static_cast<double>(s.rows);
      s.mape = 100 * s.mape / n;
      s.bias = 100 * s.bias / n;
      s.memory_mape = s.memory_rows > 0 ? 100 * mem / static_cast<double>(s.memory_rows) : 0;
      s.spearman = s.rows > 1 ? spearman(est, meas) : 0;
    }
    MeasuredLayouts layouts = measured_layouts(members);
    std::tie(s.regret, s.choices) = choice_regret(layouts);
    layout_stats(layouts, s);
    out.push_back(s);
  }
  return out;
}

KernelTime profiled_as(KernelTime model, const KernelTime& profiled) {
  if (profiled.loss <= 0) {
    model.memory += model.loss;
    model.loss = 0;
  }
  return model;
}

std::vector<KernelStats> kernel_stats(const std::vector<StepPoint>& points) {
  using Kind = double KernelTime::*;
  const std::vector<std::pair<std::string, Kind>> kinds = {{"gemm", &KernelTime::gemm},
                                                           {"attention", &KernelTime::attention},
                                                           {"memory", &KernelTime::memory},
                                                           {"loss", &KernelTime::loss},
                                                           {"optimizer", &KernelTime::optimizer}};
  std::vector<StepPoint> profiled;
  for (const StepPoint& p : points) {
    if (p.row.status == "ok" && p.row.kernels && p.estimate_s)
      profiled.push_back(p);
  }
  std::vector<KernelStats> out;
  for (const auto& group : step_groups(profiled, false)) {
    const std::vector<const StepPoint*>& members = group.second;
    auto stats = [&](const std::string& kind, const std::function<double(const KernelTime&)>& of) {
      KernelStats k{group.first, kind};
      for (const StepPoint* p : members) {
        double measured = of(*p->row.kernels);
        double model = of(profiled_as(p->estimate_profiled_kernels, *p->row.kernels));
        k.measured_share += 100 * measured / p->row.step_s;
        k.model_share += 100 * model / p->row.step_s;
        if (measured <= 0)
          continue;
        double err = 100 * (model - measured) / measured;
        k.mape += std::abs(err);
        k.bias += err;
        ++k.rows;
      }
      double n = static_cast<double>(std::max<std::size_t>(1, members.size()));
      double r = static_cast<double>(std::max<std::size_t>(1, k.rows));
      k.measured_share /= n;
      k.model_share /= n;
      k.mape /= r;
      k.bias /= r;
      out.push_back(k);
    };
    for (const auto& [name, kind] : kinds)
      stats(name, [kind = kind](const KernelTime& t) { return t.*kind; });
    stats("all", [](const KernelTime& t) { return t.total(); });
  }
  return out;
}

ProbePeaks load_probe_peaks(const std::filesystem::path& path) {
  ProbePeaks peaks;
  std::set<std::tuple<std::string, std::string, std::string>> unknown;
  read_steps_csv(path,
                 {"cluster", "task", "layout", "rank", "world", "status", "peak_allocated_bytes"},
                 [&](const StepsCsvRow& c) {
                   auto key = std::make_tuple(c.at("cluster"), c.at("task"), c.at("layout"));
                   std::optional<double> a = c.number("peak_allocated_bytes", 1e15, false);
                   if (!a || *a <= 0) {
                     unknown.insert(key);
                     return;
                   }
                   double& peak = peaks[key];
                   peak = std::max(peak, *a);
                 });
  for (const auto& key : unknown)
    peaks.erase(key);
  return peaks;
}

std::size_t subtract_leftover(const ProbePeaks& probe, std::vector<MeasuredStep>& rows) {
  std::size_t changed = 0;
  for (MeasuredStep& r : rows) {
    if (r.status != "ok" || r.peak_allocated <= 0 || r.leftover > 0)
      continue;
    auto it = probe.find({r.cluster, r.task, r.layout});
    Layout l;
    if (it == probe.end() || !parse_layout(r.layout, &l).empty() || (l.dp > 1 && l.zero <= 1))
      continue;
    double excess = r.peak_allocated - it->second;
    if (excess <= 0.02 * it->second)
      continue;
    r.leftover = excess;
    r.peak_allocated -= excess;
    if (r.peak_reserved > 0)
      r.peak_reserved = std::max(r.peak_allocated, r.peak_reserved - excess);
    ++changed;
  }
  return changed;
}

ProbeStats live_against_probe(const ProbePeaks& probe, const std::vector<StepPoint>& points) {
  ProbeStats s;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const StepPoint& p : points) {
    auto key = std::make_tuple(p.row.cluster, p.row.task, p.row.layout);
    auto it = probe.find(key);
    Layout l;
    // Under DDP the probe's stand-in hook hands each bucket back at once, so it frees the
    // first step's buckets sooner than NCCL does: not a measure of those layouts' peak.
    if (it == probe.end() || !p.estimate_s || p.estimate_live <= 0 ||
        !parse_layout(p.row.layout, &l).empty() || (l.dp > 1 && l.zero <= 1) ||
        !seen.insert(key).second)
      continue;
    double rel = p.estimate_live / it->second - 1;
    s.mape += std::fabs(rel);
    s.bias += rel;
    if (std::fabs(rel) > std::fabs(s.worst))
      s.worst = rel;
    ++s.layouts;
  }
  if (s.layouts > 0) {
    double n = static_cast<double>(s.layouts);
    s.mape = 100 * s.mape / n;
    s.bias = 100 * s.bias / n;
    s.worst *= 100;
  }
  return s;
}

std::filesystem::path probe_beside(const std::filesystem::path& csv) {
  return csv.parent_path() / "memory_probe" / "rank_peaks.csv";
}

}  // namespace yirage::planner
