// Contention the analytical model does not see (issue 6): simultaneous data-parallel and
// pipeline traffic, on an oversubscribed fat-tree and on a non-blocking rail-optimized
// network. The analytical estimate of a set of concurrent tasks is taken as the slowest of
// them priced alone (what the model assumes: each collective has the network to itself);
// the simulation must be slower and name the links that saturate.
#include "tests/unit/test_data.h"

#include "costmodel/collective.h"
#include "costmodel/comm_group.h"
#include "costmodel/sim/simulate.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace yirage::costmodel {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Data parallelism over the 4 nodes (one ring per rail, devices j, 8+j, 16+j, 24+j), with
// a pipeline send from every device of node 0 to the same device of node 1 at the same time.
SimProgram dp_with_pp(double dp_bytes, double pp_bytes) {
  SimProgram p;
  for (std::int64_t j = 0; j < 8; ++j)
    p.collective({j, 8 + j, 16 + j, 24 + j}, Collective::kAllReduce, dp_bytes,
                 "dp grads rail " + std::to_string(j), "dp");
  for (std::int64_t j = 0; j < 8; ++j)
    p.send(j, 8 + j, pp_bytes, "pp activations " + std::to_string(j));
  return p;
}

double analytical(const devices::ClusterSpec& c, double dp_bytes, double pp_bytes) {
  CommGroupResult dp = make_comm_group(c, 4, 1);
  CommGroupResult pp = make_comm_group(c, 2, 1);
  double a = estimate_collective(*dp.group, Collective::kAllReduce, dp_bytes).latency().value;
  double b = estimate_collective(*pp.group, Collective::kSendRecv, pp_bytes).latency().value;
  return std::max(a, b);
}

std::vector<std::int64_t> first_node() {
  return {0, 1, 2, 3, 4, 5, 6, 7};
}

bool names_link(const SimResult& r, const std::string& part) {
  return std::any_of(r.most_contended.begin(), r.most_contended.end(),
                     [&](const SimLinkUsage& u) { return u.name.find(part) != std::string::npos; });
}

TEST(SimContention, OversubscribedFatTreeIsSlowerAndNamesTheUplinks) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  c.network->topology = devices::Topology::kFatTree;
  c.network->oversubscription = 4;
  SimResult r = simulate(c, dp_with_pp(256 * kMiB, 256 * kMiB));
  double model = analytical(c, 256 * kMiB, 256 * kMiB);
  EXPECT_GT(r.makespan.value, 1.2 * model) << "sim " << r.makespan.value << " model " << model;
  ASSERT_FALSE(r.most_contended.empty());
  EXPECT_TRUE(names_link(r, "h100-n0-uplink_UP")) << r.most_contended.front().name;
  EXPECT_GE(r.most_contended.front().max_flows, 2);
  EXPECT_GT(r.most_contended.front().contended.value, 0.5 * model);
}

TEST(SimContention, DataAndPipelineTrafficShareNics) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  SimResult r = simulate(c, dp_with_pp(256 * kMiB, 256 * kMiB));
  double model = analytical(c, 256 * kMiB, 256 * kMiB);
  EXPECT_GT(r.makespan.value, 1.1 * model) << "sim " << r.makespan.value << " model " << model;
  EXPECT_TRUE(names_link(r, "-nic_")) << r.most_contended.front().name;
  // Alone, the data-parallel rings are within 2% of the model: the excess is the sharing.
  SimResult alone = simulate(c, dp_with_pp(256 * kMiB, 0));
  EXPECT_NEAR(alone.makespan.value / model, 1.0, 0.02);
}

// Over the work budget, rings are coarsened into super-steps (SimOptions::max_work).
// The links carry the same bytes and the contended step stays within 2% of the exact replay.
TEST(SimContention, CoarsenedRingsKeepTheLoadAndTheTime) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  c.network->topology = devices::Topology::kFatTree;
  c.network->oversubscription = 4;
  SimProgram p = dp_with_pp(256 * kMiB, 256 * kMiB);
  p.collective(first_node(), Collective::kAllGather, 512 * kMiB, "tp all-gather", "tp");
  SimResult exact = simulate(c, p);
  EXPECT_TRUE(exact.aggregation.empty()) << exact.aggregation;
  SimOptions o;
  o.max_work = 1;  // under any step's work: coarsened
  SimResult coarse = simulate(c, p, o);
  EXPECT_LT(coarse.transfers, exact.transfers);
  EXPECT_NE(coarse.aggregation.find("transfers in place of " + std::to_string(exact.transfers)),
            std::string::npos)
      << coarse.aggregation;
  EXPECT_NEAR(coarse.makespan.value / exact.makespan.value, 1.0, 0.02)
      << "coarse " << coarse.makespan.value << " s, exact " << exact.makespan.value << " s";
  ASSERT_EQ(coarse.links.size(), exact.links.size());
  for (std::size_t i = 0; i < exact.links.size(); ++i) {
    EXPECT_EQ(coarse.links[i].name, exact.links[i].name);
    EXPECT_NEAR(coarse.links[i].bytes.value, exact.links[i].bytes.value,
                1e-6 * exact.links[i].bytes.value + 8)
        << exact.links[i].name;
  }
}

TEST(SimContention, ConcurrentStreamsShareADevice) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  SimProgram p;
  p.compute(0, "a", devices::Seconds{1e-3});
  p.compute(0, "b", devices::Seconds{1e-3}, {}, "side");
  p.compute(0, "c", devices::Seconds{1e-3});  // after "a" on the same stream
  SimResult r = simulate(c, p);
  // "a" and "b" share the device (2 ms), then "c" runs alone (1 ms).
  EXPECT_NEAR(r.makespan.value, 3e-3, 1e-9);
  EXPECT_NEAR(r.devices[0].idle.value, 0, 1e-9);
  EXPECT_NEAR(r.devices[1].idle.value, 3e-3, 1e-9);
}

TEST(SimContention, SameInputSameResult) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  c.network->topology = devices::Topology::kFatTree;
  c.network->oversubscription = 2;
  SimProgram p = dp_with_pp(64 * kMiB, 32 * kMiB);
  SimResult a = simulate(c, p);
  SimResult b = simulate(c, p);
  EXPECT_TRUE(a.same_simulation(b));
  EXPECT_EQ(a.transfers, b.transfers);
}

}  // namespace
}  // namespace yirage::costmodel
