// Collectives across devices (all-reduce, all-gather, reduce-scatter, broadcast, reduce,
// all-to-all, send/recv) with ring, tree, NVLS and hierarchical algorithms and NCCL's three
// protocols, priced in the manner of NCCL's own tuning model (src/graph/tuning.cc):
// time = latency + bytes / algorithm bandwidth, the fastest (algorithm, protocol) chosen.
#pragma once

#include "costmodel/comm_group.h"
#include "devices/support/units.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace yirage::costmodel {

enum class Collective {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
};

/// How a collective's calls are launched, which sets what each call costs beyond its data:
/// replayed from a CUDA graph (decode steps); launched from the host and queued on the
/// stream before the GPU reaches them (the device time of eager calls, once the host runs
/// ahead: NCCL's stream-launched kernels run 3-11 us a call faster than the same calls
/// replayed from a graph); launched back to back from the host (training and prefill steps,
/// nccl-tests); or one call at a time with the host waiting for each (a user's timing loop).
/// Calibrations are fitted per launch style; the order is the order they are fitted in.
enum class Launch { kGraph, kQueued, kEager, kSynced };

std::string launch_name(Launch l);  // "graph", "queued", "eager", "synced"
std::optional<Launch> parse_launch(std::string_view name);
const std::vector<std::string>& launch_names();

enum class Algorithm { kRing, kTree, kNvls, kHierarchical, kDirect };

std::string collective_name(Collective c);  // "all_reduce", ...
std::string algorithm_name(Algorithm a);    // "ring", ...
std::string protocol_name(Protocol p);      // "LL", "LL128", "Simple"
/// Every collective, for listings and help text.
const std::vector<Collective>& all_collectives();

/// One (algorithm, protocol) considered, with its time.
struct CollectiveCandidate {
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  devices::Seconds latency_term;    // fixed cost: base + per-step latencies
  devices::Seconds bandwidth_term;  // bytes / algorithm bandwidth
  devices::BytesPerSec bus_bw;      // nccl-tests' busbw of this candidate

  devices::Seconds time() const { return latency_term + bandwidth_term; }
};

struct CollectiveEstimate {
  Collective op = Collective::kAllReduce;
  double bytes = 0;  // the message size as nccl-tests counts it (the buffer per rank)
  std::int64_t ranks = 0;
  CollectiveCandidate best;                     // the fastest candidate
  std::vector<CollectiveCandidate> candidates;  // all, fastest first
  devices::BytesPerSec alg_bw;                  // bytes / time
  devices::BytesPerSec bus_bw;  // alg_bw x the collective's bus factor (nccl-tests PERFORMANCE.md)
  devices::Joules energy;       // every rank at its TDP for the duration (an upper bound)
  std::string bound_by;         // the link that limits the bandwidth term
  std::string note;             // caveats (non-NVIDIA fabric, ...)

  devices::Seconds latency() const { return best.time(); }
};

/// The factor nccl-tests multiplies algorithm bandwidth by to get bus bandwidth:
/// all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; others 1.
double bus_factor(Collective c, std::int64_t ranks);

/// Prices one collective of `bytes` per rank over `group`.
CollectiveEstimate estimate_collective(const CommGroup& group, Collective op, double bytes);

}  // namespace yirage::costmodel
