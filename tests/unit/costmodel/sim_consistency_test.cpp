// The simulation against the analytical collective model (issue 6, consistency): a single
// collective on an uncontended topology simulates within 2% of estimate_collective.
//
// Which model: the uncalibrated one (make_comm_group on the same ClusterSpec, no
// calibration), and its ring candidate with NCCL's Simple protocol, because that is what
// the simulation replays: the platform's links carry the bandwidths make_comm_group uses
// (NCCL's achievable fractions of the nominal rates) and each transfer pays NCCL's per-step
// latency (sim_platform.h). Inside one node the two agree from 16 MiB up. Across nodes they
// differ by a latency term of 0.1-0.4 ms: the model adds NCCL's per-step latency for every
// step (times 1.4 for multi-node Simple all-reduce, its "plateau"), while in the simulation
// the latency of the hops that do not bound the ring overlaps with the transfers of the one
// that does; the cross-node sizes below (2-8 GiB) keep that under 2%.
#include "tests/unit/test_data.h"

#include "costmodel/collective.h"
#include "costmodel/comm_group.h"
#include "costmodel/sim/simulate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

namespace yirage::costmodel {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

double ring_simple(const devices::ClusterSpec& c,
                   std::int64_t ranks,
                   Collective op,
                   double b,
                   std::optional<std::int64_t> per_node = std::nullopt) {
  CommGroupResult g = make_comm_group(c, ranks, per_node);
  EXPECT_TRUE(g.group.has_value()) << g.reason;
  CollectiveEstimate e = estimate_collective(*g.group, op, b);
  for (const CollectiveCandidate& k : e.candidates) {
    if (k.algorithm == Algorithm::kRing && k.protocol == Protocol::kSimple)
      return k.time().value;
  }
  ADD_FAILURE() << "no ring/Simple candidate";
  return 0;
}

double simulated(const devices::ClusterSpec& c,
                 std::vector<std::int64_t> ranks,
                 Collective op,
                 double b) {
  SimProgram p;
  p.collective(std::move(ranks), op, b, collective_name(op), "comm");
  return simulate(c, p).makespan.value;
}

std::vector<std::int64_t> first_ranks(std::int64_t n) {
  std::vector<std::int64_t> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

struct Case {
  Collective op;
  double bytes;
};

TEST(SimConsistency, OneNvswitchNodeWithin2Percent) {
  devices::ClusterSpec c = testing::example_cluster("dgx-h100");
  for (Case k :
       {Case{Collective::kAllReduce, 16 * kMiB}, Case{Collective::kAllReduce, 256 * kMiB},
        Case{Collective::kAllReduce, 1024 * kMiB}, Case{Collective::kAllGather, 16 * kMiB},
        Case{Collective::kAllGather, 1024 * kMiB}, Case{Collective::kReduceScatter, 64 * kMiB},
        Case{Collective::kReduceScatter, 1024 * kMiB}}) {
    double model = ring_simple(c, 8, k.op, k.bytes);
    double sim = simulated(c, first_ranks(8), k.op, k.bytes);
    EXPECT_NEAR(sim / model, 1.0, 0.02)
        << collective_name(k.op) << " " << k.bytes << " B: sim " << sim << " s, model " << model;
  }
}

// Four nodes of eight H100 with 200 Gb/s NICs, so that the network bounds the ring as the
// model assumes (bus bandwidth = ranks per node x NIC). With 400 Gb/s NICs the two differ by
// 3.5%: the model takes the smaller of NVLink (370.8 GB/s) and 8 NICs (384 GB/s), while in
// the simulation the rank that leaves a node sends over its NIC, not NVLink, so NVLink
// carries 7 of the 8 channels and the NICs bound the ring.
devices::ClusterSpec four_nodes_200g() {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  c.network->nic_bandwidth = devices::BytesPerSec{25e9};
  return c;
}

TEST(SimConsistency, AcrossNodesNonBlockingWithin2Percent) {
  devices::ClusterSpec c = four_nodes_200g();
  for (Case k :
       {Case{Collective::kAllReduce, 4096 * kMiB}, Case{Collective::kAllReduce, 8192 * kMiB},
        Case{Collective::kAllGather, 2048 * kMiB}, Case{Collective::kAllGather, 4096 * kMiB},
        Case{Collective::kReduceScatter, 2048 * kMiB}}) {
    double model = ring_simple(c, 32, k.op, k.bytes);
    double sim = simulated(c, first_ranks(32), k.op, k.bytes);
    EXPECT_NEAR(sim / model, 1.0, 0.02)
        << collective_name(k.op) << " " << k.bytes << " B: sim " << sim << " s, model " << model;
  }
}

TEST(SimConsistency, OneRankPerNodeOverTheNetworkWithin2Percent) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  std::vector<std::int64_t> rail0 = {0, 8, 16, 24};  // device 0 of each node: one rail
  for (Case k :
       {Case{Collective::kAllReduce, 256 * kMiB}, Case{Collective::kAllReduce, 1024 * kMiB},
        Case{Collective::kAllGather, 256 * kMiB}, Case{Collective::kReduceScatter, 256 * kMiB}}) {
    double model = ring_simple(c, 4, k.op, k.bytes, 1);
    double sim = simulated(c, rail0, k.op, k.bytes);
    EXPECT_NEAR(sim / model, 1.0, 0.02)
        << collective_name(k.op) << " " << k.bytes << " B: sim " << sim << " s, model " << model;
  }
}

}  // namespace
}  // namespace yirage::costmodel
