// `yirage-plan bench-simulate [CLUSTER] [layout options]`: how fast SimGrid replays one
// training step on a large cluster, and how much memory it takes, next to the targets (30 s
// for the 1,024-GPU example on a 2-core machine). The step is synthetic: a 1F1B pipeline with
// a fixed compute time per micro-batch, a tensor-parallel all-reduce after each forward and
// backward, pipeline sends between stages and the gradient all-reduce per data-parallel
// group; its sizes come from the command line, not from the cost model.
#include "cli/context.h"
#include "cli/run.h"
#include "cli/summary.h"
#include "cli/table.h"
#include "costmodel/sim/simulate.h"

#include <CLI/CLI.hpp>

#include <chrono>

namespace yirage::cli {
namespace {

struct BenchSimArgs {
  std::string cluster = (devices::data_dir() / "clusters" / "h100-128x8.yaml").string();
  std::int64_t tp = 8;
  std::int64_t pp = 4;
  std::int64_t dp = 32;
  std::int64_t micro_batches = 8;
  std::string fwd = "20 ms";  // per micro-batch and stage; backward takes twice as long
  std::string tp_bytes = "256 MiB";
  std::string pp_bytes = "64 MiB";
  std::string grad_bytes = "4 GiB";
};

struct StepSizes {
  double fwd_s = 0;
  double tp_bytes = 0;
  double pp_bytes = 0;
  double grad_bytes = 0;
};

double parse(const std::string& text, devices::Dim d, const std::string& option) {
  devices::ParsedQuantity q = devices::parse_quantity(text, d);
  if (!q.error.empty())
    throw CLI::ValidationError(option, q.error);
  return q.value;
}

// Rank of tensor rank j of data-parallel replica d on pipeline stage s: node s * dp + d,
// device j, so that a data-parallel group and a pipeline send stay on one rail.
std::int64_t rank_of(const BenchSimArgs& a, std::int64_t s, std::int64_t d, std::int64_t j) {
  return (s * a.dp + d) * a.tp + j;
}

// One micro-batch's forward or backward on stage s of replica d: compute on every tensor
// rank (after `after`), then their all-reduce. Returns the all-reduce's id.
std::size_t pass(costmodel::SimProgram& p,
                 const BenchSimArgs& a,
                 const StepSizes& z,
                 std::int64_t s,
                 std::int64_t d,
                 const std::string& name,
                 const std::vector<std::size_t>& after) {
  std::vector<std::int64_t> group;
  std::vector<std::size_t> computes;
  double seconds = name[0] == 'b' ? 2 * z.fwd_s : z.fwd_s;
  for (std::int64_t j = 0; j < a.tp; ++j) {
    group.push_back(rank_of(a, s, d, j));
    computes.push_back(p.compute(group.back(), name, devices::Seconds{seconds}, after));
  }
  return p.collective(group, costmodel::Collective::kAllReduce, z.tp_bytes, name + " tp all_reduce",
                      "tp", computes);
}

struct Op {
  bool bwd = false;
  std::int64_t mb = 0;
};

// The 1F1B order of stage s: warm-up forwards, alternating forward and backward, cool-down.
std::vector<Op> one_f_one_b(std::int64_t s, std::int64_t pp, std::int64_t m) {
  std::int64_t warm = std::min(m, pp - s - 1);
  std::vector<Op> seq;
  for (std::int64_t f = 0; f < warm; ++f)
    seq.push_back({false, f});
  for (std::int64_t b = 0; b < m; ++b) {
    if (warm + b < m)
      seq.push_back({false, warm + b});
    seq.push_back({true, b});
  }
  return seq;
}

class StepBuilder {
 public:
  StepBuilder(const BenchSimArgs& a, const StepSizes& z)
      : a_(a),
        z_(z),
        done_(static_cast<std::size_t>(a.pp * a.dp * a.micro_batches * 2)),
        prev_(static_cast<std::size_t>(a.pp * a.dp)) {}

  // Issues the stages' 1F1B sequences in an order where every dependency is issued first.
  costmodel::SimProgram build() {
    std::vector<std::vector<Op>> seq;
    for (std::int64_t s = 0; s < a_.pp; ++s)
      seq.push_back(one_f_one_b(s, a_.pp, a_.micro_batches));
    std::vector<std::size_t> next(seq.size(), 0);
    std::vector<bool> issued(done_.size(), false);
    for (bool progress = true; progress;) {
      progress = false;
      for (std::int64_t s = 0; s < a_.pp; ++s) {
        auto& k = next[static_cast<std::size_t>(s)];
        while (k < seq[static_cast<std::size_t>(s)].size()) {
          Op op = seq[static_cast<std::size_t>(s)][k];
          std::int64_t from = op.bwd ? s + 1 : s - 1;
          bool ready = from < 0 || from >= a_.pp || issued[index(from, 0, op)];
          if (!ready)
            break;
          for (std::int64_t d = 0; d < a_.dp; ++d)
            issue(s, d, op, from);
          issued[index(s, 0, op)] = true;
          ++k;
          progress = true;
        }
      }
    }
    gradients();
    return std::move(p_);
  }

 private:
  std::size_t index(std::int64_t s, std::int64_t d, Op op) const {
    return static_cast<std::size_t>(((s * a_.dp + d) * a_.micro_batches + op.mb) * 2 +
                                    (op.bwd ? 1 : 0));
  }

  void issue(std::int64_t s, std::int64_t d, Op op, std::int64_t from) {
    std::string tag = (op.bwd ? "bwd mb" : "fwd mb") + std::to_string(op.mb);
    std::size_t& prev = prev_[static_cast<std::size_t>(s * a_.dp + d)];
    std::vector<std::size_t> after;
    if (prev_set_[static_cast<std::size_t>(s * a_.dp + d)])
      after.push_back(prev);
    if (from >= 0 && from < a_.pp) {
      std::size_t src = done_[index(from, d, op)];
      for (std::int64_t j = 0; j < a_.tp; ++j) {
        after.push_back(p_.send(rank_of(a_, from, d, j), rank_of(a_, s, d, j),
                                z_.pp_bytes / static_cast<double>(a_.tp), "pp send " + tag, {src}));
      }
    }
    prev = done_[index(s, d, op)] = pass(p_, a_, z_, s, d, tag, after);
    prev_set_[static_cast<std::size_t>(s * a_.dp + d)] = true;
  }

  // The gradient all-reduce of every (stage, tensor rank) over the data-parallel replicas.
  void gradients() {
    for (std::int64_t s = 0; s < a_.pp; ++s) {
      std::vector<std::size_t> after;
      for (std::int64_t d = 0; d < a_.dp; ++d)
        after.push_back(prev_[static_cast<std::size_t>(s * a_.dp + d)]);
      for (std::int64_t j = 0; j < a_.tp; ++j) {
        std::vector<std::int64_t> group;
        for (std::int64_t d = 0; d < a_.dp; ++d)
          group.push_back(rank_of(a_, s, d, j));
        p_.collective(group, costmodel::Collective::kAllReduce, z_.grad_bytes, "dp grad all_reduce",
                      "dp", after);
      }
    }
  }

  const BenchSimArgs& a_;
  const StepSizes& z_;
  costmodel::SimProgram p_;
  std::vector<std::size_t> done_;
  std::vector<std::size_t> prev_;
  std::vector<bool> prev_set_ = std::vector<bool>(prev_.size(), false);
};

int bench(Context& cx, const BenchSimArgs& a) {
  devices::DeviceRegistry registry = cx.load_registry();
  devices::ClusterSpec cluster = cx.load_cluster(a.cluster, registry);
  StepSizes z{parse(a.fwd, devices::Dim::kSeconds, "--fwd"),
              parse(a.tp_bytes, devices::Dim::kBytes, "--tp-bytes"),
              parse(a.pp_bytes, devices::Dim::kBytes, "--pp-bytes"),
              parse(a.grad_bytes, devices::Dim::kBytes, "--grad-bytes")};
  std::int64_t per_node = cluster.groups.front().devices_per_node;
  if (cluster.groups.size() != 1 || a.tp != per_node ||
      a.tp * a.pp * a.dp != cluster.total_devices()) {
    cx.err << "yirage-plan: bench-simulate needs one node group with tp = devices per node ("
           << per_node << ") and tp x pp x dp = " << cluster.total_devices() << " devices\n";
    return kExitBadInput;
  }
  auto start = std::chrono::steady_clock::now();
  costmodel::SimProgram program = StepBuilder(a, z).build();
  double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  costmodel::SimResult r = costmodel::simulate(cluster, program);
  cx.out << "one training step on " << cluster.name << " (" << cluster.total_devices()
         << " devices), tp=" << a.tp << " pp=" << a.pp << " dp=" << a.dp << ", 1F1B with "
         << a.micro_batches << " micro-batches\n"
         << "synthetic step (not from the cost model): forward " << a.fwd
         << " per micro-batch and stage, backward twice that; TP all-reduce " << a.tp_bytes
         << " per pass, pipeline send " << a.pp_bytes << ", gradient all-reduce " << a.grad_bytes
         << " per rank\n"
         << program.tasks.size() << " tasks, " << format_count(static_cast<double>(r.transfers))
         << " transfers simulated exactly (no aggregation); simulated step "
         << devices::format(r.makespan) << "\n";
  Table t({"measure", ">yirage", ">target", ">ratio"});
  t.add_row({"simulation wall time", devices::format(devices::Seconds{r.wall_seconds}), "30 s",
             devices::format_number(r.wall_seconds / 30.0, 3)});
  t.add_row({"program build time", devices::format(devices::Seconds{build_s}), "-", "-"});
  t.add_row({"peak memory (simulating process)",
             devices::format_quantity(r.peak_memory_bytes, devices::Dim::kBytes), "-", "-"});
  t.print(cx.out);
  return kExitOk;
}

}  // namespace

void add_bench_simulate_command(CLI::App& app, Context& cx) {
  CLI::App* cmd = app.add_subcommand("bench-simulate",
                                     "Time the SimGrid simulation of one synthetic training step");
  auto a = std::make_shared<BenchSimArgs>();
  cmd->add_option("CLUSTER", a->cluster, "Cluster file (default: the 1,024-GPU example)")
      ->capture_default_str();
  cmd->add_option("--tp", a->tp, "Tensor parallelism (the devices of a node)")
      ->capture_default_str();
  cmd->add_option("--pp", a->pp, "Pipeline stages")->capture_default_str();
  cmd->add_option("--dp", a->dp, "Data-parallel replicas")->capture_default_str();
  cmd->add_option("--micro-batches", a->micro_batches, "Micro-batches per step")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--fwd", a->fwd, "Synthetic forward time per micro-batch and stage")
      ->capture_default_str();
  cmd->add_option("--tp-bytes", a->tp_bytes, "TP all-reduce per pass")->capture_default_str();
  cmd->add_option("--pp-bytes", a->pp_bytes, "Pipeline send per micro-batch")
      ->capture_default_str();
  cmd->add_option("--grad-bytes", a->grad_bytes, "Gradients per rank")->capture_default_str();
  cmd->callback([&cx, a] {
    cx.action = [&cx, a] {
      return bench(cx, *a);
    };
  });
}

}  // namespace yirage::cli
