// Properties of the planner over generated clusters and tasks (parametrised GoogleTest: each
// seed of a std::mt19937_64 writes one cluster file and one task file, with their keys in a
// random order): every plan reported is positive and finite and fits its device's memory;
// the plans do not depend on the order the keys are written in; more bandwidth or more peak
// never makes a layout slower. (The planner runs on one thread; the superoptimizer's
// independence from its thread count is superoptimizer_test's.)
#include "tests/unit/test_data.h"

#include "devices/cluster_loader.h"
#include "devices/task_loader.h"
#include "planner/infer_estimate.h"
#include "planner/search.h"
#include "planner/train_estimate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace yirage::planner {
namespace {

const costmodel::CalibrationSet kNoCalibration;

using Lines = std::vector<std::pair<std::string, std::string>>;  // key, value text

/// The mapping `lines` as YAML at `indent`, its keys in a random order.
std::string mapping(std::mt19937_64& rng, Lines lines, const std::string& indent) {
  std::shuffle(lines.begin(), lines.end(), rng);
  std::string s;
  for (const auto& [key, value] : lines)
    s += indent + key + ":" + (value.front() == '\n' ? "" : " ") + value + "\n";
  return s;
}

template <class T>
T pick(std::mt19937_64& rng, const std::vector<T>& choices) {
  return choices[std::uniform_int_distribution<std::size_t>(0, choices.size() - 1)(rng)];
}

/// One generated case: the values are drawn from `seed`, the key order from `order`.
struct Case {
  std::string cluster;
  std::string task;
  bool train = false;
};

Case make_case(std::uint64_t seed, std::uint64_t order) {
  std::mt19937_64 rng(seed);
  auto [device, fabric] = pick<std::pair<std::string, std::string>>(rng, {{"H100-SXM", "nvswitch"},
                                                                          {"A100-80GB", "nvswitch"},
                                                                          {"H200", "nvswitch"},
                                                                          {"MI300X", "xgmi"}});
  std::int64_t nodes = pick<std::int64_t>(rng, {1, 1, 2, 4});
  std::int64_t per_node = pick<std::int64_t>(rng, {1, 2, 4, 8});
  std::string bw = std::to_string(std::uniform_int_distribution<int>(50, 900)(rng)) + " GB/s";
  std::string nic = std::to_string(std::uniform_int_distribution<int>(25, 800)(rng)) + " Gb/s";
  std::string model = pick<std::string>(rng, {"llama3.2-1b", "llama3-8b", "llama2-7b"});
  std::string mode = pick<std::string>(rng, {"train", "train", "prefill", "decode"});
  std::int64_t seq = pick<std::int64_t>(rng, {512, 1024, 2048, 4096});
  std::int64_t batch = pick<std::int64_t>(rng, {8, 16, 32, 64, 128});

  std::mt19937_64 shuffle(order);
  Case c;
  std::string group =
      mapping(shuffle,
              {{"name", "g"},
               {"device", device},
               {"nodes", std::to_string(nodes)},
               {"devices_per_node", std::to_string(per_node)},
               {"fabric",
                "\n" + mapping(shuffle, {{"kind", fabric}, {"bandwidth", bw}, {"latency", "1 us"}},
                               "      ")}},
              "    ");
  group.replace(0, 4, "  - ");
  Lines cluster = {{"name", "generated"}, {"node_groups", "\n" + group}};
  if (nodes > 1) {
    cluster.push_back(
        {"network",
         "\n" + mapping(shuffle,
                        {{"topology", "fat-tree"}, {"nic_bandwidth", nic}, {"latency", "3 us"}},
                        "  ")});
  }
  c.cluster = mapping(shuffle, cluster, "");
  Lines task = {{"name", "generated"},
                {"model", model},
                {"mode", mode},
                {"precision", "bf16"},
                {"sequence_length", std::to_string(seq)},
                {"global_batch", std::to_string(batch)}};
  if (mode == "train")
    task.push_back({"optimizer", "adam"});
  c.task = mapping(shuffle, task, "");
  c.train = mode == "train";
  return c;
}

struct Loaded {
  devices::ClusterSpec cluster;
  devices::TaskSpec task;
};

Loaded load(const Case& c) {
  static const devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  return {devices::parse_cluster("cluster.yaml", c.cluster, testing::bundled_registry()),
          devices::parse_task("task.yaml", c.task, models)};
}

/// Every bandwidth of the cluster (memory hierarchy, device links, fabric, network) times k.
devices::ClusterSpec more_bandwidth(devices::ClusterSpec c, double k) {
  for (devices::DeviceSpec& d : c.device_types) {
    d.memory_bandwidth.value.value *= k;
    if (d.onchip.l2_bandwidth)
      d.onchip.l2_bandwidth->value.value *= k;
    for (devices::LinkSpec& l : d.links)
      l.bandwidth.value.value *= k;
    if (d.host_link)
      d.host_link->bandwidth.value.value *= k;
  }
  for (devices::NodeGroup& g : c.groups) {
    g.fabric.bandwidth.value *= k;
    if (g.nic_bandwidth)
      g.nic_bandwidth->value *= k;
  }
  if (c.network)
    c.network->nic_bandwidth.value *= k;
  return c;
}

devices::ClusterSpec more_peak(devices::ClusterSpec c, double k) {
  for (devices::DeviceSpec& d : c.device_types)
    for (auto& [dtype, rate] : d.peak)
      rate.value.value *= k;
  return c;
}

/// A search's plans as comparable text: each layout with its times, exactly.
std::vector<std::string> plans_of(const Loaded& l, bool train) {
  std::vector<std::string> out;
  if (train) {
    TrainContext cx{l.cluster, l.task, kNoCalibration};
    for (const PlanEstimate& p : search_training(cx).plans)
      out.push_back(p.layout.str() + " " + std::to_string(p.step.total));
  } else {
    InferContext cx{l.cluster, l.task, kNoCalibration};
    for (const InferEstimate& p : search_inference(cx).plans)
      out.push_back(p.layout.str() + " " + std::to_string(p.ttft) + " " + std::to_string(p.tpot));
  }
  return out;
}

bool positive_finite(double v) {
  return std::isfinite(v) && v > 0;
}

class PlanProperties : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(PlanProperties, PlansArePositiveFiniteAndFitMemory) {
  Case c = make_case(GetParam(), GetParam());
  SCOPED_TRACE(c.cluster + "---\n" + c.task);
  Loaded l = load(c);
  double device_memory = l.cluster.device_types.front().memory_capacity.value.value;
  if (c.train) {
    TrainContext cx{l.cluster, l.task, kNoCalibration};
    for (const PlanEstimate& p : search_training(cx).plans) {
      SCOPED_TRACE(p.layout.str());
      EXPECT_TRUE(positive_finite(p.step.total));
      EXPECT_TRUE(positive_finite(p.tokens_per_s));
      EXPECT_TRUE(std::isfinite(p.mfu) && p.mfu > 0 && p.mfu < 1);
      for (double part : {p.step.compute, p.step.tp_comm, p.step.pp_comm, p.step.bubble,
                          p.step.dp_comm, p.step.optimizer})
        EXPECT_TRUE(std::isfinite(part) && part >= 0);
      EXPECT_LE(p.memory.total(), p.memory.capacity);
      EXPECT_LE(p.memory.capacity, device_memory);
    }
  } else {
    InferContext cx{l.cluster, l.task, kNoCalibration};
    for (const InferEstimate& p : search_inference(cx).plans) {
      SCOPED_TRACE(p.layout.str());
      // The step of the mode is priced (prefill: TTFT; decode: TPOT); the other is 0.
      EXPECT_TRUE(positive_finite(l.task.mode == devices::Mode::kDecode ? p.tpot : p.ttft));
      EXPECT_TRUE(std::isfinite(p.ttft) && p.ttft >= 0);
      EXPECT_TRUE(std::isfinite(p.tpot) && p.tpot >= 0);
      EXPECT_TRUE(positive_finite(p.tokens_per_s));
      EXPECT_LE(p.weights + p.kv_cache + p.workspace, p.capacity);
      EXPECT_LE(p.capacity, device_memory);
    }
  }
}

TEST_P(PlanProperties, PlansDoNotDependOnKeyOrder) {
  Case a = make_case(GetParam(), GetParam());
  Case b = make_case(GetParam(), GetParam() + 1000);
  SCOPED_TRACE(a.cluster + "---\n" + b.cluster + "---\n" + a.task + "---\n" + b.task);
  EXPECT_EQ(plans_of(load(a), a.train), plans_of(load(b), b.train));
}

/// The first plans of the search, estimated again on `better`: none is slower.
void expect_not_slower(const Loaded& l, const devices::ClusterSpec& better, bool train) {
  if (train) {
    TrainContext cx{l.cluster, l.task, kNoCalibration};
    TrainContext bx{better, l.task, kNoCalibration};
    SearchResult r = search_training(cx);
    for (std::size_t i = 0; i < std::min<std::size_t>(r.plans.size(), 6); ++i) {
      auto e = estimate_training(bx, r.plans[i].layout);
      ASSERT_TRUE(std::holds_alternative<PlanEstimate>(e)) << r.plans[i].layout.str();
      EXPECT_LE(std::get<PlanEstimate>(e).step.total, r.plans[i].step.total * (1 + 1e-9))
          << r.plans[i].layout.str();
    }
  } else {
    InferContext cx{l.cluster, l.task, kNoCalibration};
    InferContext bx{better, l.task, kNoCalibration};
    InferSearchResult r = search_inference(cx);
    for (std::size_t i = 0; i < std::min<std::size_t>(r.plans.size(), 6); ++i) {
      auto e = estimate_inference(bx, r.plans[i].layout);
      ASSERT_TRUE(std::holds_alternative<InferEstimate>(e)) << r.plans[i].layout.str();
      EXPECT_LE(std::get<InferEstimate>(e).ttft, r.plans[i].ttft * (1 + 1e-9))
          << r.plans[i].layout.str();
      EXPECT_LE(std::get<InferEstimate>(e).tpot, r.plans[i].tpot * (1 + 1e-9))
          << r.plans[i].layout.str();
    }
  }
}

TEST_P(PlanProperties, MoreBandwidthOrPeakIsNeverSlower) {
  Case c = make_case(GetParam(), GetParam());
  SCOPED_TRACE(c.cluster + "---\n" + c.task);
  Loaded l = load(c);
  std::mt19937_64 rng(GetParam() * 7919);
  double k = std::uniform_real_distribution<double>(1.0, 4.0)(rng);
  SCOPED_TRACE("k = " + std::to_string(k));
  {
    SCOPED_TRACE("more bandwidth");
    expect_not_slower(l, more_bandwidth(l.cluster, k), c.train);
  }
  {
    SCOPED_TRACE("more peak");
    expect_not_slower(l, more_peak(l.cluster, k), c.train);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, PlanProperties, ::testing::Range<std::uint64_t>(1, 25));

}  // namespace
}  // namespace yirage::planner
