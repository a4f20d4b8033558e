// Kernels for a plan's compound operations at small shapes: the µGraph searched on 16 rows of
// X and widened to all of them computes the program (full field and float checks at the wide
// shape), the backend follows the device's vendor, and what cannot be emitted says why.
#include "codegen/emit/compound_kernel.h"

#include "tests/unit/test_data.h"

#include "codegen/verify/verifier.h"
#include "costmodel/calibration.h"

#include <gtest/gtest.h>

namespace yirage::codegen {
namespace {

const devices::DeviceSpec& device(const std::string& name) {
  const devices::DeviceSpec* d = testing::bundled_registry().find(name);
  EXPECT_NE(d, nullptr) << name;
  return *d;
}

SuperoptimizeOptions small_search() {
  SuperoptimizeOptions o;
  o.limits.max_states = 20'000;
  return o;
}

void expect_computes(const std::string& op, const std::vector<std::int64_t>& dims) {
  const devices::DeviceSpec& h100 = device("H100-SXM");
  CompoundKernel k =
      compound_kernel(op, dims, h100, costmodel::GpuEfficiency{}, Backend::kCuda, small_search());
  ASSERT_TRUE(k.source.has_value()) << k.why;
  EXPECT_EQ(k.searched[0], dims[0] > 16 ? std::min<std::int64_t>(dims[0], 64) : dims[0]);
  EXPECT_TRUE(k.fused) << op << ": the search kept the library kernels";
  EXPECT_GT(k.priced_s, 0);
  EXPECT_LT(k.priced_s, k.library_s);
  std::string why;
  std::optional<KernelGraph> reference = compound_program(op, dims, &why);
  ASSERT_TRUE(reference.has_value()) << why;
  double err = 0;
  EXPECT_EQ(verify_full(*reference, k.graph, 77, 2, 1e-3, &err), "");
  EXPECT_NE(k.source->text.find(k.graph.name), std::string::npos);
}

TEST(CompoundKernel, RmsNormLinearWidenedAlongMAndKComputesTheProgram) {
  expect_computes("rmsnorm_linear", {128, 2048, 32});  // searched on 64 x 1024 x 32
}

TEST(CompoundKernel, GatedMlpWidenedAlongMAndNComputesTheProgram) {
  expect_computes("gated_mlp", {128, 64, 2048});  // searched on 64 x 64 x 1024
}

TEST(CompoundKernel, ASmallMIsSearchedWhole) {
  CompoundKernel k = compound_kernel("rmsnorm_linear", {12, 64, 32}, device("MI300X"),
                                     costmodel::GpuEfficiency{}, Backend::kHip, small_search());
  ASSERT_TRUE(k.source.has_value()) << k.why;
  EXPECT_EQ(k.searched, (std::vector<std::int64_t>{12, 64, 32}));
  EXPECT_EQ(k.source->file_name.substr(k.source->file_name.size() - 4), ".hip");
}

TEST(CompoundKernel, AWrongWideningIsCaughtByTheChecks) {
  std::string why;
  std::optional<KernelGraph> tile = compound_program("rmsnorm_linear", {16, 64, 32}, &why);
  ASSERT_TRUE(tile.has_value()) << why;
  SuperoptimizeResult r =
      superoptimize(*tile, device("H100-SXM"), costmodel::GpuEfficiency{}, small_search());
  ASSERT_FALSE(r.best_is_reference);
  std::optional<KernelGraph> wide = widen_rows(r.best.graph, 2, &why);
  ASSERT_TRUE(wide.has_value()) << why;
  std::optional<KernelGraph> reference = compound_program("rmsnorm_linear", {32, 64, 32}, &why);
  double err = 0;
  EXPECT_EQ(verify_full(*reference, *wide, 5, 1, 1e-3, &err), "");
  // Every row block saving to the same rows: the shapes no longer match the program's.
  for (BlockGraph& b : wide->blocks)
    for (BlockOutput& o : b.outputs)
      for (int& m : o.omap)
        if (m == 0)
          m = kReplicated;
  std::string bad = check_graph(*wide, nullptr);
  if (bad.empty())
    bad = verify_full(*reference, *wide, 5, 1, 1e-3, &err);
  EXPECT_NE(bad, "");
}

TEST(CompoundKernel, TheBackendFollowsTheDevice) {
  EXPECT_EQ(backend_for(device("H100-SXM")), Backend::kCuda);
  EXPECT_EQ(backend_for(device("MI300X")), Backend::kHip);
  EXPECT_EQ(backend_for(device("Xeon-8480+")), Backend::kCpu);
  EXPECT_EQ(backend_for(device("Ascend-910B")), std::nullopt);
}

TEST(CompoundKernel, AnOperationWithoutAProgramSaysSo) {
  std::string why;
  EXPECT_FALSE(compound_program("swiglu_down", {16, 64, 32}, &why).has_value());
  EXPECT_NE(why.find("no tensor program is bundled for swiglu_down"), std::string::npos) << why;
}

}  // namespace
}  // namespace yirage::codegen
