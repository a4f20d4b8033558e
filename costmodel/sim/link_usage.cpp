#include "costmodel/sim/link_usage.h"

#include <algorithm>
#include <tuple>

namespace yirage::costmodel {
namespace {

constexpr double kSaturated = 0.99;  // of capacity

struct Event {
  double time = 0;
  double rate = 0;  // bytes/s, + when a flow starts using the link, - when it stops
  int flows = 0;

  bool operator<(const Event& o) const {
    return std::tie(time, flows, rate) < std::tie(o.time, o.flows, o.rate);
  }
};

// Sweeps the events of one link in time order; between two events the load is constant.
void sweep(std::vector<Event>& events, SimLinkUsage& u) {
  std::sort(events.begin(), events.end());
  double load = 0;
  int flows = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    load += events[i].rate;
    flows += events[i].flows;
    u.max_flows = std::max<std::int64_t>(u.max_flows, flows);
    if (i + 1 == events.size())
      break;
    double dt = events[i + 1].time - events[i].time;
    if (dt <= 0)
      continue;
    if (flows > 0)
      u.busy.value += dt;
    if (flows > 0 && load >= kSaturated * u.capacity.value) {
      u.saturated.value += dt;
      if (flows > 1)
        u.contended.value += dt;
    }
  }
}

}  // namespace

std::vector<SimLinkUsage> link_usage(const SimPlatform& platform,
                                     const std::vector<FlowTimes>& flows) {
  const std::vector<SimLinkInfo>& info = platform.links();
  std::vector<std::vector<Event>> events(info.size());
  std::vector<double> bytes(info.size(), 0);
  std::vector<bool> used(info.size(), false);
  for (const FlowTimes& f : flows) {
    SimRoute r = platform.route(f.src, f.dst);
    double begin = f.start;  // after the latency (replay.cpp)
    double rate = f.end > begin ? f.bytes / (f.end - begin) : 0;
    for (std::uint32_t id : r.links) {
      used[id] = true;
      bytes[id] += f.bytes;
      if (rate > 0) {
        events[id].push_back({begin, rate, 1});
        events[id].push_back({f.end, -rate, -1});
      }
    }
  }
  std::vector<SimLinkUsage> out;
  for (std::size_t id = 0; id < info.size(); ++id) {
    if (!used[id])
      continue;
    SimLinkUsage u;
    u.name = info[id].name;
    u.capacity = devices::BytesPerSec{info[id].capacity};
    u.bytes = devices::Bytes{bytes[id]};
    sweep(events[id], u);
    out.push_back(u);
  }
  std::sort(out.begin(), out.end(),
            [](const SimLinkUsage& a, const SimLinkUsage& b) { return a.name < b.name; });
  return out;
}

std::vector<SimLinkUsage> most_contended(const std::vector<SimLinkUsage>& links,
                                         std::size_t count) {
  std::vector<SimLinkUsage> out;
  for (const SimLinkUsage& u : links) {
    if (u.contended.value > 0)
      out.push_back(u);
  }
  std::sort(out.begin(), out.end(), [](const SimLinkUsage& a, const SimLinkUsage& b) {
    if (a.contended.value != b.contended.value)
      return a.contended.value > b.contended.value;
    return a.name < b.name;
  });
  if (out.size() > count)
    out.resize(count);
  return out;
}

}  // namespace yirage::costmodel
