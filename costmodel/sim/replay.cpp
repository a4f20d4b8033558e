#include "costmodel/sim/replay.h"

#include "costmodel/nccl_constants.h"
#include "costmodel/sim/collective_flows.h"
#include "costmodel/sim/link_usage.h"
#include "costmodel/sim/sim_platform.h"
#include "devices/support/check.h"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace yirage::costmodel {
namespace sg4 = simgrid::s4u;

namespace {

constexpr double kHostSpeed = 1e9;  // flop/s of every host (sim_platform.cpp)

enum class OpKind : std::uint8_t { kGate, kExec, kDelay, kFlow };

// A node of the step's dependency graph: gates complete as soon as their inputs have;
// executions, delays and flows are SimGrid activities.
struct Op {
  OpKind kind = OpKind::kGate;
  std::uint32_t pending = 0;
  std::vector<std::uint32_t> next;
  double amount = 0;  // seconds (exec, delay) or bytes (flow)
  std::int64_t src = 0;
  std::int64_t dst = 0;
  std::int64_t steps = 1;                 // flows: ring steps it stands for (collective_flows)
  Protocol protocol = Protocol::kSimple;  // flows
  double start = -1;
  double end = -1;
};

// Where one rank's part of one task starts and ends in the graph.
struct Part {
  std::size_t task = 0;
  std::int64_t rank = 0;
  std::uint32_t join = 0;
  std::uint32_t done = 0;
};

class Graph {
 public:
  std::uint32_t add(OpKind k, double amount = 0, std::int64_t src = 0, std::int64_t dst = 0) {
    Op op;
    op.kind = k;
    op.amount = amount;
    op.src = src;
    op.dst = dst;
    ops_.push_back(std::move(op));
    return static_cast<std::uint32_t>(ops_.size() - 1);
  }

  void edge(std::uint32_t from, std::uint32_t to) {
    ops_[from].next.push_back(to);
    ++ops_[to].pending;
  }

  std::vector<Op>& ops() { return ops_; }

 private:
  std::vector<Op> ops_;
};

struct Built {
  Graph graph;
  std::vector<Part> parts;
  std::vector<std::string> notes;
  std::int64_t max_ring_steps = 0;  // 0: exact
};

// The share of the bytes on the wire that are data: LL sends an 8-byte flag with every 8
// bytes, LL128 8 with every 120 (the ring bandwidths of collective.cpp).
double wire_share(Protocol p) {
  return p == Protocol::kLL ? 0.5 : p == Protocol::kLL128 ? 0.92 : 1.0;
}

// The rank's part of a collective: its transfers, after the launch latency.
void add_collective(Built& b,
                    const SimTask& t,
                    const std::vector<std::uint32_t>& join,
                    const std::vector<std::uint32_t>& done,
                    const std::vector<SimRankPlace>& places,
                    const SimOptions& o) {
  Graph& g = b.graph;
  std::vector<std::uint32_t> start = join;
  if (o.launch_latency) {
    double lat = NcclConstants::base_latency_us(false, t.protocol) * 1e-6;
    for (std::size_t p = 0; p < join.size(); ++p) {
      start[p] = g.add(OpKind::kDelay, lat);
      g.edge(join[p], start[p]);
    }
  }
  CollectiveFlows cf = collective_flows(t, places, o.pipeline_chunks, b.max_ring_steps);
  if (!cf.note.empty())
    b.notes.push_back(cf.note);
  std::map<std::int64_t, std::size_t> position;
  for (std::size_t p = 0; p < t.ranks.size(); ++p)
    position[t.ranks[p]] = p;
  auto first = static_cast<std::uint32_t>(g.ops().size());
  for (const SimFlow& f : cf.flows) {
    std::uint32_t id = g.add(OpKind::kFlow, f.bytes / wire_share(t.protocol), f.src, f.dst);
    g.ops()[id].steps = f.steps;
    g.ops()[id].protocol = t.protocol;
    for (std::uint32_t d : f.deps)
      g.edge(first + d, id);
    if (f.deps.empty()) {
      g.edge(start[position[f.src]], id);
      g.edge(start[position[f.dst]], id);
    }
  }
  for (std::size_t p = 0; p < t.ranks.size(); ++p) {
    g.edge(start[p], done[p]);
    for (std::uint32_t d : cf.done[p])
      g.edge(first + d, done[p]);
  }
}

// The transfers the step replays in, with rings of at most `max_ring_steps` steps, and
// what replaying them costs. SimGrid re-solves the bandwidth shares of the flows in flight
// whenever one ends, so the work is about transfers x flows in flight. Tasks of one name
// (one collective of every replica: "tp fwd mb3") run at the same time; the flows a task
// has in flight at once are those that wait for none of its others.
struct TransferCount {
  std::size_t transfers = 0;
  double work = 0;
};

TransferCount count_transfers(const SimProgram& program,
                              const std::vector<SimRankPlace>& places,
                              const SimOptions& o,
                              std::int64_t max_ring_steps) {
  std::map<std::string, std::pair<double, double>> by_name;  // transfers, in flight
  // A collective's transfers depend on its kind and on how many of its ranks sit on each
  // node in turn, not on which ranks: count each shape once.
  std::map<std::vector<std::int64_t>, std::pair<double, double>> by_shape;
  TransferCount c;
  for (const SimTask& t : program.tasks) {
    if (t.kind == SimTaskKind::kCompute)
      continue;
    auto& [flows, width] = by_name[t.name];
    if (t.kind == SimTaskKind::kSend) {
      flows += 1;
      width += 1;
      continue;
    }
    std::vector<std::int64_t> shape = {static_cast<std::int64_t>(t.op),
                                       static_cast<std::int64_t>(t.algorithm)};
    for (std::size_t i = 0; i < t.ranks.size(); ++i) {
      std::int64_t node = places[static_cast<std::size_t>(t.ranks[i])].node;
      if (i == 0 || node != places[static_cast<std::size_t>(t.ranks[i - 1])].node)
        shape.push_back(0);
      ++shape.back();
    }
    auto [it, added] = by_shape.try_emplace(shape);
    if (added) {
      CollectiveFlows cf = collective_flows(t, places, o.pipeline_chunks, max_ring_steps);
      it->second.first = static_cast<double>(cf.flows.size());
      it->second.second = static_cast<double>(std::count_if(
          cf.flows.begin(), cf.flows.end(), [](const SimFlow& f) { return f.deps.empty(); }));
    }
    flows += it->second.first;
    width += it->second.second;
  }
  for (const auto& [name, fw] : by_name) {
    c.transfers += static_cast<std::size_t>(fw.first);
    c.work += fw.first * fw.second;
  }
  return c;
}

Built build(const SimProgram& program,
            const std::vector<SimRankPlace>& places,
            const SimOptions& o,
            std::int64_t max_ring_steps) {
  Built b;
  b.max_ring_steps = max_ring_steps;
  Graph& g = b.graph;
  std::vector<std::uint32_t> task_done(program.tasks.size());
  std::map<std::pair<std::int64_t, std::string>, std::uint32_t> stream_last;
  for (std::size_t i = 0; i < program.tasks.size(); ++i) {
    const SimTask& t = program.tasks[i];
    std::vector<std::uint32_t> join;
    std::vector<std::uint32_t> done;
    task_done[i] = g.add(OpKind::kGate);
    for (std::int64_t r : t.ranks) {
      CHECK(r < static_cast<std::int64_t>(places.size()))
          << "rank " << r << " of '" << t.name << "' is not a device of the cluster";
      join.push_back(g.add(OpKind::kGate));
      done.push_back(g.add(OpKind::kGate));
      g.edge(done.back(), task_done[i]);
      auto key = std::make_pair(r, t.stream);
      if (auto it = stream_last.find(key); it != stream_last.end())
        g.edge(it->second, join.back());
      stream_last[key] = done.back();
      for (std::size_t a : t.after)
        g.edge(task_done[a], join.back());
      b.parts.push_back({i, r, join.back(), done.back()});
    }
    if (t.kind == SimTaskKind::kCompute) {
      std::uint32_t e = g.add(OpKind::kExec, t.duration.value, t.ranks[0]);
      g.edge(join[0], e);
      g.edge(e, done[0]);
    } else if (t.kind == SimTaskKind::kSend) {
      std::uint32_t f =
          g.add(OpKind::kFlow, t.bytes / wire_share(t.protocol), t.ranks[0], t.ranks[1]);
      g.ops()[f].protocol = t.protocol;
      g.edge(join[0], f);
      g.edge(join[1], f);
      g.edge(f, done[0]);
      g.edge(f, done[1]);
    } else {
      add_collective(b, t, join, done, places, o);
    }
  }
  return b;
}

sg4::ActivityPtr execute(sg4::Host* host, double seconds) {
  return sg4::Exec::init()->set_flops_amount(seconds * kHostSpeed)->set_host(host)->start();
}

// Runs the op's activity to its end. A transfer first waits its protocol's latency over the
// route (SimGrid's links have none: sim_platform.h), once more for every further ring step
// it stands for (coarsened rings); its start is when its bytes leave (link accounting).
void perform(Op& op, const SimPlatform& platform) {
  if (op.kind == OpKind::kExec) {
    execute(platform.compute_host(op.src), op.amount)->wait();
    return;
  }
  if (op.kind == OpKind::kDelay) {
    execute(platform.timer_host(), op.amount)->wait();
    return;
  }
  SimRoute r = platform.route(op.src, op.dst);
  double wait = static_cast<double>(op.steps) * r.latency_of(op.protocol);
  if (wait > 0)
    execute(platform.timer_host(), wait)->wait();
  op.start = sg4::Engine::get_clock();
  auto bytes = static_cast<std::uint64_t>(std::llround(std::max(0.0, op.amount)));
  if (bytes == 0)  // SimGrid never completes an empty transfer; its latency is waited
    return;
  sg4::Comm::sendto_async(r.from, r.to, bytes)->wait();
}

// A worker runs one op after another: it starts the op's activity and waits for it, then
// releases the ops that were waiting for it. It continues with the first of them itself and
// queues the others for idle workers, starting a new worker only when none is idle, so each
// activity is waited for by exactly one actor (a shared wait_any over thousands of
// activities is quadratic) while the actors created stay as few as the ops that ever run at
// once (a million short-lived actors spend most of a large replay creating stacks). Gates
// complete at once. Every op queued is claimed by exactly one waiting worker, which takes it
// when it wakes. Actors run one at a time, so the queue needs no lock of its own; the mutex
// is only the condition variable's.
class Workers {
 public:
  Workers(std::vector<Op>& ops, const SimPlatform& platform)
      : ops_(ops),
        platform_(platform),
        mutex_(sg4::Mutex::create()),
        wake_(sg4::ConditionVariable::create()) {}

  // Queues every op with no inputs and starts the workers they need.
  void start() {
    for (std::uint32_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].pending == 0)
        hand_off(i);
    }
  }

 private:
  void run(std::uint32_t id) {
    while (true) {
      id = run_chain(id);
      if (id != kNone)
        continue;
      --running_;
      std::unique_lock lock(*mutex_);
      // No op queued and none running: nothing can release another op (the step is over,
      // or a dependency never completes, which replay() reports).
      if (ready_.empty() && running_ == 0) {
        over_ = true;
        wake_->notify_all();
        return;
      }
      ++idle_;
      do {
        wake_->wait(lock);
      } while (ready_.empty() && !over_);
      if (ready_.empty())
        return;
      ++running_;
      id = ready_.back();
      ready_.pop_back();
    }
  }

  // Runs `id` and then the first op each one releases; returns the op to continue with, or
  // kNone when the chain ends. The other released ops are handed off.
  std::uint32_t run_chain(std::uint32_t id) {
    Op& op = ops_[id];
    op.start = sg4::Engine::get_clock();
    if (op.kind != OpKind::kGate)
      perform(op, platform_);
    op.end = sg4::Engine::get_clock();
    std::uint32_t next = kNone;
    for (std::uint32_t n : op.next) {
      if (--ops_[n].pending != 0)
        continue;
      if (next == kNone)
        next = n;
      else
        hand_off(n);
    }
    return next;
  }

  // Gives the op to an idle worker, or to a new one when every worker is busy.
  void hand_off(std::uint32_t id) {
    if (idle_ > 0) {  // claims one: it takes exactly this op when it wakes
      --idle_;
      ready_.push_back(id);
      wake_->notify_one();
      return;
    }
    ++running_;
    sg4::Actor::create("op", platform_.timer_host(), [this, id] { run(id); });
  }

  static constexpr std::uint32_t kNone = UINT32_MAX;
  std::vector<Op>& ops_;
  const SimPlatform& platform_;
  sg4::MutexPtr mutex_;
  sg4::ConditionVariablePtr wake_;
  std::vector<std::uint32_t> ready_;  // handed to idle workers, not yet taken
  std::int64_t idle_ = 0;             // workers waiting on wake_ that no op has claimed
  std::int64_t running_ = 0;          // workers running a chain
  bool over_ = false;
};

double union_length(std::vector<SimInterval>& v) {
  double total = 0;
  double cur_start = 0;
  double cur_end = -1;
  for (const SimInterval& iv : v) {
    if (iv.start.value > cur_end) {
      total += std::max(0.0, cur_end - cur_start);
      cur_start = iv.start.value;
      cur_end = iv.end.value;
    } else {
      cur_end = std::max(cur_end, iv.end.value);
    }
  }
  return total + std::max(0.0, cur_end - cur_start);
}

void fill_timelines(SimResult& r,
                    const std::vector<Part>& parts,
                    const std::vector<Op>& ops,
                    const SimPlatform& platform) {
  for (std::int64_t rank = 0; rank < platform.devices(); ++rank) {
    SimDeviceTimeline d;
    d.rank = rank;
    d.node = platform.node(rank);
    d.host = platform.host_name(rank);
    r.devices.push_back(std::move(d));
  }
  for (const Part& p : parts) {
    r.devices[static_cast<std::size_t>(p.rank)].intervals.push_back(
        {p.task, devices::Seconds{ops[p.join].end}, devices::Seconds{ops[p.done].end}});
  }
  for (SimDeviceTimeline& d : r.devices) {
    std::sort(d.intervals.begin(), d.intervals.end(),
              [](const SimInterval& a, const SimInterval& c) {
                return std::tie(a.start.value, a.task) < std::tie(c.start.value, c.task);
              });
    d.busy = devices::Seconds{union_length(d.intervals)};
    d.idle = r.makespan - d.busy;
  }
}

}  // namespace

SimResult replay(const devices::ClusterSpec& cluster,
                 const SimProgram& program,
                 const SimOptions& options) {
  auto wall_start = std::chrono::steady_clock::now();
  std::vector<SimRankPlace> places = sim_rank_places(cluster);
  // Over the budget, every ring runs as one super-step: each hop a single transfer of all
  // its steps' bytes, as NCCL's pipelined slices keep every hop busy at once. (Partial
  // coarsening, a few super-steps of unequal size, drifts from both under contention.)
  TransferCount exact = count_transfers(program, places, options, 0);
  std::int64_t max_ring_steps = options.max_work > 0 && exact.work > options.max_work ? 1 : 0;
  Built b = build(program, places, options, max_ring_steps);
  int argc = 3;
  std::string arg0 = "yirage-sim";
  std::string arg1 = "--log=root.thresh:critical";
  std::string arg2 = "--cfg=contexts/stack-size:128";  // KiB; workers need little stack
  std::vector<char*> argv = {arg0.data(), arg1.data(), arg2.data(), nullptr};
  sg4::Engine engine(&argc, argv.data());
  // CM02 without cross-traffic and without latency on the links: a flow's time is bytes / its
  // max-min share of bandwidth (its latency is waited before), the model that reproduces
  // closed-form collective times (toolchain.md §3).
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  SimPlatform platform(cluster);
  std::vector<Op>& ops = b.graph.ops();
  Workers workers(ops, platform);
  workers.start();
  engine.run();
  SimResult r;
  r.makespan = devices::Seconds{sg4::Engine::get_clock()};
  std::vector<FlowTimes> flows;
  for (const Op& op : ops) {
    CHECK(op.end >= 0) << "the step did not finish: a dependency never completed";
    if (op.kind == OpKind::kFlow)
      flows.push_back({op.src, op.dst, op.amount, op.start, op.end});
  }
  r.transfers = flows.size();
  if (max_ring_steps > 0) {
    r.aggregation =
        "every ring collective replayed as one transfer per hop carrying all its "
        "steps' bytes after their hop latencies (the links carry the same load; "
        "exact would be too slow): " +
        std::to_string(flows.size()) + " transfers in place of " + std::to_string(exact.transfers);
  }
  fill_timelines(r, b.parts, ops, platform);
  r.links = link_usage(platform, flows);
  r.most_contended = most_contended(r.links, 10);
  std::set<std::string> notes(b.notes.begin(), b.notes.end());
  r.notes.assign(notes.begin(), notes.end());
  r.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace yirage::costmodel
