// Eager PyTorch's peak memory (framework: pytorch, as bench/run_plan.py trains) against the
// allocator's measured peak (torch.cuda.max_memory_allocated) of one row of each kind of
// layout in data/benchmarks/H200/train_steps*.csv, and the terms that make it up.
#include "tests/unit/test_data.h"

#include "planner/train_estimate.h"
#include "planner/train_stage.h"

#include <gtest/gtest.h>

namespace yirage::planner {
namespace {

devices::ClusterSpec steps_cluster(const std::string& name) {
  std::filesystem::path steps = devices::data_dir() / "benchmarks" / "H200" / "steps";
  return devices::load_cluster(steps / "clusters" / (name + ".yaml"), testing::bundled_registry());
}

devices::TaskSpec steps_task(const std::string& name) {
  static const devices::ModelRegistry models = devices::ModelRegistry::load_bundled();
  std::filesystem::path steps = devices::data_dir() / "benchmarks" / "H200" / "steps";
  return devices::load_task(steps / "tasks" / (name + ".yaml"), models);
}

MemoryUse memory_of(const std::string& cluster,
                    const std::string& task,
                    const std::string& layout) {
  Layout l;
  EXPECT_EQ(parse_layout(layout, &l), "");
  costmodel::CalibrationSet none;
  return training_memory(TrainContext{steps_cluster(cluster), steps_task(task), none}, l);
}

struct Measured {
  const char* file;  // data/benchmarks/H200/...
  const char* cluster;
  const char* task;
  const char* layout;
  double allocated;  // peak_allocated_bytes
};

TEST(EagerMemory, MatchesTheAllocatorsPeakOnEachKindOfLayout) {
  const Measured rows[] = {
      {"train_steps_kernels.csv", "h200x1", "l8b-L4-s4096-gb4",
       "tp=1,pp=1,dp=1,mb=1,recompute=none,zero=0", 44717811200},
      {"train_steps_2_4gpu_host3.csv", "h200x2", "l8b-L4-s4096-gb4",
       "tp=1,pp=1,dp=2,mb=2,recompute=none,zero=0", 63490499584},  // DDP
      {"train_steps_2_4gpu_host3.csv", "h200x2", "l8b-L4-s4096-gb4",
       "tp=2,pp=1,dp=1,mb=2,recompute=none,zero=0", 36641678848},  // DTensor TP
      {"train_steps_2_4gpu_host3.csv", "h200x2", "l8b-L4-s4096-gb4",
       "tp=1,pp=1,dp=2,mb=1,recompute=none,zero=3", 25630025216},  // FSDP2
      {"train_steps_2_4gpu_host3.csv", "h200x2", "l8b-L4-s4096-gb4",
       "tp=1,pp=1,dp=2,mb=1,recompute=none,zero=2", 29476275712},
      {"train_steps_2_4gpu_host3.csv", "h200x2", "l8b-L4-s4096-gb4",
       "tp=1,pp=2,dp=1,mb=2,recompute=none,zero=0", 38284540416},  // 1F1B
      {"train_steps_2_4gpu_host3.csv", "h200x2", "l70b-L2-s4096-gb4",
       "tp=2,pp=1,dp=1,mb=1,recompute=none,zero=0", 44888676864},
      {"train_steps_4gpu.csv", "h200x4", "l8b-L4-s4096-gb8",
       "tp=1,pp=4,dp=1,mb=1,recompute=none,zero=0", 29521342464},
      {"train_steps_4gpu.csv", "h200x4", "l8b-L4-s4096-gb8",
       "tp=4,pp=1,dp=1,mb=1,recompute=full,zero=0", 17060423168},
  };
  for (const Measured& r : rows) {
    double predicted = memory_of(r.cluster, r.task, r.layout).total();
    EXPECT_NEAR(predicted / r.allocated, 1.0, 0.06)
        << r.file << ": " << r.task << " " << r.layout << ": " << predicted / 1e9 << " GB";
  }
}

TEST(EagerMemory, PipelinesKeepAReceiveBufferPerStageAndMicroBatch) {
  // torch.distributed.pipelining: each local stage holds an input and an output-gradient
  // buffer per micro-batch (the first stage no input, the last no gradient): 2 vpp - 1 of
  // them per micro-batch on either rank of a 2-stage pipeline. Without them the interleaved
  // layouts were 4.4% and 7.5% low.
  auto live = [](const char* layout) {
    return memory_of("h200x2", "l8b-L8-s4096-gb8", layout).total();
  };
  // Measured (train_steps_2gpu_pp.csv): 43.97, 47.19 and 49.73 GB allocated at vpp 1, 2, 4.
  EXPECT_NEAR(live("tp=1,pp=2,dp=1,mb=1") / 43.97e9, 1.0, 0.03);
  EXPECT_NEAR(live("tp=1,pp=2,dp=1,mb=1,vpp=2") / 47.19e9, 1.0, 0.04);
  EXPECT_NEAR(live("tp=1,pp=2,dp=1,mb=1,vpp=4") / 49.73e9, 1.0, 0.05);
}

TEST(EagerMemory, UnderFullRecomputationTheLossAndTheRecomputedLayerAreNotLiveAtOnce) {
  // Loss-heavy steps on one GPU (8,192 tokens per sequence, a 128K vocabulary), the allocator's
  // peaks measured with its history (H200/loss_memory.csv). Counting the recomputed layer on
  // top of the loss's logits priced the full-recomputation rows 5.1% and 8.2% high.
  auto live = [](const char* layout) {
    return memory_of("h200x1", "l8b-L4-s8192-gb4", layout).total();
  };
  EXPECT_NEAR(live("tp=1,pp=1,dp=1,mb=2,recompute=none") / 77963879936.0, 1.0, 0.01);
  EXPECT_NEAR(live("tp=1,pp=1,dp=1,mb=2,recompute=full") / 62519924224.0, 1.0, 0.03);
  EXPECT_NEAR(live("tp=1,pp=1,dp=1,mb=4,recompute=full") / 85454296576.0, 1.0, 0.03);
}

TEST(EagerMemory, TheLastMicroBatchsLogitsLiveToTheEndOfTheBackward) {
  // A 70B-width model, 8 layers, on one H200 (train_steps.csv) ran out of memory allocating
  // the embedding's fp32 gradient (3.91 GiB) with 129.95 GiB allocated: 143.73 GB needed, the
  // weights, gradients and Adam's moments (16 B per parameter) and the runner's 16-bit logits.
  MemoryUse u = memory_of("h200x1", "l70b-L8-s2048-gb1", "tp=1,pp=1,dp=1,mb=1,recompute=none");
  EXPECT_NEAR(u.total() / 143.73e9, 1.0, 0.005);
  EXPECT_GT(u.total(), u.capacity);
}

TEST(EagerMemory, DdpKeepsTwoSetsOfBucketsBesideTheGradients) {
  // One micro-batch per step: no gradient yet as the backward starts but the head's. DDP's
  // fp32 buckets come twice: measured alone on one GPU (H200/ddp_alone.csv, a one-rank NCCL
  // group or the fake process group), DDP adds one set to the plain step; between two ranks
  // (train_steps*.csv) every row adds two.
  MemoryUse one = memory_of("h200x1", "l8b-L4-s4096-gb4", "tp=1,pp=1,dp=1,mb=4");
  MemoryUse ddp = memory_of("h200x2", "l8b-L4-s4096-gb4", "tp=1,pp=1,dp=2,mb=2");
  double fp32 = one.weights / 6;  // 4 B master weights + 2 B bf16 copies per parameter
  EXPECT_LT(one.gradients, fp32 * 4 / 3);
  EXPECT_NEAR((ddp.gradients - one.gradients) / (fp32 * 4 * 2), 1.0, 1e-9);
  // Measured allocated peaks between two H200s: 60.11 GB with two micro-batches per rank,
  // 63.49 GB with one (train_steps_2gpu_host.csv); the one-GPU runs 52.41 and 55.80.
  EXPECT_NEAR(memory_of("h200x2", "l8b-L4-s4096-gb4", "tp=1,pp=1,dp=2,mb=1").total() / 60.11e9, 1.0,
              0.03);
  EXPECT_NEAR(ddp.total() / 63.49e9, 1.0, 0.05);
}

TEST(EagerMemory, Fsdp2ShardsEveryFp32TensorAndGathersBf16Copies) {
  MemoryUse zero2 = memory_of("h200x2", "l8b-L4-s4096-gb4", "tp=1,pp=1,dp=2,mb=1,zero=2");
  MemoryUse zero3 = memory_of("h200x2", "l8b-L4-s4096-gb4", "tp=1,pp=1,dp=2,mb=1,zero=3");
  MemoryUse one = memory_of("h200x1", "l8b-L4-s4096-gb4", "tp=1,pp=1,dp=1,mb=1");
  double params = one.optimizer / 8;
  EXPECT_NEAR(zero2.weights / (params * (4.0 / 2 + 2)), 1.0, 1e-9);
  EXPECT_NEAR(zero2.optimizer / (params * 8 / 2), 1.0, 1e-9);
  EXPECT_LT(zero3.weights, params * (4.0 / 2 + 2 * 0.2));  // one of four layers gathered
  // No autocast under FSDP2: no fp32 norm inputs kept.
  EXPECT_LT(zero3.activations, one.activations);
}

TEST(EagerMemory, TensorParallelLogitsAreWholeOnEveryRank) {
  // No loss parallelism: each rank gathers the logits and runs the loss over all of them, so
  // they do not shrink with tp as the layers' activations do.
  MemoryUse tp2 = memory_of("h200x2", "l8b-L4-s4096-gb4", "tp=2,pp=1,dp=1,mb=1");
  MemoryUse tp4 = memory_of("h200x4", "l8b-L4-s4096-gb8", "tp=4,pp=1,dp=1,mb=1");
  double logits = 4096.0 * 128256;
  EXPECT_GT(tp2.activations, logits * 14);
  EXPECT_GT(tp4.activations, logits * 14);
}

TEST(EagerMemory, Fsdp2SideStreamsKeepPoolsOfTheirOwn) {
  // bench/memory_layouts.sh on two H200s (data/benchmarks/H200x2/memory/x2.jsonl.rank0): the
  // all-gather copy-in stream reserved 6.40 GB and the reduce-scatter stream 3.16 GB beside
  // the compute stream's 29.27 GB, for a 25.63 GB allocated peak and 38.82 GB reserved.
  MemoryUse zero3 = memory_of("h200x2", "l8b-L4-s4096-gb4", "tp=1,pp=1,dp=2,mb=1,zero=3");
  EXPECT_NEAR(zero3.reserve / (6.40e9 + 3.16e9), 1.0, 0.02);  // no calibration: the pools only
  MemoryUse ddp = memory_of("h200x2", "l8b-L4-s4096-gb4", "tp=1,pp=1,dp=2,mb=1,zero=0");
  EXPECT_EQ(ddp.reserve, 0);  // every allocation in the compute stream, no cache fitted

  costmodel::CalibrationSet shipped =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");
  Layout l;
  ASSERT_EQ(parse_layout("tp=1,pp=1,dp=2,mb=1,zero=3", &l), "");
  MemoryUse calibrated = training_memory(
      TrainContext{steps_cluster("h200x2"), steps_task("l8b-L4-s4096-gb4"), shipped}, l);
  EXPECT_GT(calibrated.reserve, zero3.reserve);  // the compute stream's cache as well
  EXPECT_NEAR((calibrated.total() + calibrated.reserve) / 38.82e9, 1.0, 0.08);
  EXPECT_EQ(calibrated.total(), zero3.total());  // fitting is judged on the live peak
}

TEST(EagerMemory, APipelinesLastStageMergesItsOutputsIntoASegmentOfItsOwn) {
  // torch.distributed.pipelining merges the last stage's outputs (16-bit logits, one per
  // micro-batch) into one tensor at the end of a step. Measured alone on one H200
  // (H200/memory_probe/history_e.jsonl.gz): on the last rank of every pipelined layout
  // probed, the reserve's peak is a segment taken for that tensor in the first step.
  Layout l;
  ASSERT_EQ(parse_layout("tp=2,pp=2,dp=1,mb=1", &l), "");
  double logits = 4096.0 * 128256;
  EXPECT_EQ(merged_outputs_segment(steps_task("l8b-L4-s4096-gb8"), l), 8 * 2 * logits);
  ASSERT_EQ(parse_layout("tp=1,pp=2,dp=1,mb=2", &l), "");  // two micro-batches: 4 B per logit
  EXPECT_EQ(merged_outputs_segment(steps_task("l8b-L4-s4096-gb4"), l), 0);  // fits a cached one
  ASSERT_EQ(parse_layout("tp=2,pp=1,dp=2,mb=1", &l), "");
  EXPECT_EQ(merged_outputs_segment(steps_task("l8b-L4-s4096-gb8"), l), 0);

  costmodel::CalibrationSet shipped =
      costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration");

  struct Probed {
    const char* layout;
    const char* task;
    double allocated, reserved;  // the last rank's peaks (H200/memory_probe/rows_e.csv)
  };

  const Probed rows[] = {
      {"tp=2,pp=2,dp=1,mb=1", "l8b-L4-s4096-gb8", 24.71e9, 32.40e9},
      {"tp=1,pp=4,dp=1,mb=1", "l8b-L4-s4096-gb8", 29.52e9, 32.49e9},
      {"tp=2,pp=2,dp=1,mb=1", "l8b-L8-s8192-gb8", 46.40e9, 64.79e9},
      {"tp=1,pp=4,dp=1,mb=1,vpp=2", "l8b-L8-s8192-gb8", 59.22e9, 71.11e9},
      {"tp=1,pp=4,dp=1,mb=1,recompute=full", "l8b-L8-s8192-gb8", 49.62e9, 61.55e9},
  };
  for (const Probed& r : rows) {
    ASSERT_EQ(parse_layout(r.layout, &l), "");
    MemoryUse u =
        training_memory(TrainContext{steps_cluster("h200x4"), steps_task(r.task), shipped}, l);
    EXPECT_NEAR(u.total() / r.allocated, 1.0, 0.05) << r.task << " " << r.layout;
    EXPECT_NEAR((u.total() + u.reserve) / r.reserved, 1.0, 0.05) << r.task << " " << r.layout;
  }
}

}  // namespace
}  // namespace yirage::planner
