#include "costmodel/comet/transfer.h"

#include "costmodel/comet/collective.h"
#include "devices/support/check.h"

#include <algorithm>
#include <cmath>

namespace yirage::costmodel::comet {
namespace {

// Bandwidth of the target's child side when only `used` of its `ports` serve this transfer:
// B_T <- B_T / ports x used (bytes/cycle, whole bytes as in the reference).
double port_share(double bw, std::int64_t ports, std::int64_t used) {
  if (used >= ports)
    return bw;
  return std::floor(bw / static_cast<double>(ports)) * static_cast<double>(used);
}

}  // namespace

// E1: t_mem = max(ceil(sigma u S b/8 / B_T) (+ rmw read), ceil(S b/8 / B_C)); E2: + t_net.
TransferTime transfer_time(const ArchSpec& arch,
                           const TensorEntry& e,
                           const EntryNest& n,
                           const Movement& mv,
                           const Options& opt) {
  const MemoryType& target = arch.memory_of(e.target);
  const NetworkSpec* net = arch.network(e.target, e.child);
  CHECK(net != nullptr) << "no network from the target to the child (checked at load)";
  const bool drain = n.read_write;
  // A drain writes its tile back even when the tile is reused (the accumulator, §8 #15).
  const std::int64_t data = drain && mv.unique == 0 ? 1 : mv.unique;
  const std::int64_t used = std::max<std::int64_t>(1, std::min(mv.unique, target.ports));
  const double port_bw = static_cast<double>(net->port_bw);
  double bt = port_share(drain ? target.child_write_bw : target.child_read_bw, target.ports, used);
  double bc = port_bw;
  if (!arch.levels[e.child].is_compute) {
    const MemoryType& child = arch.memory_of(e.child);
    bc = drain ? child.parent_read_bw : child.parent_write_bw;
  }
  bt = bt > 0 ? std::min(bt, static_cast<double>(used) * port_bw) : port_bw;
  bc = bc > 0 ? std::min(bc, port_bw) : port_bw;
  const bool support = drain ? net->reduction : net->broadcast;
  // sigma: without broadcast (or reduction) support each child's copy is sent on its own.
  const std::int64_t copies = data != 0 ? (mv.children + data - 1) / data : 1;  // ceil(n / u)
  const double sigma = support ? 1.0 : static_cast<double>(copies);
  const double bytes = static_cast<double>(n.tile * e.precision) / 8.0;
  double t_target = std::ceil(sigma * static_cast<double>(data) * bytes / bt);
  const double t_child = data == 0 ? 0.0 : std::ceil(bytes / bc);
  if (drain && e.rmw) {
    double br = port_share(target.child_read_bw, target.ports, used);
    t_target += std::ceil(sigma * static_cast<double>(data) * bytes / (br > 0 ? br : port_bw));
  }
  TransferTime out;
  out.memory = static_cast<std::int64_t>(std::max(t_target, t_child));
  NetTransfer t{.type = drain       ? CollectiveType::kGather
                        : data == 1 ? CollectiveType::kBroadcast
                                    : CollectiveType::kScatter,
                .tile = n.tile,
                .unique = mv.unique,
                .participants = mv.children,
                .bits = static_cast<double>(e.precision),
                .op = ReduceOp::kNone};
  out.network = network_latency(*net, t, reduction_simd_width(arch, opt));
  out.noc_energy = opt.noc_energy ? network_energy(*net, t) : 0;
  return out;
}

TensorTiming time_entry(const ArchSpec& arch,
                        const TensorEntry& e,
                        const EntryNest& n,
                        const WindowSpec& w,
                        const Options& opt,
                        double& noc_energy) {
  const std::int64_t iters = n.iterations();
  const std::int64_t r = n.reuse;
  const std::int64_t slots = w.uniform ? iters / r : iters;
  const std::int64_t start = n.read_write ? 1 : -1;
  const bool dma = arch.memory_of(e.target).dma_contiguous;
  TensorTiming t;
  t.target = e.target;
  t.child = e.child;
  t.port = n.read_write ? 1 : 0;
  t.hide = w.hide;
  t.reuse = r;
  t.transfer.assign(slots, 0);
  t.window.assign(n.actual, w.per_iteration * r);
  t.compute = w.node_iterations * w.per_iteration;
  for (std::int64_t idx = 0; idx < iters; ++idx) {
    TransferTime tt = transfer_time(arch, e, n, n.moves[idx], opt);
    // A dma_contiguous target pays the network latency on the first and last tile only.
    bool net = !dma || idx == 0 || idx == iters - 1;
    std::int64_t eff = tt.memory + (net ? tt.network : 0);
    noc_energy += tt.noc_energy;
    if (n.read_write && idx == iters - r) {
      t.ramp_down = eff;  // the last drain cannot overlap
      continue;
    }
    if (idx == 0 && !n.read_write) {
      t.ramp_up = eff;  // the first fill cannot overlap
      continue;
    }
    if (!w.uniform || idx % r == 0) {
      std::int64_t slot = (w.uniform ? idx / r : idx) + start;
      if (slot >= 0 && slot < slots) {
        t.transfer[slot] = eff;
        t.cumulative += eff;
      }
    }
  }
  return t;
}

}  // namespace yirage::costmodel::comet
