#include "planner/infer_step_validation.h"

#include "devices/cluster_loader.h"
#include "devices/support/yaml_reader.h"
#include "devices/task_loader.h"
#include "planner/infer_estimate.h"
#include "planner/step_validation.h"

#include <charconv>
#include <cmath>
#include <map>
#include <sstream>
#include <variant>

namespace yirage::planner {

bool is_measured_infer_steps_file(const std::filesystem::path& path) {
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  return text && first_data_line(*text).rfind("cluster,task,tp,", 0) == 0;
}

std::vector<MeasuredInferStep> load_measured_infer_steps(const std::filesystem::path& path) {
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  std::vector<MeasuredInferStep> rows;
  std::map<std::string, std::size_t> col;
  std::istringstream in(*text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line.front() == '#')
      continue;
    std::vector<std::string> c = csv_cells(line);
    if (col.empty()) {
      for (std::size_t i = 0; i < c.size(); ++i)
        col[c[i]] = i;
      for (const char* need : {"cluster", "task", "tp", "gpus", "device", "status", "batch",
                               "context", "ttft_s", "tpot_s"}) {
        if (col.count(need) == 0)
          diag.error({path.string(), n, 1}, std::string("the header has no column '") + need + "'",
                     line);
      }
      if (!diag.empty())
        break;
      continue;
    }
    if (c.size() != col.size()) {
      diag.error({path.string(), n, 1},
                 std::to_string(c.size()) + " cells, the header has " + std::to_string(col.size()),
                 line);
      continue;
    }
    auto at = [&](const char* name) -> const std::string& {
      return c[col.at(name)];
    };
    MeasuredInferStep r;
    r.cluster = at("cluster");
    r.task = at("task");
    r.device = at("device");
    r.status = at("status");
    r.line = n;
    for (const std::string* name : {&r.cluster, &r.task}) {
      if (!plain_file_name(*name)) {
        diag.error({path.string(), n, 1},
                   "'" + *name + "' is not a plain file name (letters, digits, '.', '_', '-')",
                   line);
      }
    }
    if (r.status != "ok" && r.status != "oom" && r.status != "error")
      diag.error({path.string(), n, 1}, "status must be ok, oom or error, got '" + r.status + "'",
                 line);
    auto number = [&](const char* name, double max) -> std::optional<double> {
      const std::string& s = at(name);
      if (s.empty())
        return std::nullopt;
      double v = 0;
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v <= 0 ||
          v > max) {
        diag.error({path.string(), n, 1}, std::string(name) + " '" + s + "' is out of range", line);
        return std::nullopt;
      }
      return v;
    };
    auto count = [&](const char* name) {
      std::optional<double> v = number(name, 1 << 30);
      if (!v)
        diag.error({path.string(), n, 1}, std::string(name) + " is required", line);
      return static_cast<std::int64_t>(v.value_or(1));
    };
    r.tp = count("tp");
    r.gpus = count("gpus");
    r.batch = count("batch");
    r.context = count("context");
    r.ttft_s = number("ttft_s", 1e6);
    r.tpot_s = number("tpot_s", 1e6);
    rows.push_back(r);
  }
  if (col.empty() && diag.empty())
    diag.error({path.string(), 0, 0}, "no header line");
  diag.throw_if_errors();
  return rows;
}

std::vector<InferStepPoint> price_measured_infer_steps(
    const std::filesystem::path& path,
    const std::vector<MeasuredInferStep>& rows,
    const devices::DeviceRegistry& registry,
    const devices::ModelRegistry& models,
    const costmodel::CalibrationSet& calibrations) {
  std::filesystem::path steps = path.parent_path() / "steps";
  std::map<std::string, devices::ClusterSpec> clusters;
  std::map<std::string, devices::TaskSpec> tasks;
  std::vector<InferStepPoint> out;
  for (const MeasuredInferStep& r : rows) {
    if (r.status != "ok")
      continue;
    if (clusters.count(r.cluster) == 0)
      clusters.emplace(r.cluster,
                       devices::load_cluster(steps / "clusters" / (r.cluster + ".yaml"), registry));
    if (tasks.count(r.task) == 0)
      tasks.emplace(r.task, devices::load_task(steps / "tasks" / (r.task + ".yaml"), models));
    const devices::ClusterSpec& c = clusters.at(r.cluster);
    InferStepPoint p;
    p.row = r;
    devices::TaskSpec t = tasks.at(r.task);
    p.width = "h" + std::to_string(t.model.hidden);
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
  std::map<std::string, std::vector<const InferStepPoint*>> groups;
  std::vector<std::string> order;
  auto add = [&](const std::string& g, const InferStepPoint& p) {
    if (groups.count(g) == 0)
      order.push_back(g);
    groups[g].push_back(&p);
  };
  for (const InferStepPoint& p : points)
    add(std::to_string(p.row.gpus) + (p.row.gpus == 1 ? " GPU" : " GPUs"), p);
  for (const InferStepPoint& p : points)
    add(p.width, p);
  for (const InferStepPoint& p : points)
    add("all", p);
  std::vector<InferStepStats> out;
  for (const std::string& g : order) {
    InferStepStats s;
    s.group = g;
    for (const InferStepPoint* p : groups[g]) {
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
