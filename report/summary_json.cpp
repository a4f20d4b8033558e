#include "report/summary_json.h"

#include "report/summary.h"

#include "planner/workload/memory_floor.h"
#include "planner/workload/model_size.h"

namespace yirage::report {

namespace {

nlohmann::ordered_json or_null(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json cluster_json(const devices::ClusterSpec& c) {
  nlohmann::ordered_json j;
  j["file"] = c.loc.file;
  j["node_groups"] = nlohmann::ordered_json::array();
  for (const devices::NodeGroup& g : c.groups) {
    bool fabric = g.fabric.kind != devices::FabricKind::kNone && g.devices_per_node > 1;
    double nic = c.nic_bandwidth(g).value;
    j["node_groups"].push_back(
        {{"group", g.name},
         {"device", g.device},
         {"nodes", g.nodes},
         {"devices_per_node", g.devices_per_node},
         {"devices", g.devices()},
         {"fabric", fabric ? nlohmann::ordered_json(devices::fabric_name(g.fabric.kind)) : nullptr},
         {"fabric_bytes_per_s",
          fabric ? nlohmann::ordered_json(g.fabric.bandwidth.value) : nullptr},
         {"fabric_latency_s", fabric ? nlohmann::ordered_json(g.fabric.latency.value) : nullptr},
         {"nic_bytes_per_s", nic > 0 ? nlohmann::ordered_json(nic) : nullptr},
         {"usd_per_device_hour", or_null(c.price_per_hour(g))}});
  }
  if (c.network) {
    const devices::Network& n = *c.network;
    j["network"] = {{"topology", devices::topology_name(n.topology)},
                    {"nic_bytes_per_s", n.nic_bandwidth.value},
                    {"latency_s", n.latency.value},
                    {"oversubscription", n.oversubscription}};
  } else {
    j["network"] = nullptr;
  }
  ClusterTotals t = cluster_totals(c);
  j["totals"] = {{"devices", c.total_devices()},      {"nodes", c.total_nodes()},
                 {"peak_bf16_flops_per_s", t.bf16},   {"memory_bytes", t.memory},
                 {"memory_bytes_per_s", t.bandwidth}, {"tdp_w", or_null(t.power)},
                 {"usd_per_hour", or_null(t.price)}};
  return j;
}

nlohmann::ordered_json task_json(const devices::TaskSpec& t, const devices::ClusterSpec& c) {
  const devices::ModelSpec& m = t.model;
  planner::ParameterCount p = planner::count_parameters(m);
  nlohmann::ordered_json j;
  j["file"] = t.loc.file;
  j["model"] = {{"name", m.name},
                {"preset", t.model_preset.empty() ? nlohmann::ordered_json(nullptr)
                                                  : nlohmann::ordered_json(t.model_preset)},
                {"architecture", architecture_text(m)},
                {"layers", m.layers},
                {"hidden", m.hidden},
                {"heads", m.heads},
                {"vocab", m.vocab}};
  j["parameters"] = {{"total", p.total}, {"active", p.active}};
  j["weights_bytes"] = planner::weight_bytes(m, t.precision);
  j["mode"] = devices::mode_name(t.mode);
  j["precision"] = devices::precision_text(t);
  std::int64_t seq = t.mode == devices::Mode::kServe && t.serve
                         ? t.serve->prompt_length + t.serve->output_length
                         : t.sequence_length;
  j["sequence_length"] = t.sequence_length;
  j["global_batch"] = t.global_batch;
  if (t.serve) {
    j["serve"] = {{"requests_per_s", t.serve->request_rate.value},
                  {"prompt_tokens", t.serve->prompt_length},
                  {"output_tokens", t.serve->output_length}};
  }
  j["forward_flops_per_token"] = planner::forward_flops_per_token(m, seq);
  j["training_flops_per_token"] =
      t.mode == devices::Mode::kTrain
          ? nlohmann::ordered_json(planner::training_flops_per_token(m, seq))
          : nlohmann::ordered_json(nullptr);
  planner::MemoryFloor f = planner::memory_floor(t);
  double memory = cluster_totals(c).memory;
  j["memory_floor"] = {
      {"bytes", f.bytes},
      {"bytes_per_parameter", f.bytes_per_param},
      {"holds", f.what},
      {"fraction_of_cluster",
       or_null(memory > 0 ? std::optional<double>(f.bytes / memory) : std::nullopt)}};
  return j;
}

}  // namespace yirage::report
