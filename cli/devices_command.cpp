// `yirage-plan devices [--json]` and `yirage-plan devices show NAME`.
#include "report/structured_output.h"
#include "report/table.h"

#include "cli/context.h"
#include "cli/run.h"
#include "devices/device_fields.h"
#include "devices/support/text.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <nlohmann/json.hpp>

namespace yirage::cli {

// The report library prints what the CLI shows (report/).
using namespace report;

namespace {

using devices::DeviceSpec;
using devices::DType;

std::string peak_text(const DeviceSpec& d, DType t) {
  auto rate = d.peak_rate(t);
  return rate ? devices::format(*rate) : "-";
}

nlohmann::ordered_json device_json(const DeviceSpec& d) {
  nlohmann::ordered_json j;
  for (const devices::DeviceField& f : devices::describe(d)) {
    std::string path = f.path;
    for (char& c : path)
      c = c == '.' ? '/' : c;
    nlohmann::ordered_json::json_pointer ptr("/" + path);
    if (f.value) {
      j[ptr] = {{"value", *f.value}, {"unit", f.unit}, {"text", f.text}, {"source", f.source}};
    } else {
      j[ptr] = f.text;
    }
  }
  return j;
}

int list_devices(Context& cx) {
  devices::DeviceRegistry r = cx.load_registry();
  if (cx.structured()) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const DeviceSpec& d : r.devices())
      all.push_back(device_json(d));
    return write_document(cx, "devices", {{"devices", all}});
  }
  Table t({"name", "vendor", "kind", ">bf16", ">fp8", ">memory", ">bandwidth", ">TDP", ">price"});
  for (const DeviceSpec& d : r.devices()) {
    t.add_row({d.name, d.vendor, devices::kind_name(d.kind), peak_text(d, DType::kBf16),
               peak_text(d, DType::kFp8), devices::format(d.memory_capacity.value),
               devices::format(d.memory_bandwidth.value),
               d.tdp ? devices::format(d.tdp->value) : "-",
               d.price ? devices::format(d.price->value) : "-"});
  }
  t.print(cx.out);
  cx.out << r.devices().size() << " devices; `yirage-plan devices show NAME` for every field "
         << "and its source\n";
  return kExitOk;
}

int show_device(Context& cx, const std::string& name) {
  devices::DeviceRegistry r = cx.load_registry();
  const DeviceSpec* d = r.find(name);
  if (d == nullptr) {
    cx.err << "error: unknown device '" << name << "'" << devices::did_you_mean(name, r.all_names())
           << " (`yirage-plan devices` lists them)\n";
    return kExitBadInput;
  }
  if (cx.structured()) {
    return write_document(cx, "devices",
                          {{"devices", nlohmann::ordered_json::array({device_json(*d)})}});
  }
  cx.out << d->name << " (defined at " << d->loc.str() << ")\n";
  if (!d->aliases.empty())
    cx.out << "aliases: " << devices::join_choices(d->aliases) << "\n";
  Table t({"field", ">value", "source"});
  for (const devices::DeviceField& f : devices::describe(*d)) {
    t.add_row({f.path, f.text, f.source});
  }
  t.print(cx.out);
  return kExitOk;
}

}  // namespace

void add_devices_command(CLI::App& app, Context& cx) {
  CLI::App* devices = app.add_subcommand("devices", "List the device registry");
  devices->callback([&cx, devices] {
    if (!devices->got_subcommand("show"))
      cx.action = [&cx] {
        return list_devices(cx);
      };
  });
  CLI::App* show = devices->add_subcommand("show", "Every field of one device, with its source");
  auto name = std::make_shared<std::string>();
  show->add_option("NAME", *name, "Device name or alias")->required();
  show->callback([&cx, name] {
    cx.action = [&cx, name] {
      return show_device(cx, *name);
    };
  });
  devices->require_subcommand(0, 1);
}

}  // namespace yirage::cli
