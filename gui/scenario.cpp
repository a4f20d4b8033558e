#include "gui/scenario.h"

#include "report/hetero_report.h"
#include "report/plan_report.h"
#include "report/summary.h"

#include <algorithm>
#include <chrono>
#include <sstream>

namespace yirage::gui {
namespace {

devices::InputError what_if_error(const std::string& message) {
  devices::Diagnostic d;
  d.loc.file = "what-if";
  d.message = message;
  return devices::InputError({d});
}

}  // namespace

void apply(const WhatIf& w,
           const devices::DeviceRegistry& registry,
           devices::ClusterSpec& cluster,
           devices::TaskSpec& task) {
  devices::NodeGroup& g = cluster.groups.front();
  auto positive = [](std::optional<std::int64_t> v, const char* what) {
    if (v && *v < 1)
      throw what_if_error(std::string(what) + " must be at least 1");
  };
  positive(w.nodes, "nodes");
  positive(w.devices_per_node, "devices per node");
  positive(w.global_batch, "the global batch");
  positive(w.sequence_length, "the sequence length");
  positive(w.prompt_length, "the prompt length");
  positive(w.output_length, "the output length");
  if (w.request_rate && *w.request_rate <= 0)
    throw what_if_error("the request rate must be positive");
  if (w.fabric_scale <= 0 || w.network_scale <= 0)
    throw what_if_error("bandwidth scales must be positive");
  if (w.nodes)
    g.nodes = *w.nodes;
  if (w.devices_per_node)
    g.devices_per_node = *w.devices_per_node;
  if (cluster.total_nodes() > 1 && !cluster.network)
    throw what_if_error("more than one node needs a network: the cluster file has none");
  if (w.device && *w.device != g.device) {
    // The cluster's own (inline) device types first, then the registry's.
    const devices::DeviceSpec* d = nullptr;
    for (const devices::DeviceSpec& t : cluster.device_types) {
      if (t.name == *w.device)
        d = &t;
    }
    if (d == nullptr)
      d = registry.find(*w.device);
    if (d == nullptr)
      throw what_if_error("unknown device '" + *w.device + "'");
    g.device = d->name;
    if (std::none_of(cluster.device_types.begin(), cluster.device_types.end(),
                     [&](const devices::DeviceSpec& t) { return t.name == d->name; })) {
      cluster.device_types.push_back(*d);
      std::sort(cluster.device_types.begin(), cluster.device_types.end(),
                [](const devices::DeviceSpec& a, const devices::DeviceSpec& b) {
                  return a.name < b.name;
                });
    }
  }
  for (devices::NodeGroup& n : cluster.groups) {
    n.fabric.bandwidth = n.fabric.bandwidth * w.fabric_scale;
    if (n.nic_bandwidth)
      n.nic_bandwidth = *n.nic_bandwidth * w.network_scale;
  }
  if (cluster.network)
    cluster.network->nic_bandwidth = cluster.network->nic_bandwidth * w.network_scale;
  if (w.global_batch)
    task.global_batch = *w.global_batch;
  if (w.sequence_length)
    task.sequence_length = *w.sequence_length;
  if (w.precision)
    task.precision = *w.precision;
  if (task.serve) {
    if (w.request_rate)
      task.serve->request_rate = devices::PerSec{*w.request_rate};
    if (w.prompt_length)
      task.serve->prompt_length = *w.prompt_length;
    if (w.output_length)
      task.serve->output_length = *w.output_length;
  }
}

ScenarioResult evaluate(devices::ClusterSpec cluster,
                        devices::TaskSpec task,
                        const costmodel::CalibrationSet& calibrations) {
  auto start = std::chrono::steady_clock::now();
  ScenarioResult r;
  r.cluster = cluster;
  r.task = task;
  std::ostringstream text;
  try {
    report::check_fit(cluster, task);
    bool mixed = cluster.groups.size() > 1;
    if (task.mode == devices::Mode::kTrain && mixed) {
      planner::HeteroResult h = planner::search_hetero_training(cluster, task, calibrations);
      if (!h.plan && !h.pipeline) {
        r.error = "no plan: " + h.why;
      } else {
        report::print_hetero_training(text, h);
        r.mixed_train = std::move(h);
      }
    } else if (task.mode == devices::Mode::kTrain) {
      planner::TrainContext tc{cluster, task, calibrations};
      planner::SearchResult s = planner::search_training(tc);
      r.candidates = s.candidates;
      r.train = std::move(s.plans);
      if (r.train.empty())
        r.error = "no layout fits: `yirage-plan CLUSTER TASK` lists why";
      else
        report::print_plan_detail(text, r.train.front(), task,
                                  report::model_note(cluster, calibrations, devices::Mode::kTrain));
    } else if (mixed) {
      planner::HeteroInferResult h = planner::search_hetero_inference(cluster, task, calibrations);
      if (!h.plan) {
        r.error = "no plan: " + h.why;
      } else {
        report::print_hetero_infer(text, task, *h.plan);
        r.mixed_infer = std::move(h.plan);
      }
    } else {
      planner::InferContext ic{cluster, task, calibrations};
      planner::InferSearchResult s = planner::search_inference(ic);
      r.candidates = s.candidates;
      r.infer = std::move(s.plans);
      if (r.infer.empty())
        r.error = "no layout fits: `yirage-plan CLUSTER TASK` lists why";
      else
        report::print_infer_table(text, task, r.infer, 10);
    }
  } catch (const devices::InputError& e) {
    r.error = e.what();
  }
  r.report = text.str();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace yirage::gui
