#include "costmodel/sim/collective_flows.h"

#include "devices/support/check.h"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace yirage::costmodel {
namespace {

using Ids = std::vector<std::uint32_t>;
using Order = std::vector<std::size_t>;  // positions in the task's group

void append(Ids& to, const Ids& from) {
  to.insert(to.end(), from.begin(), from.end());
}

/// Adds flows between positions of the group; `ready[p]` gates the first flow touching p
/// and `done[p]` collects the last ones.
class Builder {
 public:
  Builder(CollectiveFlows& out, const std::vector<std::int64_t>& ranks, std::int64_t max_steps)
      : out_(out), ranks_(ranks), ready_(ranks.size()), max_steps_(max_steps) {
    out_.done.assign(ranks.size(), {});
  }

  std::uint32_t add(
      std::size_t from, std::size_t to, double bytes, Ids deps, std::int64_t steps = 1) {
    out_.flows.push_back({ranks_[from], ranks_[to], bytes, std::move(deps), steps});
    return static_cast<std::uint32_t>(out_.flows.size() - 1);
  }

  /// The most steps a ring is replayed in; 0: every step.
  std::int64_t max_ring_steps() const { return max_steps_; }

  /// The gate of a phase's first flow between `a` and `b`.
  Ids ready(std::size_t a, std::size_t b) const {
    Ids d = ready_[a];
    append(d, ready_[b]);
    return d;
  }

  /// Starts a new phase: what each position finished so far gates the next phase.
  void next_phase() {
    ready_ = out_.done;
    for (Ids& d : out_.done)
      d.clear();
  }

  void finish(std::size_t p, std::uint32_t id) { out_.done[p].push_back(id); }

  std::size_t size() const { return ranks_.size(); }

 private:
  CollectiveFlows& out_;
  const std::vector<std::int64_t>& ranks_;
  std::vector<Ids> ready_;
  std::int64_t max_steps_ = 0;
};

// A ring over `order`: `steps` steps, each position sending `chunk` bytes to the next as
// soon as it has received the previous step (NCCL ring primitives: recv, reduce or copy,
// send). A send does not wait for the position's own previous send (NCCL keeps several
// slots in flight), so a link's latency is paid once per hop the data travels, not once per
// step, as in NCCL's model. Coarsened (Builder::max_ring_steps), consecutive steps merge
// into super-steps of whole steps each, the first ones one step longer.
void add_ring(Builder& b, const Order& order, std::int64_t steps, double chunk) {
  std::size_t n = order.size();
  std::int64_t super = b.max_ring_steps() > 0 ? std::min(steps, b.max_ring_steps()) : steps;
  Ids prev(n);
  Ids cur(n);
  for (std::int64_t s = 0; s < super; ++s) {
    std::int64_t merged = steps / super + (s < steps % super ? 1 : 0);
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t from = order[i];
      std::size_t to = order[(i + 1) % n];
      Ids deps = s == 0 ? b.ready(from, to) : Ids{prev[(i + n - 1) % n]};
      cur[i] = b.add(from, to, chunk * static_cast<double>(merged), std::move(deps), merged);
    }
    std::swap(prev, cur);
  }
  for (std::size_t i = 0; i < n && super > 0; ++i) {
    b.finish(order[i], prev[i]);
    b.finish(order[(i + 1) % n], prev[i]);
  }
}

// Consecutive positions on the same node, in group order.
std::vector<Order> node_segments(const SimTask& t, const std::vector<SimRankPlace>& places) {
  std::vector<Order> segs;
  for (std::size_t p = 0; p < t.ranks.size(); ++p) {
    std::int64_t node = places[static_cast<std::size_t>(t.ranks[p])].node;
    if (segs.empty() ||
        places[static_cast<std::size_t>(t.ranks[segs.back().front()])].node != node) {
      segs.emplace_back();
    }
    segs.back().push_back(p);
  }
  return segs;
}

bool even_segments(const std::vector<Order>& segs) {
  return std::all_of(segs.begin(), segs.end(),
                     [&](const Order& s) { return s.size() == segs.front().size(); });
}

// The rings of a collective: one per rank of a node when the group spans nodes evenly.
// Channel c enters node k at its rank (c - k) mod m and leaves from the rank before it, which
// is where it enters node k + 1: every inter-node hop stays on one rail, and each rail's NIC
// carries one channel each way.
std::vector<Order> ring_orders(const std::vector<Order>& segs) {
  auto m = static_cast<std::int64_t>(segs.front().size());
  if (segs.size() < 2 || m < 2 || !even_segments(segs)) {
    Order all;
    for (const Order& s : segs)
      all.insert(all.end(), s.begin(), s.end());
    return {all};
  }
  std::vector<Order> rings;
  for (std::int64_t c = 0; c < m; ++c) {
    Order ring;
    for (std::size_t k = 0; k < segs.size(); ++k) {
      std::int64_t entry = ((c - static_cast<std::int64_t>(k)) % m + m) % m;
      for (std::int64_t j = 0; j < m; ++j)
        ring.push_back(segs[k][static_cast<std::size_t>((entry + j) % m)]);
    }
    rings.push_back(ring);
  }
  return rings;
}

void add_rings(Builder& b, const std::vector<Order>& rings, std::int64_t steps, double bytes) {
  auto n = static_cast<double>(b.size());
  auto channels = static_cast<double>(rings.size());
  for (const Order& r : rings)
    add_ring(b, r, steps, bytes / n / channels);
}

// A chain from order[0] to order.back() carrying `bytes` in `chunks` pipelined pieces
// (NCCL's ring broadcast and reduce).
void add_chain(Builder& b, const Order& order, double bytes, std::int64_t chunks) {
  std::size_t n = order.size();
  std::vector<Ids> last(n - 1);
  Ids prev(n - 1);
  for (std::int64_t c = 0; c < chunks; ++c) {
    for (std::size_t i = 0; i + 1 < n; ++i) {
      Ids deps = i == 0 ? Ids{} : Ids{prev[i - 1]};
      if (c > 0)
        deps.push_back(prev[i]);
      if (c == 0)
        append(deps, b.ready(order[i], order[i + 1]));
      prev[i] = b.add(order[i], order[i + 1], bytes / static_cast<double>(chunks), deps);
    }
  }
  for (std::size_t i = 0; i + 1 < n; ++i) {
    b.finish(order[i], prev[i]);
    b.finish(order[i + 1], prev[i]);
  }
}

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// One binary tree over the nodes' first ranks (heap order of `leaders`), with a chain inside
// each node below its first rank, as NCCL builds its trees. Returns parents and a top-down
// order of the positions.
std::pair<std::vector<std::size_t>, Order> tree_shape(const std::vector<Order>& segs,
                                                      bool mirrored,
                                                      std::size_t n) {
  std::vector<std::size_t> parent(n, kNone);
  Order leaders;
  for (const Order& s : segs)
    leaders.push_back(s.front());
  if (mirrored)
    std::reverse(leaders.begin(), leaders.end());
  for (std::size_t j = 1; j < leaders.size(); ++j)
    parent[leaders[j]] = leaders[(j - 1) / 2];
  for (const Order& s : segs) {
    for (std::size_t i = 1; i < s.size(); ++i)
      parent[s[i]] = s[i - 1];
  }
  Order top_down = {leaders.front()};
  for (std::size_t k = 0; k < top_down.size(); ++k) {
    for (std::size_t p = 0; p < n; ++p) {
      if (parent[p] == top_down[k])
        top_down.push_back(p);
    }
  }
  return {parent, top_down};
}

// Tree all-reduce: each chunk is reduced up the tree (a rank sends once all its children
// have sent it) and broadcast down; NCCL's two trees each carry half the bytes.
void add_tree(
    Builder& b, const std::vector<Order>& segs, bool mirrored, double bytes, std::int64_t chunks) {
  auto [parent, top_down] = tree_shape(segs, mirrored, b.size());
  std::size_t n = b.size();
  Ids up(n);
  Ids down(n);
  double piece = bytes / static_cast<double>(chunks);
  for (std::int64_t c = 0; c < chunks; ++c) {
    for (auto it = top_down.rbegin(); it != top_down.rend(); ++it) {
      std::size_t p = *it;
      if (parent[p] == kNone)
        continue;
      Ids deps = c == 0 ? b.ready(p, parent[p]) : Ids{up[p]};
      for (std::size_t q = 0; q < n; ++q) {
        if (parent[q] == p)
          deps.push_back(up[q]);
      }
      up[p] = b.add(p, parent[p], piece, deps);
    }
    for (std::size_t p : top_down) {
      if (parent[p] == kNone)
        continue;
      Ids deps = c == 0 ? Ids{} : Ids{down[p]};
      if (parent[parent[p]] == kNone) {
        for (std::size_t q = 0; q < n; ++q) {
          if (parent[q] == parent[p])
            deps.push_back(up[q]);
        }
      } else {
        deps.push_back(down[parent[p]]);
      }
      down[p] = b.add(parent[p], p, piece, deps);
    }
  }
  for (std::size_t p = 0; p < n; ++p) {
    if (parent[p] == kNone)
      continue;
    for (std::uint32_t id : {up[p], down[p]}) {
      b.finish(p, id);
      b.finish(parent[p], id);
    }
  }
}

void add_all_pairs(Builder& b, double bytes_per_pair) {
  std::size_t n = b.size();
  std::vector<Ids> received(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j)
        continue;
      std::uint32_t id = b.add(i, j, bytes_per_pair, b.ready(i, j));
      b.finish(i, id);
      received[j].push_back(id);
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    for (std::uint32_t id : received[j])
      b.finish(j, id);
  }
}

}  // namespace

CollectiveFlows collective_flows(const SimTask& t,
                                 const std::vector<SimRankPlace>& places,
                                 std::int64_t chunks,
                                 std::int64_t max_ring_steps) {
  CHECK(t.kind == SimTaskKind::kCollective) << "'" << t.name << "' is not a collective";
  CollectiveFlows out;
  Builder b(out, t.ranks, max_ring_steps);
  auto n = static_cast<std::int64_t>(t.ranks.size());
  if (n == 1)
    return out;
  std::vector<Order> segs = node_segments(t, places);
  std::vector<Order> rings = ring_orders(segs);
  out.channels = static_cast<std::int64_t>(rings.size());
  Order all(t.ranks.size());
  for (std::size_t p = 0; p < all.size(); ++p)
    all[p] = p;
  switch (t.op) {
    case Collective::kAllReduce:
      if (t.algorithm == Algorithm::kTree && segs.size() > 1) {
        out.channels = 2;
        add_tree(b, segs, false, t.bytes / 2, chunks);
        add_tree(b, segs, true, t.bytes / 2, chunks);
        return out;
      }
      if (t.algorithm == Algorithm::kHierarchical && segs.size() > 1 && segs.front().size() > 1 &&
          even_segments(segs)) {
        auto m = static_cast<double>(segs.front().size());
        for (const Order& s : segs)
          add_ring(b, s, static_cast<std::int64_t>(s.size()) - 1, t.bytes / m);
        b.next_phase();
        for (std::size_t j = 0; j < segs.front().size(); ++j) {
          Order rail;
          for (const Order& s : segs)
            rail.push_back(s[j]);
          auto nodes = static_cast<std::int64_t>(rail.size());
          add_ring(b, rail, 2 * (nodes - 1), t.bytes / m / static_cast<double>(nodes));
        }
        b.next_phase();
        for (const Order& s : segs)
          add_ring(b, s, static_cast<std::int64_t>(s.size()) - 1, t.bytes / m);
        out.channels = 1;
        return out;
      }
      if (t.algorithm != Algorithm::kRing)
        out.note = algorithm_name(t.algorithm) + " all_reduce replayed as ring";
      add_rings(b, rings, 2 * (n - 1), t.bytes);
      return out;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      if (t.algorithm != Algorithm::kRing)
        out.note = algorithm_name(t.algorithm) + " " + collective_name(t.op) + " replayed as ring";
      add_rings(b, rings, n - 1, t.bytes);
      return out;
    case Collective::kBroadcast:
      out.channels = 1;
      add_chain(b, all, t.bytes, chunks);
      return out;
    case Collective::kReduce:
      out.channels = 1;
      std::reverse(all.begin(), all.end());
      add_chain(b, all, t.bytes, chunks);
      return out;
    case Collective::kAllToAll:
      out.channels = 1;
      add_all_pairs(b, t.bytes / static_cast<double>(n));
      return out;
    case Collective::kSendRecv:
      CHECK(n == 2) << "send_recv '" << t.name << "' needs two ranks";
      out.channels = 1;
      b.finish(1, b.add(0, 1, t.bytes, b.ready(0, 1)));
      b.finish(0, 0);
      return out;
  }
  return out;
}

}  // namespace yirage::costmodel
