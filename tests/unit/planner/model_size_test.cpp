#include "planner/workload/model_size.h"

#include "devices/model_loader.h"

#include <gtest/gtest.h>

#include <cmath>

namespace yirage::planner {
namespace {

const devices::ModelRegistry& models() {
  static const devices::ModelRegistry r = devices::ModelRegistry::load_bundled();
  return r;
}

// Published counts are matched within 1%, or within the rounding of a figure published to
// two significant digits ("37B" covers 36.5B to 37.5B), whichever is wider.
double tolerance(double published) {
  double half_unit = 0.5 * std::pow(10.0, std::floor(std::log10(published)) - 1);
  return std::max(0.01 * published, half_unit);
}

TEST(ModelSize, EveryPresetMatchesItsPublishedCount) {
  int checked = 0;
  for (const devices::ModelSpec& m : models().models()) {
    ASSERT_TRUE(m.published) << m.name << " has no published count to check against";
    ParameterCount c = count_parameters(m);
    EXPECT_NEAR(c.total, m.published->total, tolerance(m.published->total)) << m.name;
    if (m.published->active > 0) {
      double active = c.active - (m.published->active_excludes_embedding ? c.embedding : 0);
      EXPECT_NEAR(active, m.published->active, tolerance(m.published->active)) << m.name;
    }
    ++checked;
  }
  EXPECT_GE(checked, 9);
}

TEST(ModelSize, ExactCountsOfKnownArchitectures) {
  // Llama 3 8B: 8,030,261,248 parameters (safetensors metadata of meta-llama/Meta-Llama-3-8B).
  EXPECT_DOUBLE_EQ(count_parameters(*models().find("llama3-8b")).total, 8030261248.0);
  // Llama 2 70B: 68,976,648,192.
  EXPECT_DOUBLE_EQ(count_parameters(*models().find("llama2-70b")).total, 68976648192.0);
}

TEST(ModelSize, DenseModelsAreFullyActive) {
  ParameterCount c = count_parameters(*models().find("llama3-70b"));
  EXPECT_DOUBLE_EQ(c.total, c.active);
  ParameterCount moe = count_parameters(*models().find("mixtral-8x7b"));
  EXPECT_LT(moe.active, moe.total / 3);
}

TEST(ModelSize, FlopsPerTokenFollowTheSixNRule) {
  const devices::ModelSpec& m = *models().find("llama3-70b");
  double n = matmul_parameters(m);
  // At a short sequence the attention term is small: training is about 6N per token.
  EXPECT_NEAR(training_flops_per_token(m, 128) / (6 * n), 1.0, 0.01);
  // The attention term: 2 * layers * (seq / 2) * heads * (2 * head_dim) per forward token,
  // each token attending to half the sequence on average under the causal mask.
  double attention = 2.0 * 80 * 4096 * 64 * 256;
  EXPECT_DOUBLE_EQ(forward_flops_per_token(m, 8192), 2 * n + attention);
}

}  // namespace
}  // namespace yirage::planner
