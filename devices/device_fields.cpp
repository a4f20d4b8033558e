#include "devices/device_fields.h"

namespace yirage::devices {
namespace {

class FieldList {
 public:
  explicit FieldList(const DeviceSpec& d) : d_(d) {}

  void text(std::string path, std::string value) {
    if (!value.empty())
      out_.push_back({std::move(path), std::move(value), std::nullopt, "", ""});
  }

  template <Dim D>
  void add(std::string path, const Sourced<Quantity<D>>& q) {
    out_.push_back({std::move(path), format(q.value), q.value.value, std::string(dim_unit(D)),
                    d_.source_text(q.source)});
  }

  template <Dim D>
  void add(std::string path, const std::optional<Sourced<Quantity<D>>>& q) {
    if (q)
      add(std::move(path), *q);
  }

  void count(std::string path, const Sourced<std::int64_t>& c) {
    out_.push_back({std::move(path), std::to_string(c.value), static_cast<double>(c.value), "",
                    d_.source_text(c.source)});
  }

  void count(std::string path, const std::optional<Sourced<std::int64_t>>& c) {
    if (c)
      count(std::move(path), *c);
  }

  void link(const std::string& prefix, const LinkSpec& l) {
    text(prefix + ".kind", l.kind);
    add(prefix + ".bandwidth", l.bandwidth);
    add(prefix + ".latency", l.latency);
    count(prefix + ".ports", l.ports);
    count(prefix + ".generation", l.generation);
  }

  std::vector<DeviceField> take() { return std::move(out_); }

 private:
  const DeviceSpec& d_;
  std::vector<DeviceField> out_;
};

void describe_onchip(const DeviceSpec& d, FieldList& f) {
  const OnChip& o = d.onchip;
  f.count("onchip.compute_units", o.compute_units);
  f.text("onchip.compute_unit_name", o.compute_unit_name);
  f.add("onchip.clock", o.clock);
  f.add("onchip.registers_per_unit", o.registers_per_unit);
  f.add("onchip.scratchpad_per_unit", o.scratchpad_per_unit);
  f.add("onchip.l2", o.l2);
  f.add("onchip.l2_bandwidth", o.l2_bandwidth);
  f.count("onchip.warp_width", o.warp_width);
  f.count("onchip.threads_per_unit", o.threads_per_unit);
  if (!o.matrix_unit)
    return;
  const MatrixUnit& m = *o.matrix_unit;
  f.text("onchip.matrix_unit.kind", m.kind);
  if (m.kind != "none") {
    f.count("onchip.matrix_unit.m", {m.m, m.source});
    f.count("onchip.matrix_unit.n", {m.n, m.source});
    f.count("onchip.matrix_unit.k", {m.k, m.source});
  }
}

}  // namespace

std::vector<DeviceField> describe(const DeviceSpec& d) {
  FieldList f(d);
  f.text("name", d.name);
  f.text("vendor", d.vendor);
  f.text("family", d.family);
  f.text("kind", kind_name(d.kind));
  f.text("backend", backend_name(d.backend));
  for (const auto& [type, rate] : d.peak)
    f.add("peak." + dtype_name(type), rate);
  f.text("memory.kind", d.memory_kind);
  f.add("memory.capacity", d.memory_capacity);
  f.add("memory.bandwidth", d.memory_bandwidth);
  describe_onchip(d, f);
  for (std::size_t i = 0; i < d.links.size(); ++i) {
    f.link("links." + std::to_string(i), d.links[i]);
  }
  if (d.host_link)
    f.link("host_link", *d.host_link);
  f.add("power.tdp", d.tdp);
  f.add("power.idle", d.idle_power);
  f.add("price.per_hour", d.price);
  return f.take();
}

}  // namespace yirage::devices
