#include "costmodel/collective.h"

#include "devices/support/check.h"

#include <algorithm>
#include <cmath>

namespace yirage::costmodel {

using devices::BytesPerSec;
using devices::Seconds;

std::string collective_name(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kReduce:
      return "reduce";
    case Collective::kAllToAll:
      return "all_to_all";
    case Collective::kSendRecv:
      return "send_recv";
  }
  return "?";
}

std::string launch_name(Launch l) {
  switch (l) {
    case Launch::kGraph:
      return "graph";
    case Launch::kQueued:
      return "queued";
    case Launch::kEager:
      return "eager";
    case Launch::kSynced:
      return "synced";
  }
  return "?";
}

std::optional<Launch> parse_launch(std::string_view name) {
  for (Launch l : {Launch::kGraph, Launch::kQueued, Launch::kEager, Launch::kSynced}) {
    if (launch_name(l) == name)
      return l;
  }
  return std::nullopt;
}

const std::vector<std::string>& launch_names() {
  static const std::vector<std::string> names = {"graph", "queued", "eager", "synced"};
  return names;
}

std::string algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kNvls:
      return "nvls";
    case Algorithm::kHierarchical:
      return "hierarchical";
    case Algorithm::kDirect:
      return "direct";
  }
  return "?";
}

std::string protocol_name(Protocol p) {
  switch (p) {
    case Protocol::kLL:
      return "LL";
    case Protocol::kLL128:
      return "LL128";
    case Protocol::kSimple:
      return "Simple";
  }
  return "?";
}

const std::vector<Collective>& all_collectives() {
  static const std::vector<Collective> kAll = {Collective::kAllReduce,     Collective::kAllGather,
                                               Collective::kReduceScatter, Collective::kBroadcast,
                                               Collective::kReduce,        Collective::kAllToAll,
                                               Collective::kSendRecv};
  return kAll;
}

double bus_factor(Collective c, std::int64_t ranks) {
  auto n = static_cast<double>(ranks);
  switch (c) {
    case Collective::kAllReduce:
      return 2 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return (n - 1) / n;
    default:
      return 1;
  }
}

namespace {

constexpr double kUs = 1e-6;
constexpr double kGBs = 1e9;

// NCCL's step count of a ring collective (tuning.cc ncclTopoTuneModel).
double ring_steps(Collective c, std::int64_t n) {
  if (c == Collective::kAllReduce)
    return 2.0 * static_cast<double>(n - 1);
  if (c == Collective::kAllGather || c == Collective::kReduceScatter) {
    return static_cast<double>(n - 1);
  }
  return static_cast<double>(n);
}

// The network bandwidth of one rank, GB/s. Traffic between the same rail of different
// nodes stays in the rail switches; other traffic crosses the core and its oversubscription.
double nic_gbs(const CommGroup& g, bool crosses_core) {
  double over = crosses_core || !g.rail_optimized ? g.oversubscription : 1.0;
  return g.nic_bw.value / kGBs / over;
}

// Bus bandwidth of a ring or tree over the group, GB/s: each node runs one ring per NIC, so
// a node moves ranks_per_node NICs' worth across the network while each rank moves its own
// share over the intra-node fabric.
double ring_bus_gbs(const CommGroup& g) {
  double intra = g.intra_bw.value / kGBs;
  if (g.nodes <= 1)
    return intra;
  return std::min(intra, static_cast<double>(g.ranks_per_node) * nic_gbs(g, false));
}

// Per-step latencies, microseconds (tuning.cc: intraLat, interLat).
double intra_step_us(const CommGroup& g, bool tree, Protocol p) {
  double lat =
      NcclConstants::hop_latency_us(g.intra_hop, tree, p) + g.intra_extra_latency.value / kUs;
  if (g.nodes > 1)
    lat = std::max(lat, p == Protocol::kSimple ? 3.0 : 1.0);  // net overhead
  return lat;
}

double inter_step_us(const CommGroup& g, bool tree, Protocol p) {
  bool use_tree = tree || g.ranks_per_node == 1;
  double net = g.net_latency.value / kUs;
  double lat = NcclConstants::hop_latency_us(Hop::kNet, use_tree, p) + net;
  return p == Protocol::kSimple ? lat + net : lat;  // Simple also pays the flush
}

CollectiveCandidate make(
    Algorithm a, Protocol p, double lat_us, double bytes, double alg_gbs, double bus_gbs) {
  CollectiveCandidate c;
  c.algorithm = a;
  c.protocol = p;
  c.latency_term = Seconds{lat_us * kUs};
  c.bandwidth_term = Seconds{bytes / (alg_gbs * kGBs)};
  c.bus_bw = BytesPerSec{bus_gbs * kGBs};
  return c;
}

double protocol_bus_gbs(const CommGroup& g, Protocol p, double bus) {
  if (p == Protocol::kLL)
    return std::min(NcclConstants::ll_max_bw_gbs(g.generation), bus * 0.5);
  if (p == Protocol::kLL128)
    return bus * 0.92;  // 120 of 128 bytes carry data
  return bus;
}

CollectiveCandidate ring(const CommGroup& g, Collective op, Protocol p, double bytes) {
  double steps = ring_steps(op, g.ranks);
  double bus = protocol_bus_gbs(g, p, ring_bus_gbs(g));
  double alg = bus * static_cast<double>(g.ranks) / steps;
  double lat = NcclConstants::base_latency_us(false, p);
  if (op == Collective::kBroadcast || op == Collective::kReduce) {
    lat += steps * intra_step_us(g, p == Protocol::kSimple, p);
  } else {
    double inter_steps = g.nodes == 1                   ? 0
                         : op == Collective::kAllReduce ? 2.0 * static_cast<double>(g.nodes - 1)
                                                        : static_cast<double>(g.nodes - 1);
    lat += (steps - inter_steps) * intra_step_us(g, false, p) +
           inter_steps * inter_step_us(g, false, p);
    // tuning.cc: the "plateau effect" of multi-node Simple rings.
    if (op == Collective::kAllReduce && p == Protocol::kSimple && g.nodes > 1 &&
        bytes / (16.0 * static_cast<double>(g.ranks)) >= 64) {
      lat *= g.generation == GpuGeneration::kVolta ? 1.9 : 1.4;
    }
  }
  return make(Algorithm::kRing, p, lat, bytes, alg, bus);
}

CollectiveCandidate tree(const CommGroup& g, Protocol p, double bytes) {
  double bus = ring_bus_gbs(g) * 0.92;
  if (p == Protocol::kLL)
    bus = std::min(bus / 3.8, NcclConstants::ll_max_bw_gbs(g.generation));
  if (p == Protocol::kLL128)
    bus *= 120.0 / 128.0;
  double alg = bus * 0.5 * NcclConstants::tree_correction(p, bytes);
  double lat =
      NcclConstants::base_latency_us(true, p) +
      2 * (static_cast<double>(g.ranks_per_node - 1) * intra_step_us(g, true, p) +
           std::floor(std::log2(static_cast<double>(g.nodes))) * inter_step_us(g, true, p));
  return make(Algorithm::kTree, p, lat, bytes, alg, alg * 2);
}

// NVLink SHARP: the switch reduces and multicasts (tuning.cc, NVLS). NCCL runs it with 16
// channels on Hopper, one of which is lost to the (nCh - 1) / nCh term.
CollectiveCandidate nvls(const CommGroup& g, Collective op, double bytes) {
  constexpr double kChannels = 16;
  double bus = g.intra_bw.value / kGBs * NcclConstants::nvls_efficiency(g.generation) *
               (kChannels - 1) / kChannels;
  auto rpn = static_cast<double>(g.ranks_per_node);
  bus *= op == Collective::kAllReduce ? 2.0 : (rpn - 1) / rpn;
  double alg = bus * static_cast<double>(g.ranks) / ring_steps(op, g.ranks);
  return make(Algorithm::kNvls, Protocol::kSimple, NcclConstants::nvls_latency_us(g.nodes > 1),
              bytes, alg, bus);
}

}  // namespace

namespace {

// A group of the ranks of one node (intra) or of one rank per node (inter, one rail).
CommGroup sub_group(const CommGroup& g, bool intra) {
  CommGroup s = g;
  if (intra) {
    s.ranks = g.ranks_per_node;
    s.nodes = 1;
  } else {
    s.ranks = g.nodes;
    s.ranks_per_node = 1;
    s.nvls = false;
  }
  return s;
}

std::vector<CollectiveCandidate> candidates(const CommGroup& g, Collective op, double bytes);

CollectiveCandidate best_of(const CommGroup& g, Collective op, double bytes) {
  return candidates(g, op, bytes).front();
}

// Reduce-scatter inside each node, all-reduce of the shards across nodes (one rail per
// rank), all-gather inside each node.
CollectiveCandidate hierarchical(const CommGroup& g, double bytes) {
  CommGroup intra = sub_group(g, true);
  CommGroup inter = sub_group(g, false);
  CollectiveCandidate rs = best_of(intra, Collective::kReduceScatter, bytes);
  CollectiveCandidate ar =
      best_of(inter, Collective::kAllReduce, bytes / static_cast<double>(g.ranks_per_node));
  CollectiveCandidate ag = best_of(intra, Collective::kAllGather, bytes);
  CollectiveCandidate h;
  h.algorithm = Algorithm::kHierarchical;
  h.protocol = Protocol::kSimple;
  h.latency_term = rs.latency_term + ar.latency_term + ag.latency_term;
  h.bandwidth_term = rs.bandwidth_term + ar.bandwidth_term + ag.bandwidth_term;
  h.bus_bw = BytesPerSec{bytes * bus_factor(Collective::kAllReduce, g.ranks) / h.time().value};
  return h;
}

// All-to-all and send/recv: every pair at once; the intra-node and network parts overlap.
CollectiveCandidate direct(const CommGroup& g, Collective op, double bytes) {
  auto n = static_cast<double>(g.ranks);
  auto rpn = static_cast<double>(g.ranks_per_node);
  double intra = g.intra_bw.value / kGBs;
  double net = nic_gbs(g, true);
  double t_us = 0;
  double lat = NcclConstants::base_latency_us(false, Protocol::kSimple);
  if (op == Collective::kSendRecv) {
    bool across = g.nodes > 1;
    t_us = bytes / ((across ? net : intra) * 1e3);
    lat += across ? inter_step_us(g, false, Protocol::kSimple)
                  : intra_step_us(g, false, Protocol::kSimple);
  } else {
    double t_intra = bytes * (rpn - 1) / n / (intra * 1e3);
    double t_inter = g.nodes > 1 ? bytes * (n - rpn) / n / (net * 1e3) : 0;
    t_us = std::max(t_intra, t_inter);
    lat += g.nodes > 1 ? inter_step_us(g, false, Protocol::kSimple)
                       : intra_step_us(g, false, Protocol::kSimple);
  }
  CollectiveCandidate c;
  c.algorithm = Algorithm::kDirect;
  c.protocol = Protocol::kSimple;
  c.latency_term = Seconds{lat * kUs};
  c.bandwidth_term = Seconds{t_us * kUs};
  c.bus_bw = BytesPerSec{t_us > 0 ? bytes * bus_factor(op, g.ranks) / (t_us * kUs) : 0};
  return c;
}

std::vector<CollectiveCandidate> candidates(const CommGroup& g, Collective op, double bytes) {
  std::vector<CollectiveCandidate> out;
  if (op == Collective::kAllToAll || op == Collective::kSendRecv) {
    out.push_back(direct(g, op, bytes));
  } else {
    for (Protocol p : kProtocols)
      out.push_back(ring(g, op, p, bytes));
    if (op == Collective::kAllReduce && g.nodes > 1) {
      for (Protocol p : kProtocols)
        out.push_back(tree(g, p, bytes));
      if (g.ranks_per_node > 1)
        out.push_back(hierarchical(g, bytes));
    }
    bool nvls_op = op == Collective::kAllReduce || op == Collective::kAllGather ||
                   op == Collective::kReduceScatter;
    if (g.nvls && g.nodes == 1 && nvls_op && g.ranks > 1)
      out.push_back(nvls(g, op, bytes));
  }
  // Fastest first; ties keep the order above (deterministic).
  std::stable_sort(out.begin(), out.end(),
                   [](const CollectiveCandidate& a, const CollectiveCandidate& b) {
                     return a.time() < b.time();
                   });
  return out;
}

std::string bound_by(const CommGroup& g, const CollectiveCandidate& best) {
  if (best.algorithm == Algorithm::kNvls)
    return "NVSwitch (NVLS)";
  std::string fabric = devices::fabric_name(g.fabric) + " inside a node";
  if (g.nodes <= 1)
    return fabric;
  double intra = g.intra_bw.value / kGBs;
  // Direct exchanges use one NIC per rank; rings and trees one per rank of a node.
  double net = best.algorithm == Algorithm::kDirect
                   ? nic_gbs(g, true)
                   : static_cast<double>(g.ranks_per_node) * nic_gbs(g, false);
  return net < intra ? "the network (NICs)" : fabric;
}

}  // namespace

CollectiveEstimate estimate_collective(const CommGroup& group, Collective op, double bytes) {
  CHECK(group.ranks >= 1) << "empty communicator";
  CollectiveEstimate e;
  e.op = op;
  e.bytes = bytes;
  e.ranks = group.ranks;
  if (group.ranks == 1) {
    // Nothing to exchange: NCCL returns after a local copy, priced here as free.
    e.best.algorithm = Algorithm::kDirect;
    e.candidates = {e.best};
    e.bound_by = "nothing (one rank)";
    return e;
  }
  auto index = static_cast<std::size_t>(op);
  double scale = group.op_bw_scale[index];
  if (scale != 1) {
    CommGroup scaled = group;
    scaled.intra_bw = group.intra_bw * scale;
    e.candidates = candidates(scaled, op, bytes);
  } else {
    e.candidates = candidates(group, op, bytes);
  }
  double extra = group.op_extra_latency_s[index];
  double fill = group.op_fill_ratio[index] *
                std::pow(std::min(bytes, group.op_fill_bytes[index]) / std::max(bytes, 1.0),
                         group.op_fill_power[index]);
  double issue = group.op_issue_s[index];
  double simple = group.op_simple_latency_s[index];
  for (CollectiveCandidate& c : e.candidates) {
    c.latency_term += std::isnan(extra) ? group.extra_latency : devices::Seconds{extra};
    c.latency_term = devices::Seconds{std::max(0.0, c.latency_term.value)};
    if (c.protocol == Protocol::kSimple)
      c.latency_term += devices::Seconds{simple};
    c.bandwidth_term = c.bandwidth_term * (1 + fill);  // calibrated pipeline fill
    if (c.time().value < issue)  // the host issues no faster: the shortfall is fixed cost
      c.latency_term += devices::Seconds{issue - c.time().value};
  }
  e.best = e.candidates.front();
  double t = e.best.time().value;
  e.alg_bw = BytesPerSec{t > 0 ? bytes / t : 0};
  e.bus_bw = e.alg_bw * bus_factor(op, group.ranks);
  e.energy = group.power * e.best.time();
  e.bound_by = bound_by(group, e.best);
  if (!group.generation_known) {
    e.note =
        "not an NVIDIA device: NCCL's Ampere-class latencies are used, and the fabric's "
        "nominal bandwidth";
  }
  return e;
}

}  // namespace yirage::costmodel
