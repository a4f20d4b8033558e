// --export megatron: every flag is one Megatron-LM's arguments.py defines
// (tests/data/megatron_arguments.txt), for every layout kind the planner searches.
#include "cli/plan_export.h"

#include "tests/unit/test_data.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>

namespace yirage::cli {
namespace {

std::set<std::string> megatron_flags() {
  std::set<std::string> flags;
  std::ifstream in(YIRAGE_TEST_DATA_DIR "/megatron_arguments.txt");
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.front() != '#')
      flags.insert(line);
  }
  return flags;
}

TEST(PlanExport, EveryMegatronFlagIsOneArgumentsPyDefines) {
  const std::set<std::string> known = megatron_flags();
  ASSERT_GT(known.size(), 500u);
  const std::regex flag(R"((^|\s)(--[a-z0-9-]+))");
  std::size_t checked = 0;
  for (const char* task : {"llama3-70b-train", "mixtral-8x7b-train", "gpt3-175b-train"}) {
    devices::ClusterSpec c = testing::example_cluster("h100-128x8");
    devices::TaskSpec t = testing::example_task(task);
    for (const char* text : {"tp=8,pp=4,dp=32,mb=1,recompute=full,zero=1,vpp=2",
                             "tp=4,pp=8,dp=32,mb=2,recompute=selective,zero=3,cp=2,sp=off",
                             "tp=8,pp=1,dp=128,mb=1,recompute=none,zero=2,ep=8,offload=on"}) {
      planner::Layout l;
      ASSERT_EQ(planner::parse_layout(text, &l), "");
      std::string out = megatron_arguments(c, t, l);
      for (auto it = std::sregex_iterator(out.begin(), out.end(), flag);
           it != std::sregex_iterator(); ++it) {
        std::string f = (*it)[2];
        if (f == "--nnodes" || f == "--nproc-per-node")
          continue;  // torchrun's own
        EXPECT_EQ(known.count(f), 1u) << f << " in " << task << " " << text;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 150u);
}

TEST(PlanExport, TheLayoutIsWhatMegatronIsAskedFor) {
  devices::ClusterSpec c = testing::example_cluster("h100-128x8");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  planner::Layout l;
  ASSERT_EQ(planner::parse_layout("tp=8,pp=4,dp=32,mb=2,recompute=full,zero=1,vpp=5", &l), "");
  std::string out = megatron_arguments(c, t, l);
  for (const char* want :
       {"--nnodes 128 --nproc-per-node 8", "--tensor-model-parallel-size 8 \\",
        "--pipeline-model-parallel-size 4 \\", "--num-layers-per-virtual-pipeline-stage 4 \\",
        "--sequence-parallel \\", "--micro-batch-size 2 \\", "--global-batch-size 512 \\",
        "--recompute-granularity full \\", "--use-distributed-optimizer \\",
        "--num-query-groups 8 \\"}) {
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
  }
  // The plan prices the gradient all-reduce overlapped with the backward: Megatron-LM is asked
  // for it, unless the layout says otherwise.
  EXPECT_NE(out.find("--overlap-grad-reduce"), std::string::npos);
  l.dp_overlap = false;
  EXPECT_EQ(megatron_arguments(c, t, l).find("--overlap-grad-reduce"), std::string::npos);
  // Gradient-accumulation fusion is Megatron-LM's default; a layout priced without it says so.
  EXPECT_EQ(out.find("--no-gradient-accumulation-fusion"), std::string::npos);
  l.grad_fusion = false;
  EXPECT_NE(megatron_arguments(c, t, l).find("--no-gradient-accumulation-fusion"),
            std::string::npos);
  // Transformer Engine's layers are its default too; a layout priced on Megatron-Core's own
  // modules asks for them.
  EXPECT_EQ(out.find("--transformer-impl"), std::string::npos);
  l.te = false;
  EXPECT_NE(megatron_arguments(c, t, l).find("--transformer-impl local \\"), std::string::npos);
}

}  // namespace
}  // namespace yirage::cli
