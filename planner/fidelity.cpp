#include "planner/fidelity.h"

#include "devices/cluster_loader.h"
#include "devices/support/yaml_reader.h"
#include "planner/train_estimate.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>
#include <variant>

namespace yirage::planner {

std::string TrainingRun::model() const {
  return "gpt h" + std::to_string(hidden) + " L" + std::to_string(layers);
}

std::vector<TrainingRun> load_training_runs(const std::filesystem::path& path) {
  devices::Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  std::vector<TrainingRun> runs;
  std::istringstream in(*text);
  std::string line;
  bool header = false;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line.front() == '#')
      continue;
    if (!header) {
      if (line != "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp,time_ms") {
        diag.error({path.string(), n, 1}, "unexpected header", line);
      }
      header = true;
      continue;
    }
    std::array<double, 11> v{};
    std::size_t start = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::size_t comma = line.find(',', start);
      std::string cell = line.substr(start, comma == std::string::npos ? comma : comma - start);
      auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v[i]);
      if (ec != std::errc() || ptr != cell.data() + cell.size() || v[i] <= 0) {
        diag.error({path.string(), n, static_cast<int>(start) + 1},
                   "'" + cell + "' is not a positive number", line);
      }
      start = comma == std::string::npos ? line.size() : comma + 1;
    }
    auto i64 = [&](std::size_t i) {
      return static_cast<std::int64_t>(v[i]);
    };
    runs.push_back({i64(0), i64(1), i64(2), i64(3), i64(4), i64(5), i64(6), i64(7), i64(8), i64(9),
                    v[10] * 1e-3, n});
  }
  diag.throw_if_errors();
  return runs;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& x) {
    std::vector<std::size_t> idx(x.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](auto i, auto j) { return x[i] < x[j]; });
    std::vector<double> r(x.size());
    for (std::size_t i = 0; i < idx.size();) {
      std::size_t j = i;
      while (j + 1 < idx.size() && x[idx[j + 1]] == x[idx[i]])
        ++j;
      for (std::size_t k = i; k <= j; ++k)
        r[idx[k]] = (static_cast<double>(i + j) / 2) + 1;
      i = j + 1;
    }
    return r;
  };
  std::vector<double> ra = ranks(a);
  std::vector<double> rb = ranks(b);
  double n = static_cast<double>(a.size());
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double num = 0, da = 0, db = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    num += (ra[i] - ma) * (rb[i] - mb);
    da += (ra[i] - ma) * (ra[i] - ma);
    db += (rb[i] - mb) * (rb[i] - mb);
  }
  return da > 0 && db > 0 ? num / std::sqrt(da * db) : 0;
}

namespace {

// The GPT models of Megatron-LM: LayerNorm, biases, a plain 4h FFN, learned positions,
// tied embeddings, the GPT-2 vocabulary padded to 51200 (Megatron pads to a multiple of 128
// times the tensor-parallel size; 51200 covers t <= 8... as in vTrain's configurations).
devices::TaskSpec gpt_task(const TrainingRun& r) {
  devices::TaskSpec t;
  devices::ModelSpec& m = t.model;
  m.name = r.model();
  m.layers = r.layers;
  m.hidden = r.hidden;
  m.heads = r.heads;
  m.kv_heads = r.heads;
  m.head_dim = r.hidden / r.heads;
  m.ffn = 4 * r.hidden;
  m.ffn_kind = devices::FfnKind::kPlain;
  m.vocab = 51200;
  m.tied_embeddings = true;
  m.norm = devices::NormKind::kLayerNorm;
  m.bias = devices::BiasKind::kAll;
  m.position = devices::PositionKind::kLearned;
  m.max_positions = r.seq;
  t.name = m.name;
  t.mode = devices::Mode::kTrain;
  t.precision = devices::DType::kFp16;
  t.sequence_length = r.seq;
  t.global_batch = r.global_batch;
  t.attention = devices::AttentionKernel::kUnfused;  // Megatron-DeepSpeed of vTrain's runs
  return t;
}

struct Case {
  TrainingRun run;
  devices::ClusterSpec cluster;
  devices::TaskSpec task;
  bool fit = false;
};

std::optional<double> estimate(const Case& c, const costmodel::CalibrationSet& cal) {
  TrainContext cx{c.cluster, c.task, cal};
  Layout l{c.run.dp, c.run.tp, c.run.pp, c.run.micro_batch, Recompute::kFull, 0};
  // Megatron-DeepSpeed of vTrain's runs: tensor parallelism without sequence parallelism, and
  // DeepSpeed's engine accumulates the fp16 gradients through autograd.
  l.sp = false;
  l.grad_fusion = false;
  auto e = estimate_training(cx, l);
  if (auto* p = std::get_if<PlanEstimate>(&e))
    return p->step.total;
  return std::nullopt;
}

double squared_error(const std::vector<Case>& cases, const costmodel::CalibrationSet& cal) {
  double err = 0;
  for (const Case& c : cases) {
    if (!c.fit)
      continue;
    std::optional<double> t = estimate(c, cal);
    double rel = t ? (*t - c.run.time_s) / c.run.time_s : 1;
    err += rel * rel;
  }
  return err;
}

costmodel::GpuEfficiency fit_efficiency(const std::vector<Case>& cases,
                                        const std::string& device,
                                        costmodel::CalibrationSet cal,
                                        double fixed_matrix) {
  costmodel::GpuEfficiency best;
  if (fixed_matrix > 0)
    best.matrix = fixed_matrix;
  cal.add_gpu(device, best);
  double best_err = squared_error(cases, cal);
  std::array<double costmodel::GpuEfficiency::*, 4> params = {
      &costmodel::GpuEfficiency::matrix, &costmodel::GpuEfficiency::attention,
      &costmodel::GpuEfficiency::memory, &costmodel::GpuEfficiency::vector};
  for (int round = 0; round < 2; ++round) {
    for (auto p : params) {
      if (fixed_matrix > 0 && p == &costmodel::GpuEfficiency::matrix)
        continue;
      for (int step = 1; step <= 50; ++step) {
        costmodel::GpuEfficiency trial = best;
        trial.*p = step / 50.0;
        cal.add_gpu(device, trial);
        double err = squared_error(cases, cal);
        if (err < best_err) {
          best_err = err;
          best = trial;
        }
      }
    }
    for (devices::Seconds costmodel::GpuEfficiency::*p :
         {&costmodel::GpuEfficiency::launch, &costmodel::GpuEfficiency::host}) {
      for (int us = 0; us <= 120; ++us) {
        costmodel::GpuEfficiency trial = best;
        trial.*p = devices::Seconds{us * 1e-6};
        cal.add_gpu(device, trial);
        double err = squared_error(cases, cal);
        if (err < best_err) {
          best_err = err;
          best = trial;
        }
      }
    }
  }
  best.source = "fitted on the even rows of the measured runs";
  return best;
}

}  // namespace

FidelityResult training_fidelity(const std::vector<TrainingRun>& runs,
                                 const std::string& device,
                                 const devices::DeviceRegistry& registry,
                                 const costmodel::CalibrationSet& calibrations,
                                 FidelityRows rows,
                                 double fixed_matrix) {
  bool fit = rows == FidelityRows::kFit;
  std::vector<Case> cases;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const TrainingRun& r = runs[i];
    std::string yaml = "name: node\nnode_groups:\n  - {device: \"" + device +
                       "\", nodes: 1, devices_per_node: " + std::to_string(r.gpus) +
                       ", fabric: {kind: nvswitch, latency: 1 us}}\n";
    cases.push_back({r, devices::parse_cluster("run", yaml, registry), gpt_task(r), i % 2 == 0});
  }
  FidelityResult out;
  costmodel::CalibrationSet cal = calibrations;
  if (fit) {
    out.efficiency = fit_efficiency(cases, registry.find(device)->name, cal, fixed_matrix);
    cal.add_gpu(registry.find(device)->name, out.efficiency);
    out.fitted = true;
  } else if (const auto* e = cal.find_gpu(registry.find(device)->name)) {
    out.efficiency = *e;
  }
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> series;
  std::vector<double> all_err;
  for (const Case& c : cases) {
    if (rows != FidelityRows::kAll && c.fit)
      continue;
    std::optional<double> t = estimate(c, cal);
    if (!t) {
      ++out.rejected;
      continue;
    }
    out.points.emplace_back(c.run, *t);
    series[c.run.model()].first.push_back(*t);
    series[c.run.model()].second.push_back(c.run.time_s);
    all_err.push_back(std::fabs(*t - c.run.time_s) / c.run.time_s);
  }
  for (const auto& [model, s] : series) {
    FidelityStats st{model, s.first.size(), 0, spearman(s.first, s.second)};
    for (std::size_t i = 0; i < s.first.size(); ++i) {
      st.mape += std::fabs(s.first[i] - s.second[i]) / s.second[i];
    }
    st.mape = 100 * st.mape / static_cast<double>(st.rows);
    out.by_model.push_back(st);
  }
  out.overall.model = "all";
  out.overall.rows = all_err.size();
  out.overall.mape = all_err.empty() ? 0
                                     : 100 * std::accumulate(all_err.begin(), all_err.end(), 0.0) /
                                           static_cast<double>(all_err.size());
  return out;
}

}  // namespace yirage::planner
