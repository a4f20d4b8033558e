// Plan files: what --save-plan writes, --plan reads back.
#include "cli/plan_file.h"

#include "tests/unit/scratch_files.h"
#include "tests/unit/test_data.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace yirage::cli {
namespace {

TEST(PlanFile, WhatSavePlanWritesReadsBack) {
  devices::ClusterSpec c = testing::example_cluster("h100-4x8-rail");
  devices::TaskSpec t = testing::example_task("llama3-70b-train");
  const std::string layout = "tp=8,pp=4,dp=1,mb=1,recompute=full,zero=1";
  nlohmann::ordered_json estimate = {{"step_s", 12.5}, {"layout", {{"text", layout}}}};
  std::filesystem::path dir = testing::scratch_dir("plan_file");
  std::filesystem::path path = dir / "plan.yaml";
  {
    std::ofstream out(path);
    out << plan_file_yaml(c, t, layout, estimate);
  }
  PlanFile p = read_plan_file(path.string(), c, t);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(p.cluster, c.name);
  EXPECT_EQ(p.task, t.name);
  EXPECT_EQ(p.mode, "train");
  EXPECT_EQ(p.layout, layout);
}

}  // namespace
}  // namespace yirage::cli
