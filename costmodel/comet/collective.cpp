#include "costmodel/comet/collective.h"

#include "costmodel/comet/noc_power.h"
#include "devices/support/check.h"

#include <algorithm>
#include <cmath>

namespace yirage::costmodel::comet {
namespace {

// Reduction arithmetic per element: cycles (Synopsys DesignWare) and pJ (§2.7, §2.10).
constexpr double kReduceCycles = 1.0;  // ADD, MAX, MULT

double reduce_energy_pj(ReduceOp op) {
  switch (op) {
    case ReduceOp::kAdd:
      return 0.11f;
    case ReduceOp::kMax:
      return 0.0025f;
    case ReduceOp::kMult:
      return 0.64f;
    case ReduceOp::kNone:
      break;
  }
  return 0;
}

bool two_phase(CollectiveType t) {
  return t == CollectiveType::kAllReduce || t == CollectiveType::kAllGather;
}

bool reduces(const NetTransfer& t) {
  return t.op != ReduceOp::kNone &&
         (t.type == CollectiveType::kReduction || t.type == CollectiveType::kAllReduce);
}

std::int64_t instances(const ArchSpec& arch, const std::vector<int>& levels) {
  std::int64_t n = 1;
  for (int l : levels)
    n *= arch.levels[l].instances;
  return n;
}

}  // namespace

MeshShape mesh_shape(const NetworkSpec& net, std::int64_t p) {
  auto side = static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(p))));
  if (!net.has_mesh || (net.mesh_x >= side && net.mesh_y >= side))
    return {side, side};
  if (net.mesh_x >= side)
    return {(p + net.mesh_y - 1) / net.mesh_y, net.mesh_y};
  if (net.mesh_y >= side)
    return {net.mesh_x, (p + net.mesh_x - 1) / net.mesh_x};
  return {net.mesh_x, net.mesh_y};
}

std::int64_t mesh_hops(const MeshShape& m) {
  return (m.x - 1) + (m.y - 1);
}

// One phase: H t_hop + (Q b / W) t_q with Q = S Phi elements (E7), in cycles (fractional
// before the final truncation, as in the reference).
std::int64_t network_latency(const NetworkSpec& net, const NetTransfer& t, std::int64_t simd) {
  if (t.unique == 0 || t.participants <= 1)
    return 0;
  const std::int64_t h = mesh_hops(mesh_shape(net, t.participants));
  const double router = static_cast<double>(h * net.hop_latency);
  double q = static_cast<double>(t.tile * h);  // elements on the critical path
  const auto p = static_cast<double>(t.participants);
  double reduce = reduces(t) ? q * p * kReduceCycles / static_cast<double>(simd) : 0;
  if (t.type == CollectiveType::kScatter && t.unique == 1)
    q /= static_cast<double>(t.participants);
  double queue =
      q * t.bits / static_cast<double>(net.channel_width) * static_cast<double>(net.queuing_delay);
  double phases = two_phase(t.type) ? 2 : 1;
  return static_cast<std::int64_t>(phases * router + phases * queue + reduce);
}

// ORION/HISIM energy of the phases plus Q P e_op of reduction arithmetic, pJ (§2.10).
double network_energy(const NetworkSpec& net, const NetTransfer& t) {
  if (t.unique == 0 || t.participants <= 1)
    return 0;
  const MeshShape m = mesh_shape(net, t.participants);
  const std::int64_t h = mesh_hops(m);
  auto q = static_cast<std::uint32_t>(t.tile * h);
  const auto p = static_cast<double>(t.participants);
  double reduce = reduces(t) ? static_cast<double>(q) * p * reduce_energy_pj(t.op) : 0;
  if (t.type == CollectiveType::kScatter && t.unique == 1)
    q = static_cast<std::uint32_t>(static_cast<double>(q) / p);
  std::uint32_t hops = static_cast<std::uint32_t>(h);
  if (two_phase(t.type)) {
    hops *= 2;
    q *= 2;
  }
  RouterActivity a;
  a.channel_width = static_cast<double>(net.channel_width);
  a.hops = hops;
  a.enqueue_cycles = static_cast<double>(net.queuing_delay);
  a.bits = static_cast<double>(static_cast<std::uint32_t>(q * t.bits));
  a.mesh_edge = static_cast<std::uint32_t>(m.x);
  return router_energy(a) + reduce;
}

std::int64_t ring_step_hops(const MeshShape& m, std::int64_t participants) {
  if (participants <= 2)
    return 1;
  return participants % 2 == 0 && m.x >= 2 && m.y >= 2 ? 1 : 2;
}

std::int64_t reduction_simd_width(const ArchSpec& arch, const Options& opt) {
  std::int64_t w = 0;
  for (const ComputeType& c : arch.computes)
    if (c.cls == ComputeClass::kSimd)
      w = std::max(w, c.width);
  return opt.simd_width_16 || w == 0 ? 16 : w;
}

namespace {

struct RingExtras {
  std::int64_t simd_width = 16;  // W_simd, lanes
  bool noc_energy = true;
};

struct Endpoint {
  double s_in, s_out;        // bytes per instance
  double read_bw, write_bw;  // link bandwidths, bytes/cycle
  double p, p_dest, f;       // participants, destinations, spatial factor
  double er, ew;             // pJ per byte read / written
  bool bcast, red;
  double red_cost;
};

// Endpoint memory time (cycles) and energy (pJ) per collective type (§2.6 table, §2.10).
void endpoint(CollectiveType type, const Endpoint& e, CollectiveCost& c) {
  using std::ceil;
  switch (type) {
    case CollectiveType::kGather: {
      c.memory = static_cast<std::int64_t>(
          std::max(ceil(e.s_in / e.read_bw), ceil((e.p - 1) * e.s_out / (e.write_bw * e.p))));
      c.read_energy = e.s_in * e.er;
      c.write_energy = (e.p - 1) * e.s_in * e.ew;
      return;
    }
    case CollectiveType::kBroadcast: {
      double rd = e.bcast ? ceil(e.s_in / e.read_bw) : ceil(e.s_in / e.read_bw * e.p_dest);
      c.memory = static_cast<std::int64_t>(std::max(rd, ceil(e.s_in / e.write_bw)));
      c.read_energy = (e.bcast ? 1 : e.p_dest) * e.s_in * e.er;
      c.write_energy = (e.p_dest - 1) * e.s_in * e.ew;
      return;
    }
    case CollectiveType::kReduction: {
      double r = e.s_in / e.read_bw, w = e.s_in / e.write_bw;
      double t = e.red ? r + w : std::max(r * (e.p - 1), w * (e.p - 1));
      c.memory = static_cast<std::int64_t>(ceil(t + w * e.red_cost));
      double k = e.red ? 1 : e.p - 1;
      c.read_energy = e.p * e.s_in * e.er * k;
      c.write_energy = e.s_in * e.ew * k;
      return;
    }
    case CollectiveType::kAllGather: {
      double r = e.s_in * e.p / e.read_bw, w = e.s_in * e.p / e.write_bw;
      c.memory = static_cast<std::int64_t>(e.bcast ? ceil(w * e.f)
                                                   : std::max(ceil(w * e.f), ceil(r * e.f)));
      c.read_energy = e.s_in * e.p * e.er * (e.bcast ? 1 : e.f);
      c.write_energy = e.s_in * e.p * e.ew * e.f;
      return;
    }
    case CollectiveType::kAllReduce: {
      double r = e.s_in * e.p / e.read_bw, w = e.s_out * e.p / e.write_bw;
      double t = e.bcast && e.red ? r + w : e.bcast ? (r + w) * e.f : (2 * r + w) * e.f;
      c.memory = static_cast<std::int64_t>(ceil(t + w * e.red_cost));
      double kr = e.bcast && e.red ? 1 : e.bcast ? e.f : 2 * e.f;
      double kw = e.bcast && e.red ? 1 : e.f;
      c.read_energy = e.s_in * e.p * e.er * kr;
      c.write_energy = e.s_out * e.p * e.ew * kw;
      return;
    }
    case CollectiveType::kScatter: {
      double f = e.p_dest;
      c.memory = static_cast<std::int64_t>(ceil((f - 1) * e.s_in / (e.read_bw * f)) +
                                           ceil(e.s_out / (f * e.write_bw)));
      c.read_energy = (f - 1) * e.s_in / f * e.er;
      c.write_energy = e.s_out * e.ew;
      return;
    }
  }
}

bool ring_applies(const CollectiveInfo& c) {
  return c.algorithm == CollectiveAlgorithm::kRing &&
         (c.type == CollectiveType::kAllReduce || c.type == CollectiveType::kAllGather);
}

// Ring all-reduce (reduce-scatter then all-gather, 2(P-1) steps of one chunk of S/P elements)
// or all-gather (P-1 steps of S elements) on the mesh: every participant sends one chunk to
// its ring neighbour per step, all links at once (comet-model.md §6 ring, in the E7 and E8
// terms of the mesh model). Time in cycles, energy in pJ over all participants.
CollectiveCost ring_cost(const NetworkSpec& link,
                         const CollectiveInfo& c,
                         const Endpoint& e,
                         std::int64_t in_tile,
                         const RingExtras& x) {
  const bool all_reduce = c.type == CollectiveType::kAllReduce;
  const std::int64_t p = static_cast<std::int64_t>(e.p);
  const MeshShape m = mesh_shape(link, p);
  const std::int64_t h = ring_step_hops(m, p);                                 // hops per step
  const std::int64_t chunk = all_reduce ? (in_tile + p - 1) / p : in_tile;     // c, elements
  const double steps = static_cast<double>(all_reduce ? 2 * (p - 1) : p - 1);  // n
  const double bits = static_cast<double>(c.precision);
  const double s_c = static_cast<double>(chunk) * bits / 8.0;  // bytes per step
  const double reduce_steps = all_reduce ? static_cast<double>(p - 1) : 0;
  CollectiveCost cost;
  // T_net = n (h_r t_hop + (c b / W) t_q) + (P-1) c c_op / W_simd, cycles (E7, ring).
  const double step = static_cast<double>(h * link.hop_latency) +
                      static_cast<double>(chunk) * bits / static_cast<double>(link.channel_width) *
                          static_cast<double>(link.queuing_delay);
  const double reduce =
      reduce_steps * static_cast<double>(chunk) * kReduceCycles / static_cast<double>(x.simd_width);
  cost.network = static_cast<std::int64_t>(steps * step + reduce);
  // T_mem = ceil(n (s_c / B_r + s_c / B_w) + (P-1) c_red s_c / B_w), cycles (E8, ring).
  cost.memory = static_cast<std::int64_t>(std::ceil(steps * (s_c / e.read_bw + s_c / e.write_bw) +
                                                    reduce_steps * e.red_cost * s_c / e.write_bw));
  // Every participant reads and writes one chunk per step, pJ; reduction arithmetic
  // P (P-1) c e_op, pJ; the NoC active along n h_r hops and n c b bits.
  cost.read_energy = e.p * steps * s_c * e.er;
  cost.write_energy = e.p * steps * s_c * e.ew;
  if (!x.noc_energy)
    return cost;
  RouterActivity a;
  a.channel_width = static_cast<double>(link.channel_width);
  a.hops = static_cast<std::uint32_t>(steps) * static_cast<std::uint32_t>(h);
  a.enqueue_cycles = static_cast<double>(link.queuing_delay);
  a.bits = steps * static_cast<double>(chunk) * bits;
  a.mesh_edge = static_cast<std::uint32_t>(m.x);
  cost.noc_energy =
      router_energy(a) + e.p * reduce_steps * static_cast<double>(chunk) * reduce_energy_pj(c.op);
  return cost;
}

}  // namespace

CollectiveCost collective_cost(const ArchSpec& arch,
                               const CollectiveInfo& c,
                               std::int64_t in_tile,
                               std::int64_t out_tile,
                               const Options& opt) {
  const Level& level = arch.levels[c.level];
  CHECK(level.link_network.has_value()) << "collective on a level without a link network";
  const NetworkSpec& link = *level.link_network;
  const MemoryType& mem = arch.memory_of(c.level);
  const double bytes = static_cast<double>(c.precision) / 8.0;
  Endpoint e{};
  e.s_in = static_cast<double>(in_tile) * bytes;
  e.s_out = static_cast<double>(out_tile) * bytes;
  e.p = static_cast<double>(instances(arch, c.src));
  e.p_dest = static_cast<double>(instances(arch, c.dest));
  e.f = c.spatial_factor > 0 ? static_cast<double>(c.spatial_factor) : e.p;
  e.bcast = link.broadcast;
  e.red = link.reduction;
  e.red_cost = mem.reduction_cost;
  const double port = static_cast<double>(link.port_bw);
  const bool gather = c.type == CollectiveType::kGather;
  const bool scatter = c.type == CollectiveType::kScatter;
  const double ports_w = gather ? std::min<double>(2, e.p - 1) : 1;
  const double ports_r = scatter ? std::min<double>(2, e.p_dest - 1) : 1;
  e.read_bw = std::min(mem.link_read_bw, ports_r * port);
  e.write_bw = std::min(mem.link_write_bw, ports_w * port);
  if (gather)
    e.write_bw = std::min(e.write_bw, mem.child_write_bw);
  e.er = mem.child_read_energy / static_cast<double>(mem.width);
  e.ew = mem.child_write_energy / static_cast<double>(mem.width);
  if (ring_applies(c))
    return ring_cost(link, c, e, in_tile,
                     RingExtras{reduction_simd_width(arch, opt), opt.noc_energy});
  CollectiveCost cost;
  endpoint(c.type, e, cost);
  NetTransfer t{.type = c.type,
                .tile = in_tile,
                .unique = 1,
                .participants = instances(arch, c.src),
                .bits = static_cast<double>(c.precision),
                .op = c.op};
  cost.network = network_latency(link, t, reduction_simd_width(arch, opt));
  cost.noc_energy = opt.noc_energy ? network_energy(link, t) : 0;
  return cost;
}

}  // namespace yirage::costmodel::comet
