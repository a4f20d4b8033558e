#include "devices/device_loader.h"

#include "devices/support/text.h"

namespace yirage::devices {
namespace {

/// Reads the numbers of one section, each with its source: the `{value:, source:}` form
/// names its own, else the section's `source:` key, else the place it was written.
class SectionReader {
 public:
  SectionReader(const YamlDoc& doc,
                const YAML::Node& node,
                std::string what,
                const std::map<std::string, std::string>& sources)
      : map_(doc, node, std::move(what)), sources_(&sources) {
    if (map_.valid() && map_.has("source")) {
      YAML::Node s = map_.get("source");
      if (std::optional<std::string> key = scalar_text(doc, s, "source")) {
        default_source_ = resolve(*key, s);
      }
    } else {
      map_.get("source");
    }
  }

  MapReader& map() { return map_; }

  template <Dim D>
  std::optional<Sourced<Quantity<D>>> quantity(std::string_view key,
                                               bool required,
                                               Sign sign = Sign::kPositive) {
    YAML::Node n = required ? map_.require(key) : map_.get(key);
    if (!n)
      return std::nullopt;
    std::string source;
    YAML::Node value = unwrap(n, key, &source);
    if (!value)
      return std::nullopt;
    std::optional<double> v = map_.read_quantity(value, key, D, sign);
    if (!v)
      return std::nullopt;
    return Sourced<Quantity<D>>{Quantity<D>{*v}, source};
  }

  std::optional<Sourced<std::int64_t>> count(std::string_view key, bool required) {
    YAML::Node n = required ? map_.require(key) : map_.get(key);
    if (!n)
      return std::nullopt;
    std::string source;
    YAML::Node value = unwrap(n, key, &source);
    if (!value)
      return std::nullopt;
    MapReader one(map_.doc(), wrap(key, value), map_.what());
    std::optional<std::int64_t> v = one.integer(key, true);
    if (!v)
      return std::nullopt;
    return Sourced<std::int64_t>{*v, source};
  }

  /// The source that applies to a field written at `n` with no source of its own.
  std::string default_source(const YAML::Node& n) const {
    if (!default_source_.empty())
      return default_source_;
    return map_.doc().loc(n).str();
  }

 private:
  // A one-key mapping, so that the integer reader can report against the original node.
  static YAML::Node wrap(std::string_view key, const YAML::Node& value) {
    YAML::Node m(YAML::NodeType::Map);
    m.force_insert(std::string(key), value);
    return m;
  }

  std::string resolve(const std::string& key, const YAML::Node& at) const {
    if (sources_->empty() || sources_->count(key) > 0)
      return key;
    std::vector<std::string> keys;
    for (const auto& [k, text] : *sources_)
      keys.push_back(k);
    map_.doc().error(at, "unknown source '" + key + "'; the file's sources are " +
                             join_choices(keys) + did_you_mean(key, keys));
    return key;
  }

  // The value node of a field written either plainly or as {value: ..., source: ...}.
  YAML::Node unwrap(const YAML::Node& n, std::string_view key, std::string* source) {
    if (!n.IsMap()) {
      *source = default_source(n);
      return n;
    }
    MapReader long_form(map_.doc(), n, "'" + std::string(key) + "'");
    YAML::Node value = long_form.require("value");
    std::optional<std::string> src = long_form.string("source");
    long_form.finish();
    *source = src ? resolve(*src, long_form.get("source")) : default_source(n);
    return value;
  }

  MapReader map_;
  const std::map<std::string, std::string>* sources_;
  std::string default_source_;
};

const std::vector<std::string> kDTypeNames = {"fp64", "fp32", "tf32", "bf16",
                                              "fp16", "fp8",  "int8"};

template <class Enum>
std::optional<Enum> enum_choice(MapReader& m,
                                std::string_view key,
                                const std::vector<std::string>& names) {
  std::optional<std::string> s = m.choice(key, names, true);
  if (!s)
    return std::nullopt;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == *s)
      return static_cast<Enum>(i);
  }
  return std::nullopt;
}

void read_peak(const YamlDoc& doc, MapReader& top, DeviceSpec& d) {
  YAML::Node n = top.require("peak");
  if (!n)
    return;
  std::size_t errors_before = doc.diag().items().size();
  SectionReader s(doc, n, "peak", d.sources);
  if (!s.map().valid())
    return;
  for (std::size_t i = 0; i < kDTypeNames.size(); ++i) {
    if (auto q = s.quantity<Dim::kFlopsPerSec>(kDTypeNames[i], false)) {
      d.peak[kAllDTypes[i]] = *q;
    }
  }
  s.map().finish();
  if (d.peak.empty() && doc.diag().items().size() == errors_before) {
    doc.error(n, "peak lists no data type; give at least one of " + join_choices(kDTypeNames));
  }
}

void read_memory(const YamlDoc& doc, MapReader& top, DeviceSpec& d) {
  YAML::Node n = top.require("memory");
  if (!n)
    return;
  SectionReader s(doc, n, "memory", d.sources);
  if (!s.map().valid())
    return;
  d.memory_kind = s.map().string("kind").value_or("");
  if (auto q = s.quantity<Dim::kBytes>("capacity", true))
    d.memory_capacity = *q;
  if (auto q = s.quantity<Dim::kBytesPerSec>("bandwidth", true))
    d.memory_bandwidth = *q;
  s.map().finish();
}

void read_matrix_unit(const YamlDoc& doc, SectionReader& s, OnChip& o) {
  YAML::Node n = s.map().get("matrix_unit");
  if (!n)
    return;
  MapReader m(doc, n, "matrix_unit");
  if (!m.valid())
    return;
  MatrixUnit u;
  u.kind = m.string("kind", true).value_or("");
  u.source = s.default_source(n);
  bool none = u.kind == "none";
  u.m = m.integer("m", !none).value_or(0);
  u.n = m.integer("n", !none).value_or(0);
  u.k = m.integer("k", !none).value_or(0);
  m.finish();
  o.matrix_unit = u;
}

void read_onchip(const YamlDoc& doc, MapReader& top, DeviceSpec& d) {
  YAML::Node n = top.get("onchip");
  if (!n)
    return;
  SectionReader s(doc, n, "onchip", d.sources);
  if (!s.map().valid())
    return;
  OnChip& o = d.onchip;
  o.compute_units = s.count("compute_units", false);
  o.compute_unit_name = s.map().string("compute_unit_name").value_or("compute unit");
  o.clock = s.quantity<Dim::kHertz>("clock", false);
  o.registers_per_unit = s.quantity<Dim::kBytes>("registers_per_unit", false);
  o.scratchpad_per_unit = s.quantity<Dim::kBytes>("scratchpad_per_unit", false);
  o.l2 = s.quantity<Dim::kBytes>("l2", false);
  o.l2_bandwidth = s.quantity<Dim::kBytesPerSec>("l2_bandwidth", false);
  o.warp_width = s.count("warp_width", false);
  o.threads_per_unit = s.count("threads_per_unit", false);
  read_matrix_unit(doc, s, o);
  s.map().finish();
}

std::optional<LinkSpec> read_link(const YamlDoc& doc,
                                  const YAML::Node& n,
                                  const std::string& what,
                                  const DeviceSpec& d) {
  SectionReader s(doc, n, what, d.sources);
  if (!s.map().valid())
    return std::nullopt;
  LinkSpec l;
  l.kind = s.map().string("kind", true).value_or("");
  if (auto q = s.quantity<Dim::kBytesPerSec>("bandwidth", true))
    l.bandwidth = *q;
  l.latency = s.quantity<Dim::kSeconds>("latency", false, Sign::kNonNegative);
  l.ports = s.count("ports", false);
  l.generation = s.count("generation", false);
  s.map().finish();
  return l;
}

void read_links(const YamlDoc& doc, MapReader& top, DeviceSpec& d) {
  if (YAML::Node n = top.get("links")) {
    if (!n.IsSequence()) {
      doc.error(n, "'links' must be a list of links (or [] for none)");
    } else {
      for (std::size_t i = 0; i < n.size(); ++i) {
        auto l = read_link(doc, n[i], "link " + std::to_string(i + 1), d);
        if (l)
          d.links.push_back(*l);
      }
    }
  }
  if (YAML::Node n = top.get("host_link"))
    d.host_link = read_link(doc, n, "host_link", d);
}

void read_power_and_price(const YamlDoc& doc, MapReader& top, DeviceSpec& d) {
  if (YAML::Node n = top.get("power")) {
    SectionReader s(doc, n, "power", d.sources);
    if (s.map().valid()) {
      d.tdp = s.quantity<Dim::kWatts>("tdp", false);
      d.idle_power = s.quantity<Dim::kWatts>("idle", false);
      s.map().finish();
    }
  }
  if (YAML::Node n = top.get("price")) {
    SectionReader s(doc, n, "price", d.sources);
    if (s.map().valid()) {
      d.price = s.quantity<Dim::kUsdPerHour>("per_hour", true);
      s.map().finish();
    }
  }
}

void read_sources(const YamlDoc& doc, MapReader& top, DeviceSpec& d) {
  YAML::Node n = top.get("sources");
  if (!n)
    return;
  MapReader m(doc, n, "sources");
  if (!m.valid())
    return;
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = it->first.Scalar();
    if (std::optional<std::string> text = m.string(key))
      d.sources[key] = *text;
  }
}

}  // namespace

std::optional<DeviceSpec> read_device(const YamlDoc& doc, const YAML::Node& node) {
  std::size_t errors_before = doc.diag().items().size();
  MapReader top(doc, node, "device");
  if (!top.valid())
    return std::nullopt;
  DeviceSpec d;
  d.loc = doc.loc(node);
  d.name = top.string("name", true).value_or("");
  d.vendor = top.string("vendor", true).value_or("");
  d.family = top.string("family").value_or("");
  d.kind = enum_choice<DeviceKind>(top, "kind", {"gpu", "accelerator", "cpu", "fpga"})
               .value_or(DeviceKind::kGpu);
  d.backend =
      enum_choice<Backend>(top, "backend", {"cuda", "hip", "cpu", "none"}).value_or(Backend::kNone);
  d.aliases = top.strings("aliases").value_or(std::vector<std::string>{});
  read_sources(doc, top, d);
  read_peak(doc, top, d);
  read_memory(doc, top, d);
  read_onchip(doc, top, d);
  read_links(doc, top, d);
  read_power_and_price(doc, top, d);
  top.finish();
  if (doc.diag().items().size() != errors_before)
    return std::nullopt;
  return d;
}

}  // namespace yirage::devices
