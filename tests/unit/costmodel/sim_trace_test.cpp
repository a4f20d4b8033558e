// The Chrome trace of a simulated step is valid JSON with events for every device; and the
// shape of the collectives' transfers (counts, channels).
#include "tests/unit/test_data.h"

#include "costmodel/sim/chrome_trace.h"
#include "costmodel/sim/collective_flows.h"
#include "costmodel/sim/simulate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace yirage::costmodel {
namespace {

TEST(SimTrace, ValidJsonWithEveryDevice) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  SimProgram p;
  std::vector<std::int64_t> all;
  for (std::int64_t r = 0; r < 32; ++r) {
    p.compute(r, "fwd", devices::Seconds{1e-3 * static_cast<double>(1 + r % 3)});
    all.push_back(r);
  }
  p.collective(all, Collective::kAllReduce, 64e6, "grads", "dp");
  p.send(3, 11, 8e6, "act");
  SimResult r = simulate(c, p);
  std::ostringstream out;
  write_chrome_trace(p, r, out);
  nlohmann::json j = nlohmann::json::parse(out.str());  // throws on invalid JSON
  ASSERT_TRUE(j.at("traceEvents").is_array());
  std::set<std::string> threads;
  std::set<std::pair<std::int64_t, std::int64_t>> busy_tracks;
  std::size_t idle = 0;
  for (const auto& e : j["traceEvents"]) {
    std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "thread_name")
      threads.insert(e["args"]["name"].get<std::string>());
    if (ph == "X") {
      EXPECT_GE(e.at("dur").get<double>(), 0);
      if (e.at("cat") == "idle") {
        ++idle;
      } else {
        busy_tracks.insert({e.at("pid").get<std::int64_t>(), e.at("tid").get<std::int64_t>()});
      }
    }
  }
  for (const SimDeviceTimeline& d : r.devices) {
    EXPECT_TRUE(threads.count(d.host + " compute")) << d.host;
    EXPECT_TRUE(threads.count(d.host + " dp")) << d.host;
  }
  // 32 compute tracks, 32 dp tracks and the two ends of the send.
  EXPECT_EQ(busy_tracks.size(), 32u + 32u + 2u);
  EXPECT_GT(idle, 0u);
}

TEST(SimFlows, RingCountsAndChannels) {
  std::vector<SimRankPlace> places;
  for (std::int64_t n = 0; n < 4; ++n) {
    for (std::int64_t d = 0; d < 8; ++d)
      places.push_back({0, n, d});
  }
  SimTask t;
  t.kind = SimTaskKind::kCollective;
  t.op = Collective::kAllReduce;
  t.bytes = 1 << 20;
  t.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  CollectiveFlows one = collective_flows(t, places, 8);
  EXPECT_EQ(one.channels, 1);
  EXPECT_EQ(one.flows.size(), 2u * 7u * 8u);
  t.ranks.clear();
  for (std::int64_t r = 0; r < 32; ++r)
    t.ranks.push_back(r);
  CollectiveFlows rails = collective_flows(t, places, 8);
  EXPECT_EQ(rails.channels, 8);
  EXPECT_EQ(rails.flows.size(), 8u * 2u * 31u * 32u);
  // Every inter-node hop but the ring's wrap-around stays on one rail.
  std::size_t off_rail = 0;
  for (const SimFlow& f : rails.flows) {
    const SimRankPlace& a = places[static_cast<std::size_t>(f.src)];
    const SimRankPlace& b = places[static_cast<std::size_t>(f.dst)];
    if (a.node != b.node && a.local != b.local)
      ++off_rail;
  }
  EXPECT_EQ(off_rail, 8u * 2u * 31u);  // one wrap hop per channel and step
  t.algorithm = Algorithm::kHierarchical;
  CollectiveFlows h = collective_flows(t, places, 8);
  // Intra reduce-scatter and all-gather (7 steps x 8 ranks x 4 nodes each) and 8 rails of a
  // 4-node all-reduce (6 steps x 4).
  EXPECT_EQ(h.flows.size(), 2u * 7u * 8u * 4u + 8u * 6u * 4u);
}

}  // namespace
}  // namespace yirage::costmodel
