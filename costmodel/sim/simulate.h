// Replays one step (a SimProgram) on a SimGrid platform built from the cluster and returns
// the simulated makespan, a timeline per device and the load of every link.
//
// What is simulated (costmodel/sim/sim_platform.cpp, collective_flows.cpp, replay.cpp):
//  - each device is a host; compute tasks are executions on it (concurrent streams share it);
//  - each collective is its algorithm's sequence of point-to-point transfers (ring:
//    2(n-1) steps of bytes/n for all-reduce, n-1 for all-gather and reduce-scatter; tree:
//    reduce then broadcast over a binary tree in pipelined chunks; hierarchical: intra-node
//    reduce-scatter, inter-node all-reduce per rail, intra-node all-gather), each transfer a
//    SimGrid flow that shares the links of its route with every other flow at that moment;
//  - link bandwidths are the ones the analytical model uses (make_comm_group: NCCL's
//    achievable fraction of the nominal rate), and every transfer pays NCCL's per-step
//    latency of the hops it crosses (a route's link latencies add up to it), so that an
//    uncontended collective reproduces the analytical ring; contention is what differs.
#pragma once

#include "costmodel/sim/sim_program.h"
#include "devices/cluster_spec.h"
#include "devices/support/units.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace yirage::costmodel {

struct SimOptions {
  /// Chunks a tree, broadcast or reduce is pipelined in (NCCL pipelines them in slices).
  std::int64_t pipeline_chunks = 8;
  /// NCCL's base latency per collective (ring, Simple protocol; tuning.cc baseLatencies),
  /// paid by every rank before its first transfer. Set false to simulate bare transfers.
  bool launch_latency = true;
  /// Where replaying every transfer would cost more than this (transfers x transfers in
  /// flight, summed over the step's concurrent collectives; about 3e7 a second on one core),
  /// every ring runs as one super-step per hop (collective_flows' max_ring_steps = 1) and
  /// SimResult::aggregation says so. 0: always exact.
  double max_work = 3e8;
};

/// One interval of a device's timeline.
struct SimInterval {
  std::size_t task = 0;  // index into SimProgram::tasks
  devices::Seconds start;
  devices::Seconds end;

  bool operator==(const SimInterval&) const = default;
};

struct SimDeviceTimeline {
  std::int64_t rank = 0;
  std::int64_t node = 0;
  std::string host;                    // the SimGrid host name, e.g. "h100-n3-d5"
  std::vector<SimInterval> intervals;  // by start time, then task id
  devices::Seconds busy;               // the union of the intervals
  devices::Seconds idle;               // makespan - busy

  bool operator==(const SimDeviceTimeline&) const = default;
};

/// One direction of one link.
struct SimLinkUsage {
  std::string name;  // e.g. "h100-n3-d5-nic_UP", "h100-n3-uplink_DOWN"
  devices::BytesPerSec capacity;
  devices::Bytes bytes;        // moved over the step
  devices::Seconds busy;       // some flow crossed it
  devices::Seconds saturated;  // its flows, at their average rates, used >= 99% of capacity
  devices::Seconds contended;  // saturated while shared by two flows or more
  std::int64_t max_flows = 0;  // the most flows it carried at once

  bool operator==(const SimLinkUsage&) const = default;
};

struct SimResult {
  devices::Seconds makespan;
  std::vector<SimDeviceTimeline> devices;    // every device of the cluster, by rank
  std::vector<SimLinkUsage> links;           // every link a flow crossed, by name
  std::vector<SimLinkUsage> most_contended;  // up to 10, by contended time, then name
  std::size_t transfers = 0;                 // point-to-point flows simulated
  // How flows were aggregated (SimOptions::max_work); empty when every transfer of
  // every collective is simulated exactly.
  std::string aggregation;
  std::vector<std::string> notes;  // algorithms replayed as another, and similar caveats
  double wall_seconds = 0;         // wall time of the simulation itself
  double peak_memory_bytes = 0;    // peak resident memory of the simulating process

  /// Wall time and memory differ between runs; everything else must not.
  bool same_simulation(const SimResult& o) const;
};

/// Simulates `program` on `cluster`. SimGrid keeps one engine per process, so the
/// simulation runs in a child process (fork) and its result comes back through a pipe;
/// the calling process stays free of SimGrid state and may simulate again. CHECK-fails on a
/// rank outside the cluster or a cluster without a network that a transfer would need.
SimResult simulate(const devices::ClusterSpec& cluster,
                   const SimProgram& program,
                   const SimOptions& options = {});

}  // namespace yirage::costmodel
