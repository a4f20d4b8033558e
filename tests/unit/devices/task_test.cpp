#include "devices/task_loader.h"

#include <gtest/gtest.h>

namespace yirage::devices {
namespace {

const ModelRegistry& models() {
  static const ModelRegistry r = ModelRegistry::load_bundled();
  return r;
}

TEST(Task, PresetsResolve) {
  TaskSpec t = parse_task("t.yaml",
                          "name: t\nmodel: Llama3-70B\nmode: train\nsequence_length: 4096\n"
                          "global_batch: 256\n",
                          models());
  EXPECT_EQ(t.model_preset, "llama3-70b");
  EXPECT_EQ(t.model.layers, 80);
  EXPECT_EQ(t.precision, DType::kBf16);
  EXPECT_EQ(t.optimizer, Optimizer::kAdam);
  EXPECT_EQ(t.model_loc, (SourceLoc{"t.yaml", 2, 8}));
}

TEST(Task, InlineModelAndServing) {
  TaskSpec t = parse_task("t.yaml",
                          "name: s\n"
                          "model: {name: tiny, layers: 2, hidden: 256, heads: 4, ffn: 1024,\n"
                          "        vocab: 1000}\n"
                          "mode: serve\n"
                          "serve: {request_rate: 5 req/s, prompt_length: 100, output_length: 20}\n"
                          "objective: {minimize: cost, tpot: 50 ms}\n",
                          models());
  EXPECT_TRUE(t.model_preset.empty());
  EXPECT_EQ(t.model.kv_heads, 4);
  EXPECT_EQ(t.model.head_dim, 64);
  ASSERT_TRUE(t.serve);
  EXPECT_DOUBLE_EQ(t.serve->request_rate.value, 5);
  EXPECT_EQ(t.objective.minimize, Minimize::kCost);
  EXPECT_DOUBLE_EQ(t.objective.tpot->value, 0.05);
}

TEST(Task, BundledModelsLoad) {
  EXPECT_GE(models().models().size(), 9u);
}

TEST(Task, FrameworkDefaultsToMegatronAndIsChecked) {
  std::string base =
      "name: t\nmodel: llama3-8b\nmode: train\nsequence_length: 4096\nglobal_batch: 8\n";
  EXPECT_EQ(parse_task("t.yaml", base, models()).framework, Framework::kMegatron);
  EXPECT_EQ(parse_task("t.yaml", base + "framework: pytorch\n", models()).framework,
            Framework::kPytorch);
  try {
    parse_task("t.yaml", base + "framework: jax\n", models());
    FAIL() << "an unknown framework loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(e.items().front().loc, (SourceLoc{"t.yaml", 6, 12}));
    EXPECT_NE(e.items().front().message.find("megatron"), std::string::npos)
        << e.items().front().message;
  }
}

}  // namespace
}  // namespace yirage::devices
