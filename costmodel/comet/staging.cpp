#include "costmodel/comet/staging.h"

#include <algorithm>
#include <numeric>

namespace yirage::costmodel::comet {
namespace {

using Vec = std::vector<std::int64_t>;

struct Work {
  const TensorTiming* t;
  Vec window;  // per unique slot, after shared-port usage
};

// The window a tensor may hide behind: W x r per slot, less what the child memory's own
// sub-tree spends on the same port when its parent and child ports are shared (§2.4).
Vec usable_window(const TensorTiming& t, const PortUsage& usage, const std::vector<bool>& shared) {
  Vec w = t.window;
  auto it = usage.find(t.child);
  bool is_shared = t.child >= 0 && t.child < static_cast<int>(shared.size()) && shared[t.child];
  if (!is_shared || it == usage.end())
    return w;
  std::int64_t busy = it->second[t.port];
  for (std::int64_t& x : w)
    x = std::max<std::int64_t>(0, x - busy);
  return w;
}

// Compulsory stalls: a transfer that can never overlap costs all of it (E4, CS_i = t_i).
void add_compulsory(const Work& w, std::int64_t iterations, PortCost& pc) {
  const TensorTiming& t = *w.t;
  const std::int64_t r = t.reuse;
  const std::int64_t n =
      std::min<std::int64_t>(iterations, static_cast<std::int64_t>(w.window.size()));
  for (std::int64_t i = t.port; i < n; ++i)
    for (std::int64_t j = 0; j < r; ++j)
      if (i * r + j < iterations && i < static_cast<std::int64_t>(t.transfer.size()))
        pc.compulsory[i * r + j] += t.transfer[i];
}

// Reference order (#7): each tensor's transfers consume the window left to the tensors after
// it on the same (memory, port); the excess of each becomes a stall.
void ordered_stalls(std::vector<Work>& ws, std::size_t k, std::int64_t iterations, PortCost& pc) {
  const TensorTiming& t = *ws[k].t;
  const std::int64_t r = t.reuse;
  const std::int64_t n =
      std::min<std::int64_t>(iterations, static_cast<std::int64_t>(ws[k].window.size()));
  for (std::int64_t i = t.port; i < n; ++i) {
    std::int64_t moved = i < static_cast<std::int64_t>(t.transfer.size()) ? t.transfer[i] : 0;
    for (std::int64_t j = 0; j < r; ++j) {
      std::int64_t s = moved / r - ws[k].window[i] / r;
      if (s > 0 && i * r + j < iterations)
        pc.stall[i * r + j] += s;
    }
    if (!t.hide)
      continue;
    for (std::size_t o = 0; o < ws.size(); ++o) {
      if (o == k || ws[o].t->port != t.port)
        continue;
      for (std::int64_t j = 0; j < r; ++j) {
        std::size_t slot = static_cast<std::size_t>((i * r + j) / ws[o].t->reuse);
        if (slot < ws[o].window.size())
          ws[o].window[slot] = std::max<std::int64_t>(0, ws[o].window[slot] - moved / r);
      }
    }
  }
}

// Corrected (E3): OS_i = max(0, sum_j t_ij - W_i) over the hideable tensors of one port.
void summed_stalls(const std::vector<Work>& ws, int port, std::int64_t iterations, PortCost& pc) {
  Vec load(iterations, 0), window(iterations, -1);
  for (const Work& w : ws) {
    const TensorTiming& t = *w.t;
    if (t.port != port || !t.hide)
      continue;
    for (std::size_t i = 0; i < w.window.size(); ++i) {
      for (std::int64_t j = 0; j < t.reuse; ++j) {
        std::int64_t m = static_cast<std::int64_t>(i) * t.reuse + j;
        if (m >= iterations)
          continue;
        load[m] += i < t.transfer.size() ? t.transfer[i] / t.reuse : 0;
        std::int64_t win = w.window[i] / t.reuse;
        window[m] = window[m] < 0 ? win : std::min(window[m], win);
      }
    }
  }
  for (std::int64_t m = 0; m < iterations; ++m)
    if (window[m] >= 0)
      pc.stall[m] += std::max<std::int64_t>(0, load[m] - window[m]);
}

GroupCost group_cost(std::vector<Work>& ws, std::int64_t iterations, const Options& opt) {
  GroupCost g;
  g.target = ws.front().t->target;
  for (PortCost& pc : g.port) {
    pc.stall.assign(iterations, 0);
    pc.compulsory.assign(iterations, 0);
    pc.reuse = 0;
  }
  for (std::size_t k = 0; k < ws.size(); ++k) {
    const TensorTiming& t = *ws[k].t;
    PortCost& pc = g.port[t.port];
    pc.ramp_up += t.ramp_up;
    pc.ramp_down += t.ramp_down;
    pc.compute = std::max(pc.compute, t.compute);
    pc.reuse = pc.reuse == 0 ? t.reuse : std::min(pc.reuse, t.reuse);
    pc.cumulative += t.cumulative;
    if (!t.hide)
      add_compulsory(ws[k], iterations, pc);
    if (opt.ordered_port_windows)
      ordered_stalls(ws, k, iterations, pc);
  }
  for (int p = 0; p < 2; ++p) {
    // The reference starts the port's reuse at 1 and takes the min with each tensor's.
    g.port[p].reuse = opt.ordered_port_windows ? 1 : std::max<std::int64_t>(1, g.port[p].reuse);
    if (!opt.ordered_port_windows)
      summed_stalls(ws, p, iterations, g.port[p]);
  }
  return g;
}

// stall_i(node) = max over (memory, port) of OS_i + CS_i. The reference lets a memory's write
// port overwrite its read port from the second iteration on (#7).
Vec node_stalls(const std::vector<GroupCost>& groups, std::int64_t iterations, const Options& o) {
  Vec out(iterations, 0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (int p = 0; p < 2; ++p) {
      const PortCost& pc = groups[g].port[p];
      if (pc.compute == 0)
        continue;
      const std::int64_t f = pc.reuse;
      for (std::int64_t i = o.ordered_port_windows ? p : 0; i < iterations; ++i) {
        if (o.ordered_port_windows && i % f != 0)
          continue;
        std::int64_t k = o.ordered_port_windows ? i / f : i;
        std::int64_t v = pc.stall[k] + pc.compulsory[k];
        out[i] = (o.ordered_port_windows && g == 0) ? v : std::max(out[i], v);
      }
    }
  }
  return out;
}

}  // namespace

NodeCost stage(const std::vector<TensorTiming>& tensors,
               std::int64_t iterations,
               const PortUsage& usage,
               const std::vector<bool>& shared_port_levels,
               const Options& opt) {
  std::vector<const TensorTiming*> order;
  order.reserve(tensors.size());
  for (const TensorTiming& t : tensors)
    order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const TensorTiming* a, const TensorTiming* b) {
    return std::tie(a->target, a->child, a->port) < std::tie(b->target, b->child, b->port);
  });
  NodeCost nc;
  for (std::size_t i = 0; i < order.size();) {
    std::vector<Work> ws;
    std::size_t j = i;
    for (; j < order.size() && order[j]->target == order[i]->target; ++j)
      ws.push_back(Work{order[j], usable_window(*order[j], usage, shared_port_levels)});
    nc.groups.push_back(group_cost(ws, iterations, opt));
    i = j;
  }
  std::int64_t cs_read = 0, cs_write = 0;
  for (const GroupCost& g : nc.groups) {
    for (const PortCost& pc : g.port) {
      if (pc.compute != 0) {
        nc.ramp_up = std::max(nc.ramp_up, pc.ramp_up);
        nc.ramp_down = std::max(nc.ramp_down, pc.ramp_down);
        nc.compute = std::max(nc.compute, pc.compute);
      }
      nc.tmw = std::max(nc.tmw, pc.compute);
    }
    cs_read = std::max(cs_read, g.port[0].ramp_up + g.port[0].ramp_down);
    cs_write = std::max(cs_write, g.port[1].ramp_up + g.port[1].ramp_down);
  }
  Vec stalls = node_stalls(nc.groups, iterations, opt);
  nc.stalls = std::accumulate(stalls.begin(), stalls.end(), std::int64_t{0});
  nc.cs = cs_read + cs_write;
  nc.total = nc.compute + nc.ramp_up + nc.ramp_down + nc.stalls;  // E4
  return nc;
}

}  // namespace yirage::costmodel::comet
