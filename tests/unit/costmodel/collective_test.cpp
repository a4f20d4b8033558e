#include "costmodel/collective.h"

#include "tests/unit/test_data.h"

#include "devices/cluster_loader.h"

#include <gtest/gtest.h>

namespace yirage::costmodel {
namespace {

CommGroup group(const std::string& name, std::int64_t ranks) {
  CommGroupResult r = make_comm_group(testing::example_cluster(name), ranks);
  EXPECT_TRUE(r.group) << r.reason;
  return *r.group;
}

TEST(CommGroup, PlacesRanksOnNodes) {
  CommGroup g = group("h100-4x8-rail", 16);
  EXPECT_EQ(g.nodes, 2);
  EXPECT_EQ(g.ranks_per_node, 8);
  // NCCL's SM90 NVLink bandwidth, 20.6 GB/s per 25 GB/s link: 450 GB/s -> 370.8 GB/s.
  EXPECT_NEAR(g.intra_bw.value, 370.8e9, 1e6);
  // NET_BW 12 GB/s per 100 Gb/s: 400 Gb/s -> 48 GB/s.
  EXPECT_NEAR(g.nic_bw.value, 48e9, 1e6);
  EXPECT_FALSE(g.nvls);  // off unless the fabric says nvls: true
  EXPECT_FALSE(make_comm_group(testing::example_cluster("dgx-h100"), 9).group);
}

TEST(Collective, LargeAllReduceApproachesTheBandwidthBound) {
  CommGroup g = group("dgx-h100", 8);
  g.nvls = false;
  CollectiveEstimate e = estimate_collective(g, Collective::kAllReduce, 1024.0 * 1024 * 1024);
  EXPECT_EQ(e.best.algorithm, Algorithm::kRing);
  EXPECT_EQ(e.best.protocol, Protocol::kSimple);
  // Ring Simple: busbw = the achievable NVLink bandwidth, less the latency share.
  EXPECT_GT(e.bus_bw.value, 0.98 * 370.8e9);
  EXPECT_LE(e.bus_bw.value, 370.8e9);
  EXPECT_NEAR(e.bus_bw.value / e.alg_bw.value, 2.0 * 7 / 8, 1e-12);
}

TEST(Collective, NvlsDoublesTheAllReduceBusBandwidthOfTheSwitch) {
  devices::ClusterSpec c = devices::parse_cluster(
      "c.yaml",
      "name: nvls\nnode_groups:\n  - {device: H100-SXM, nodes: 1, devices_per_node: 8,\n"
      "     fabric: {kind: nvswitch, latency: 1 us, nvls: true}}\n",
      testing::bundled_registry());
  CommGroup g = *make_comm_group(c, 8).group;
  ASSERT_TRUE(g.nvls);
  CollectiveEstimate e = estimate_collective(g, Collective::kAllReduce, 1024.0 * 1024 * 1024);
  EXPECT_EQ(e.best.algorithm, Algorithm::kNvls);
  // tuning.cc: busBw = bwIntra x nvlsEfficiency 0.85 x (16 - 1) / 16 x 2.
  EXPECT_NEAR(e.best.bus_bw.value, 370.8e9 * 0.85 * 15 / 16 * 2, 1e6);
}

TEST(Collective, SmallMessagesUseLowLatencyProtocols) {
  CommGroup g = group("dgx-h100", 8);
  CollectiveEstimate e = estimate_collective(g, Collective::kAllReduce, 4096);
  EXPECT_EQ(e.best.protocol, Protocol::kLL);
  // LL ring latency: 6.6 us + 14 steps x 0.6 us.
  EXPECT_NEAR(e.best.latency_term.value, (6.6 + 14 * 0.6) * 1e-6, 1e-12);
}

TEST(Collective, MoreBandwidthIsNeverSlower) {
  for (Collective op : all_collectives()) {
    CommGroup g = group("h100-4x8-rail", 32);
    CommGroup fast = g;
    fast.intra_bw = g.intra_bw * 2;
    fast.nic_bw = g.nic_bw * 2;
    for (double bytes : {1e3, 1e6, 1e9}) {
      EXPECT_LE(estimate_collective(fast, op, bytes).latency().value,
                estimate_collective(g, op, bytes).latency().value)
          << collective_name(op) << " " << bytes;
      EXPECT_GT(estimate_collective(g, op, bytes).latency().value, 0);
    }
  }
}

TEST(Collective, CrossingNodesCostsMoreThanStayingInside) {
  CommGroup inside = group("h100-4x8-rail", 8);
  CommGroup across = group("h100-4x8-rail", 16);
  double bytes = 256e6;
  EXPECT_GT(estimate_collective(across, Collective::kAllReduce, bytes).latency().value,
            estimate_collective(inside, Collective::kAllReduce, bytes).latency().value);
  CollectiveEstimate p2p = estimate_collective(across, Collective::kSendRecv, bytes);
  EXPECT_EQ(p2p.bound_by, "the network (NICs)");
}

TEST(Collective, OneRankIsFree) {
  CommGroup g = group("one-h100", 1);
  EXPECT_EQ(estimate_collective(g, Collective::kAllReduce, 1e9).latency().value, 0);
}

}  // namespace
}  // namespace yirage::costmodel
