#include "costmodel/sim/result_json.h"

#include "devices/support/check.h"

#include <nlohmann/json.hpp>

namespace yirage::costmodel {
namespace {

using nlohmann::json;

json link_json(const SimLinkUsage& u) {
  return {
      {"name", u.name},          {"capacity", u.capacity.value},   {"bytes", u.bytes.value},
      {"busy", u.busy.value},    {"saturated", u.saturated.value}, {"contended", u.contended.value},
      {"max_flows", u.max_flows}};
}

SimLinkUsage link_from(const json& j) {
  SimLinkUsage u;
  u.name = j.at("name").get<std::string>();
  u.capacity.value = j.at("capacity").get<double>();
  u.bytes.value = j.at("bytes").get<double>();
  u.busy.value = j.at("busy").get<double>();
  u.saturated.value = j.at("saturated").get<double>();
  u.contended.value = j.at("contended").get<double>();
  u.max_flows = j.at("max_flows").get<std::int64_t>();
  return u;
}

json device_json(const SimDeviceTimeline& d) {
  json iv = json::array();
  for (const SimInterval& i : d.intervals)
    iv.push_back({i.task, i.start.value, i.end.value});
  return {{"rank", d.rank},       {"node", d.node},       {"host", d.host},
          {"busy", d.busy.value}, {"idle", d.idle.value}, {"intervals", iv}};
}

SimDeviceTimeline device_from(const json& j) {
  SimDeviceTimeline d;
  d.rank = j.at("rank").get<std::int64_t>();
  d.node = j.at("node").get<std::int64_t>();
  d.host = j.at("host").get<std::string>();
  d.busy.value = j.at("busy").get<double>();
  d.idle.value = j.at("idle").get<double>();
  for (const json& i : j.at("intervals")) {
    d.intervals.push_back({i.at(0).get<std::size_t>(), devices::Seconds{i.at(1).get<double>()},
                           devices::Seconds{i.at(2).get<double>()}});
  }
  return d;
}

}  // namespace

std::string sim_result_to_json(const SimResult& r) {
  json j;
  j["makespan"] = r.makespan.value;
  j["transfers"] = r.transfers;
  j["aggregation"] = r.aggregation;
  j["notes"] = r.notes;
  j["wall_seconds"] = r.wall_seconds;
  j["peak_memory_bytes"] = r.peak_memory_bytes;
  j["devices"] = json::array();
  for (const SimDeviceTimeline& d : r.devices)
    j["devices"].push_back(device_json(d));
  j["links"] = json::array();
  for (const SimLinkUsage& u : r.links)
    j["links"].push_back(link_json(u));
  j["most_contended"] = json::array();
  for (const SimLinkUsage& u : r.most_contended)
    j["most_contended"].push_back(link_json(u));
  return j.dump();
}

SimResult sim_result_from_json(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  CHECK(!j.is_discarded() && j.is_object()) << "the simulation returned malformed JSON";
  SimResult r;
  r.makespan.value = j.at("makespan").get<double>();
  r.transfers = j.at("transfers").get<std::size_t>();
  r.aggregation = j.at("aggregation").get<std::string>();
  r.notes = j.at("notes").get<std::vector<std::string>>();
  r.wall_seconds = j.at("wall_seconds").get<double>();
  r.peak_memory_bytes = j.at("peak_memory_bytes").get<double>();
  for (const json& d : j.at("devices"))
    r.devices.push_back(device_from(d));
  for (const json& u : j.at("links"))
    r.links.push_back(link_from(u));
  for (const json& u : j.at("most_contended"))
    r.most_contended.push_back(link_from(u));
  return r;
}

}  // namespace yirage::costmodel
