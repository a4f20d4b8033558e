#include "costmodel/validation.h"

#include "costmodel/collective.h"
#include "costmodel/gpu_calibration.h"
#include "devices/cluster_loader.h"

#include <algorithm>
#include <cmath>

namespace yirage::costmodel {
namespace {

std::optional<Collective> collective_from(const std::string& op) {
  for (Collective c : all_collectives()) {
    if (collective_name(c) == op)
      return c;
  }
  return std::nullopt;
}

}  // namespace

// The one-node cluster a row describes, built through the cluster loader so that the
// fabric's bandwidth and latency default from the device exactly as in a cluster file.
CommGroupResult row_group(const MeasuredRow& row, const devices::DeviceRegistry& registry) {
  std::string fabric = row.fabric;
  if (fabric.empty()) {  // nccl-tests output: NVLink devices sit on an NVSwitch, others on PCIe
    const devices::DeviceSpec* d = registry.find(row.device);
    bool nvlink = d != nullptr && std::any_of(d->links.begin(), d->links.end(),
                                              [](const auto& l) { return l.kind == "nvlink"; });
    fabric = nvlink ? "nvswitch" : "pcie";
  }
  std::string yaml = "name: measured\nnode_groups:\n  - device: \"" + row.device +
                     "\"\n    nodes: 1\n    devices_per_node: " + std::to_string(row.ranks) + "\n" +
                     (row.ranks > 1 ? "    fabric: {kind: " + fabric + "}\n" : "");
  try {
    devices::ClusterSpec c = devices::parse_cluster(row.loc.str(), yaml, registry);
    return make_comm_group(c, row.ranks);
  } catch (const devices::InputError& e) {
    return {std::nullopt, e.items().front().message};
  }
}

void apply_calibration(CommGroup& group, const CalibrationSet& set, Launch launch) {
  const CollectiveCalibration* c =
      set.find(group.device, devices::fabric_name(group.fabric), group.ranks_per_node, launch);
  if (c == nullptr)
    return;
  group.intra_bw = group.intra_bw * c->bandwidth_scale;
  group.extra_latency = c->extra_latency;
  for (Collective op : all_collectives()) {
    auto it = c->per_collective.find(collective_name(op));
    if (it == c->per_collective.end())
      continue;
    auto i = static_cast<std::size_t>(op);
    group.op_bw_scale[i] = it->second.bandwidth_scale / c->bandwidth_scale;
    group.op_extra_latency_s[i] = it->second.extra_latency.value;
    group.op_fill_ratio[i] = it->second.fill_ratio;
    group.op_fill_bytes[i] = it->second.fill_bytes;
    group.op_fill_power[i] = it->second.fill_power;
    group.op_simple_latency_s[i] = it->second.simple_latency.value;
    group.op_issue_s[i] = it->second.issue.value;
  }
  group.calibration = c->loc.file;
}

Validation validate_collectives(const MeasuredFile& file,
                                const devices::DeviceRegistry& registry,
                                const CalibrationSet* calibrations) {
  Validation v;
  for (const MeasuredRow& row : file.rows) {
    std::string where = row.loc.file + ":" + std::to_string(row.loc.line) + ": ";
    std::optional<Collective> op = collective_from(row.op);
    if (row.kind != "collective" || !op) {
      v.skipped.push_back(where + "not a collective ('" + row.op + "')");
      continue;
    }
    if (row.ranks_per_node != row.ranks) {
      v.skipped.push_back(where + "multi-node row: the file does not describe the network");
      continue;
    }
    CommGroupResult g = row_group(row, registry);
    if (!g.group) {
      v.skipped.push_back(where + g.reason);
      continue;
    }
    if (calibrations != nullptr)
      apply_calibration(*g.group, *calibrations, parse_launch(row.launch).value_or(Launch::kGraph));
    CollectiveEstimate e = estimate_collective(*g.group, *op, row.bytes);
    ValidationPoint p;
    p.row = row;
    p.estimate_s = e.latency().value;
    p.error = (p.estimate_s - row.time_s) / row.time_s;
    p.choice = algorithm_name(e.best.algorithm) + "/" + protocol_name(e.best.protocol);
    v.points.push_back(std::move(p));
  }
  return v;
}

namespace {

BandStats stats(std::string name,
                double low,
                double high,
                const std::vector<ValidationPoint>& points) {
  BandStats b{std::move(name), low, high, 0, 0, 0, 0};
  for (const ValidationPoint& p : points) {
    if (p.row.bytes < low || p.row.bytes >= high)
      continue;
    ++b.rows;
    b.mape += std::fabs(p.error);
    b.bias += p.error;
    b.max_abs = std::max(b.max_abs, std::fabs(p.error));
  }
  if (b.rows > 0) {
    b.mape = 100 * b.mape / static_cast<double>(b.rows);
    b.bias = 100 * b.bias / static_cast<double>(b.rows);
  }
  b.max_abs *= 100;
  return b;
}

}  // namespace

std::vector<BandStats> band_stats(const std::vector<ValidationPoint>& points) {
  constexpr double kMiB = 1024.0 * 1024.0;
  return {stats("< 1 MiB", 0, kMiB, points), stats("1 - 8 MiB", kMiB, 8 * kMiB, points),
          stats("8 - 64 MiB", 8 * kMiB, 64 * kMiB, points),
          stats("64 - 512 MiB", 64 * kMiB, 512 * kMiB, points),
          stats(">= 512 MiB", 512 * kMiB, 1e300, points)};
}

BandStats overall(const std::vector<ValidationPoint>& points, double min_bytes) {
  return stats("all", min_bytes, 1e300, points);
}

BandStats overall_below(const std::vector<ValidationPoint>& points, double min_bytes) {
  return stats("below", 0, min_bytes, points);
}

Validation validate_ops(const MeasuredFile& file,
                        const devices::DeviceRegistry& registry,
                        const CalibrationSet* calibrations) {
  Validation v;
  for (const MeasuredRow& row : file.rows) {
    if (row.kind != "op")
      continue;
    GpuEfficiency eff;
    const devices::DeviceSpec* d = registry.find(row.device);
    if (calibrations != nullptr && d != nullptr) {
      if (const GpuEfficiency* c = calibrations->find_gpu(d->name))
        eff = *c;
    }
    std::string why;
    std::optional<OpEstimate> e = estimate_op_row(row, registry, eff, &why);
    if (!e) {
      v.skipped.push_back(row.loc.file + ":" + std::to_string(row.loc.line) + ": " + why);
      continue;
    }
    ValidationPoint p;
    p.row = row;
    p.estimate_s = e->time.value;
    p.error = (p.estimate_s - row.time_s) / row.time_s;
    p.choice = e->kernels.front().tile;
    v.points.push_back(std::move(p));
  }
  return v;
}

std::vector<BandStats> op_stats(const std::vector<ValidationPoint>& points) {
  std::vector<BandStats> out;
  for (const ValidationPoint& p : points) {
    const std::string& name = p.group.empty() ? p.row.op : p.group;
    auto it =
        std::find_if(out.begin(), out.end(), [&](const BandStats& b) { return b.band == name; });
    if (it == out.end()) {
      out.push_back(BandStats{name, 0, 0, 0, 0, 0, 0});
      it = out.end() - 1;
    }
    ++it->rows;
    it->mape += std::fabs(p.error);
    it->bias += p.error;
    it->max_abs = std::max(it->max_abs, std::fabs(p.error));
  }
  for (BandStats& b : out) {
    b.mape = 100 * b.mape / static_cast<double>(b.rows);
    b.bias = 100 * b.bias / static_cast<double>(b.rows);
    b.max_abs *= 100;
  }
  return out;
}

}  // namespace yirage::costmodel
