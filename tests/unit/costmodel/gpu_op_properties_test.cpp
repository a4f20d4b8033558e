// Properties of the GPU operation model over generated shapes (parametrised GoogleTest: each
// seed of a std::mt19937_64 draws one shape per operation, priced on every bundled device):
// every estimate is positive and finite; more memory bandwidth or more peak never makes an
// operation slower; a fused compound operation that fits on chip is never priced above its
// unfused kernels.
#include "costmodel/gpu_op.h"
#include "devices/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace yirage::costmodel {
namespace {

const devices::DeviceRegistry& registry() {
  static const devices::DeviceRegistry r = devices::DeviceRegistry::load_bundled();
  return r;
}

/// A dimension from 1 to 2^max_log2, log-uniform, odd about one time in four.
std::int64_t dim(std::mt19937_64& rng, int max_log2 = 14) {
  std::int64_t v = std::int64_t{1} << std::uniform_int_distribution<int>(0, max_log2)(rng);
  if (v > 2 && std::uniform_int_distribution<int>(0, 3)(rng) == 0)
    v -= 1;
  return v;
}

std::string join(const std::vector<std::int64_t>& dims) {
  std::string s;
  for (std::int64_t d : dims)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

/// A random legal shape of `op`.
OpShape random_shape(std::mt19937_64& rng, const GpuOpInfo& info) {
  std::vector<std::int64_t> dims;
  switch (info.op) {
    case GpuOp::kAttention: {
      std::int64_t kv = dim(rng, 3);
      std::int64_t length = dim(rng, 14);
      bool decode = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
      dims = {dim(rng, 5), kv * dim(rng, 3), kv, decode ? 1 : length, length, 64 * dim(rng, 1)};
      break;
    }
    case GpuOp::kElementwise:
    case GpuOp::kCopy:
    case GpuOp::kStrided:
    case GpuOp::kStridedBinary:
    case GpuOp::kCat:
    case GpuOp::kWiden:
    case GpuOp::kAccumulate:
      dims = {dim(rng, 26)};
      break;
    case GpuOp::kRmsNorm:
    case GpuOp::kLayerNorm:
    case GpuOp::kRmsNormBackward:
    case GpuOp::kLayerNormBackward:
    case GpuOp::kQuantize:
    case GpuOp::kSoftmax:
    case GpuOp::kSoftmaxBackward:
    case GpuOp::kColumnSum:
      dims = {dim(rng), dim(rng)};
      break;
    case GpuOp::kLoraLinear:
      dims = {dim(rng), dim(rng), dim(rng), dim(rng, 6)};
      break;
    default:
      dims = {dim(rng), dim(rng), dim(rng)};
  }
  OpShape s;
  std::string error = parse_op_shape(info, join(dims), &s);
  EXPECT_EQ(error, "") << info.name << " " << join(dims);
  s.causal = info.op == GpuOp::kAttention && std::uniform_int_distribution<int>(0, 1)(rng) == 1;
  return s;
}

/// The same device with every bandwidth of its memory hierarchy times `k`.
devices::DeviceSpec more_bandwidth(devices::DeviceSpec d, double k) {
  d.memory_bandwidth.value.value *= k;
  if (d.onchip.l2_bandwidth)
    d.onchip.l2_bandwidth->value.value *= k;
  return d;
}

/// The same device with every peak rate times `k`.
devices::DeviceSpec more_peak(devices::DeviceSpec d, double k) {
  for (auto& [dtype, rate] : d.peak)
    rate.value.value *= k;
  return d;
}

double seconds(const devices::DeviceSpec& d,
               const GpuOpInfo& info,
               const OpShape& s,
               bool fused,
               std::string* why) {
  auto e = estimate_gpu_op(d, devices::DType::kBf16, GpuEfficiency{}, info, s, fused, why);
  return e ? e->time.value : -1;
}

class GpuOpProperties : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(GpuOpProperties, PositiveFiniteMonotoneAndFusionNeverSlower) {
  std::mt19937_64 rng(GetParam());
  double k = std::uniform_real_distribution<double>(1.0, 8.0)(rng);
  for (const GpuOpInfo& info : gpu_ops()) {
    OpShape s = random_shape(rng, info);
    std::string where = info.name + " " + join(s.dims) + (s.causal ? " causal" : "");
    for (const devices::DeviceSpec& d : registry().devices()) {
      SCOPED_TRACE(d.name + " " + where + " k=" + std::to_string(k));
      std::string why;
      double unfused = seconds(d, info, s, false, &why);
      ASSERT_TRUE(std::isfinite(unfused) && unfused > 0) << unfused << " " << why;
      EXPECT_LE(seconds(more_bandwidth(d, k), info, s, false, &why), unfused * (1 + 1e-9));
      EXPECT_LE(seconds(more_peak(d, k), info, s, false, &why), unfused * (1 + 1e-9));
      if (!info.compound)
        continue;
      double fused = seconds(d, info, s, true, &why);
      if (fused < 0)
        continue;  // does not fit on chip (why says so)
      EXPECT_TRUE(std::isfinite(fused) && fused > 0) << fused;
      EXPECT_LE(fused, unfused * (1 + 1e-9)) << "fused " << fused << " s, unfused " << unfused;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, GpuOpProperties, ::testing::Range<std::uint64_t>(1, 41));

}  // namespace
}  // namespace yirage::costmodel
