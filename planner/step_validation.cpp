#include "planner/step_validation.h"

#include "devices/cluster_loader.h"
#include "devices/support/yaml_reader.h"
#include "devices/task_loader.h"
#include "planner/fidelity.h"
#include "planner/train_estimate.h"

#include <charconv>
#include <cmath>
#include <map>
#include <sstream>
#include <variant>

namespace yirage::planner {
namespace {

constexpr const char* kHeaderStart = "cluster,task,layout,gpus,";

}  // namespace

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

std::string first_data_line(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.front() != '#')
      return line;
  }
  return {};
}

bool is_measured_steps_file(const std::filesystem::path& path) {
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  return text && first_data_line(*text).rfind(kHeaderStart, 0) == 0;
}

std::vector<MeasuredStep> load_measured_steps(const std::filesystem::path& path) {
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  std::vector<MeasuredStep> rows;
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
      for (const char* need : {"cluster", "task", "layout", "gpus", "device", "framework", "status",
                               "step_s", "peak_allocated_bytes", "peak_reserved_bytes"}) {
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
    MeasuredStep r;
    r.cluster = at("cluster");
    r.task = at("task");
    r.layout = at("layout");
    r.device = at("device");
    r.framework = at("framework");
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
    auto number = [&](const char* name, double* out, bool required) {
      const std::string& s = at(name);
      if (s.empty() && !required)
        return;
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
      if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(*out) || *out <= 0 ||
          *out > 1e15) {
        diag.error({path.string(), n, 1},
                   std::string(name) + " '" + s + "' is not a positive number", line);
      }
    };
    double gpus = 0;
    number("gpus", &gpus, true);
    r.gpus = static_cast<std::int64_t>(std::min(gpus, 1e9));
    bool ok = r.status == "ok";
    number("step_s", &r.step_s, ok);
    number("peak_reserved_bytes", &r.peak_reserved, ok);
    number("peak_allocated_bytes", &r.peak_allocated, ok);
    rows.push_back(r);
  }
  if (col.empty() && !!diag.empty())
    diag.error({path.string(), 0, 0}, "no header line");
  diag.throw_if_errors();
  return rows;
}

std::vector<StepPoint> price_measured_steps(const std::filesystem::path& path,
                                            const std::vector<MeasuredStep>& rows,
                                            const devices::DeviceRegistry& registry,
                                            const devices::ModelRegistry& models,
                                            const costmodel::CalibrationSet& calibrations) {
  std::filesystem::path steps = path.parent_path() / "steps";
  std::map<std::string, devices::ClusterSpec> clusters;
  std::map<std::string, devices::TaskSpec> tasks;
  std::vector<StepPoint> out;
  for (const MeasuredStep& r : rows) {
    if (r.status == "error")
      continue;
    if (clusters.count(r.cluster) == 0)
      clusters.emplace(r.cluster,
                       devices::load_cluster(steps / "clusters" / (r.cluster + ".yaml"), registry));
    if (tasks.count(r.task) == 0)
      tasks.emplace(r.task, devices::load_task(steps / "tasks" / (r.task + ".yaml"), models));
    const devices::ClusterSpec& c = clusters.at(r.cluster);
    const devices::TaskSpec& t = tasks.at(r.task);
    StepPoint p;
    p.row = r;
    p.width = "h" + std::to_string(t.model.hidden);
    Layout l;
    if (std::string err = parse_layout(r.layout, &l); !err.empty()) {
      devices::Diagnostics diag;
      diag.error({path.string(), r.line, 1}, "layout: " + err);
      diag.throw_if_errors();
    }
    auto e = estimate_training(TrainContext{c, t, calibrations}, l);
    if (auto* pe = std::get_if<PlanEstimate>(&e)) {
      p.estimate_s = pe->step.total;
      p.estimate_memory = pe->memory.total();
    } else {
      p.rejected = std::get<Rejected>(e).reason;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<StepStats> step_stats(const std::vector<StepPoint>& points) {
  std::map<std::string, std::vector<const StepPoint*>> groups;
  std::vector<std::string> order;
  auto add = [&](const std::string& g, const StepPoint& p) {
    if (groups.count(g) == 0)
      order.push_back(g);
    groups[g].push_back(&p);
  };
  auto gpus = [](std::int64_t n) {
    return std::to_string(n) + (n == 1 ? " GPU" : " GPUs");
  };
  for (const StepPoint& p : points)
    add(gpus(p.row.gpus), p);
  for (const StepPoint& p : points)
    add(p.width, p);
  for (const StepPoint& p : points)
    add(p.width + ", " + gpus(p.row.gpus), p);
  for (const StepPoint& p : points)
    add("all", p);
  std::vector<StepStats> out;
  for (const std::string& g : order) {
    StepStats s;
    s.group = g;
    std::vector<double> est;
    std::vector<double> meas;
    double mem = 0;
    for (const StepPoint* p : groups[g]) {
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
      mem += std::fabs(p->estimate_memory - p->row.peak_reserved) / p->row.peak_reserved;
    }
    s.rows = est.size();
    if (s.rows > 0) {
      double n = static_cast<double>(s.rows);
      s.mape = 100 * s.mape / n;
      s.bias = 100 * s.bias / n;
      s.memory_mape = 100 * mem / n;
      s.spearman = s.rows > 1 ? spearman(est, meas) : 0;
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace yirage::planner
