#include "costmodel/sim/chrome_trace.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace yirage::costmodel {
namespace {

using nlohmann::json;

constexpr double kUsPerS = 1e6;

json complete(const std::string& name,
              const std::string& cat,
              std::int64_t pid,
              std::int64_t tid,
              double start_s,
              double end_s) {
  return {{"name", name},
          {"cat", cat},
          {"ph", "X"},
          {"ts", start_s * kUsPerS},
          {"dur", (end_s - start_s) * kUsPerS},
          {"pid", pid},
          {"tid", tid}};
}

json meta(const std::string& what, std::int64_t pid, std::int64_t tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

json task_args(const SimTask& t) {
  json a = {{"kind", sim_task_kind_name(t.kind)}, {"ranks", t.ranks.size()}};
  if (t.kind == SimTaskKind::kCollective) {
    a["op"] = collective_name(t.op);
    a["algorithm"] = algorithm_name(t.algorithm);
  }
  if (t.kind != SimTaskKind::kCompute)
    a["bytes"] = t.bytes;
  return a;
}

// The gaps between a device's busy intervals over [0, makespan].
void add_idle(json& events, const SimDeviceTimeline& d, double makespan, std::int64_t tid) {
  double covered = 0;
  for (const SimInterval& iv : d.intervals) {
    if (iv.start.value > covered)
      events.push_back(complete("idle", "idle", d.node, tid, covered, iv.start.value));
    covered = std::max(covered, iv.end.value);
  }
  if (makespan > covered)
    events.push_back(complete("idle", "idle", d.node, tid, covered, makespan));
}

}  // namespace

void write_chrome_trace(const SimProgram& program, const SimResult& result, std::ostream& out) {
  std::set<std::string> names;
  for (const SimTask& t : program.tasks)
    names.insert(t.stream);
  std::map<std::string, std::int64_t> stream_index;
  for (const std::string& s : names)
    stream_index.emplace(s, static_cast<std::int64_t>(stream_index.size()));
  auto tracks = static_cast<std::int64_t>(stream_index.size()) + 1;  // + idle
  json events = json::array();
  std::set<std::int64_t> nodes;
  for (const SimDeviceTimeline& d : result.devices) {
    if (nodes.insert(d.node).second)
      events.push_back(meta("process_name", d.node, 0, "node " + std::to_string(d.node)));
    std::int64_t base = d.rank * tracks;
    for (const auto& [s, i] : stream_index)
      events.push_back(meta("thread_name", d.node, base + i, d.host + " " + s));
    events.push_back(meta("thread_name", d.node, base + tracks - 1, d.host + " idle"));
    for (const SimInterval& iv : d.intervals) {
      const SimTask& t = program.tasks[iv.task];
      json e = complete(t.name, sim_task_kind_name(t.kind), d.node,
                        base + stream_index.at(t.stream), iv.start.value, iv.end.value);
      e["args"] = task_args(t);
      events.push_back(std::move(e));
    }
    add_idle(events, d, result.makespan.value, base + tracks - 1);
  }
  json doc = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  doc["otherData"] = {{"makespan_s", result.makespan.value}, {"transfers", result.transfers}};
  out << doc.dump() << "\n";
}

}  // namespace yirage::costmodel
