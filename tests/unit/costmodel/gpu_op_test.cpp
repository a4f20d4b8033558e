#include "costmodel/gpu_op.h"

#include "devices/registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace yirage::costmodel {
namespace {

const devices::DeviceRegistry& registry() {
  static const devices::DeviceRegistry r = devices::DeviceRegistry::load_bundled();
  return r;
}

const devices::DeviceSpec& h100() {
  return *registry().find("H100-SXM");
}

OpEstimate run(const devices::DeviceSpec& d,
               const std::string& op,
               const std::string& shape,
               bool fused = true) {
  const GpuOpInfo* info = find_gpu_op(op);
  EXPECT_NE(info, nullptr) << op;
  OpShape s;
  EXPECT_EQ(parse_op_shape(*info, shape, &s), "");
  std::string why;
  auto e = estimate_gpu_op(d, devices::DType::kBf16, GpuEfficiency{}, *info, s, fused, &why);
  EXPECT_TRUE(e) << why;
  return e ? *e : OpEstimate{};
}

TEST(GpuOp, LargeGemmIsComputeBoundNearPeak) {
  OpEstimate e = run(h100(), "gemm", "8192x8192x8192");
  double ideal = 2.0 * 8192 * 8192 * 8192 / 989.4e12;
  EXPECT_GE(e.time.value, ideal);
  EXPECT_LT(e.time.value, 1.1 * ideal);
  EXPECT_EQ(e.kernels[0].bound(), "compute");
}

TEST(GpuOp, GemvIsBoundByReadingTheWeights) {
  OpEstimate e = run(h100(), "gemm", "1x8192x8192");
  double weights = 8192.0 * 8192 * 2 / 3.35e12;
  EXPECT_EQ(e.kernels[0].bound(), "memory");
  EXPECT_GE(e.time.value, weights);
  EXPECT_LT(e.time.value, 1.05 * weights);
}

TEST(GpuOp, WaveQuantizationCostsAPartialWave) {
  // 133 tiles of 128x128 on 132 SMs (two blocks each fit): one wave either way; 265 tiles
  // need a second wave.
  OpEstimate one = run(h100(), "gemm", "128x33792x8192");
  OpEstimate two = run(h100(), "gemm", "128x33920x8192");
  EXPECT_GT(two.kernels[0].waves, one.kernels[0].waves);
}

TEST(GpuOp, DecodeAttentionStreamsTheKvCache) {
  OpEstimate e = run(h100(), "attention", "32x64x8x1x8192x128");
  double kv = 2.0 * 32 * 8 * 8192 * 128 * 2 / 3.35e12;
  EXPECT_EQ(e.kernels[0].bound(), "memory");
  EXPECT_NEAR(e.time.value / kv, 1.0, 0.05);
}

TEST(GpuOp, FusedIsNeverSlowerThanUnfused) {
  for (const devices::DeviceSpec& d : registry().devices()) {
    for (const auto& [op, shape] :
         std::vector<std::pair<std::string, std::string>>{{"rmsnorm_linear", "16x4096x6144"},
                                                          {"rmsnorm_linear", "8192x4096x4096"},
                                                          {"gated_mlp", "4096x4096x14336"},
                                                          {"gemm_softmax", "4096x1024x128"},
                                                          {"gemm_layernorm", "4096x1024x1024"},
                                                          {"lora_linear", "2048x4096x4096x16"}}) {
      const GpuOpInfo& info = *find_gpu_op(op);
      OpShape s;
      ASSERT_EQ(parse_op_shape(info, shape, &s), "");
      std::string why;
      auto f = estimate_gpu_op(d, devices::DType::kBf16, GpuEfficiency{}, info, s, true, &why);
      auto u = estimate_gpu_op(d, devices::DType::kBf16, GpuEfficiency{}, info, s, false, &why);
      ASSERT_TRUE(u);
      if (f) {
        EXPECT_LE(f->time.value, u->time.value * (1 + 1e-9)) << d.name << " " << op;
      }
    }
  }
}

TEST(GpuOp, SoftmaxOverRowsTooLongForChipDoesNotFuse) {
  const GpuOpInfo& info = *find_gpu_op("gemm_softmax");
  OpShape s;
  ASSERT_EQ(parse_op_shape(info, "4096x131072x128", &s), "");
  std::string why;
  EXPECT_FALSE(
      estimate_gpu_op(h100(), devices::DType::kBf16, GpuEfficiency{}, info, s, true, &why));
  EXPECT_NE(why.find("cannot hold 64 rows of 131072"), std::string::npos) << why;
}

TEST(GpuOp, EveryOpOnEveryDeviceIsPositiveAndFinite) {
  const std::vector<std::pair<std::string, std::string>> shapes = {
      {"gemm", "2x512x1024x2048"},
      {"attention", "4x32x8x2048x2048x128"},
      {"rmsnorm", "4096x8192"},
      {"layernorm", "4096x8192"},
      {"rmsnorm_backward", "4096x8192"},
      {"layernorm_backward", "4096x8192"},
      {"softmax", "4096x8192"},
      {"elementwise", "16777216"},
      {"copy", "16777216"},
      {"quantize", "4096x8192"},
      {"strided", "16777216"},
      {"strided_binary", "16777216"},
      {"cat", "16777216"},
      {"widen", "16777216"},
      {"accumulate", "16777216"},
      {"column_sum", "4096x10240"},
      {"softmax_backward", "4096x8192"},
      {"rmsnorm_linear", "64x4096x4096"},
      {"gated_mlp", "64x4096x14336"},
      {"gemm_softmax", "256x256x128"},
      {"gemm_layernorm", "256x1024x256"},
      {"lora_linear", "64x4096x4096x8"}};
  ASSERT_EQ(shapes.size(), gpu_ops().size());
  for (const devices::DeviceSpec& d : registry().devices()) {
    for (const auto& [op, shape] : shapes) {
      OpEstimate e = run(d, op, shape, false);
      EXPECT_TRUE(std::isfinite(e.time.value) && e.time.value > 0) << d.name << " " << op;
    }
  }
}

TEST(GpuOp, ShapesAreChecked) {
  OpShape s;
  EXPECT_EQ(parse_op_shape(*find_gpu_op("gemm"), "2x3", &s),
            "gemm takes a shape MxNxK or BxMxNxK, got '2x3'");
  EXPECT_EQ(parse_op_shape(*find_gpu_op("rmsnorm"), "4x-1", &s),
            "'-1' in shape '4x-1' is not a positive whole number");
  EXPECT_EQ(parse_op_shape(*find_gpu_op("attention"), "1x32x5x1x128x128", &s),
            "attention heads (32) must be a multiple of KV heads (5)");
}

// The data rows of a softmax profile (H200/<file>), each split at its commas, with the row
// length of its "<rows>x<length>" shape.
struct ProfileRow {
  std::vector<std::string> cell;
  std::int64_t cols = 0;
  std::string line;
};

std::vector<ProfileRow> profile_rows(const std::string& file) {
  std::ifstream in(devices::data_dir() / "benchmarks" / "H200" / file);
  EXPECT_TRUE(in) << file;
  std::vector<ProfileRow> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line.rfind("shape,", 0) == 0)
      continue;
    ProfileRow row;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');)
      row.cell.push_back(c);
    row.cols = std::stoll(row.cell[0].substr(row.cell[0].find('x') + 1));
    row.line = line;
    out.push_back(std::move(row));
  }
  return out;
}

// softmax_kernel names the kernel PyTorch launched for every (length, dtype) profiled on H200
// (bench/softmax_probe.py's softmax_kernels.csv: forward and backward kernel names).
TEST(GpuOp, SoftmaxKernelIsTheOneProfiled) {
  const std::map<std::string, std::string> kinds = {
      {"softmax_warp_forward", "softmax_warp"},
      {"cunn_SoftMaxForwardReg", "softmax_reg"},
      {"cunn_SoftMaxForwardSmem", "softmax_smem"},
      {"cunn_SoftMaxForward", "softmax_plain"},
      {"softmax_warp_backward", "softmax_backward_warp"},
      {"cunn_SoftMaxBackwardSmem", "softmax_backward_smem"},
      {"cunn_SoftMaxBackward", "softmax_backward_plain"}};
  int checked = 0;
  for (const auto& [cell, cols, line] : profile_rows("softmax_kernels.csv")) {
    ASSERT_EQ(cell.size(), 6U) << line;
    double bytes = cell[1] == "fp32" ? 4 : 2;
    // The last kernel of each column is the softmax's (the backward's first fills its output).
    auto last = [](const std::string& names) {
      return names.substr(names.rfind(' ') + 1);
    };
    // The forward's longer instantiations are kinds of their own
    // (SoftmaxKernelIsWideWhereAUnitHoldsFewerBlocks).
    std::string forward = softmax_kernel(cols, bytes, false);
    if (std::size_t wide = forward.find("_wide"); wide != std::string::npos)
      forward.erase(wide);
    EXPECT_EQ(forward, kinds.at(last(" " + cell[4]))) << line;
    EXPECT_EQ(softmax_kernel(cols, bytes, true), kinds.at(last(" " + cell[5]))) << line;
    ++checked;
  }
  EXPECT_GE(checked, 60);
}

// softmax_kernel names a forward kernel "_wide" exactly where the instantiation PyTorch
// launched holds fewer blocks on a unit, for its registers, than the same kernel at shorter
// rows (bench/softmax_occupancy.py's softmax_occupancy.csv, profiled on H200).
TEST(GpuOp, SoftmaxKernelIsWideWhereAUnitHoldsFewerBlocks) {
  std::map<std::string, int> most;  // the blocks a unit holds of each kernel at its shortest rows
  int checked = 0;
  int wide = 0;
  for (const auto& [cell, cols, line] : profile_rows("softmax_occupancy.csv")) {
    ASSERT_EQ(cell.size(), 10U) << line;
    std::string kernel = cell[2].substr(0, cell[2].find('<')) + " " + cell[1];
    int blocks = std::stoi(cell[5]);
    most.emplace(kernel, blocks);
    bool fewer = blocks < most.at(kernel);
    std::string kind = softmax_kernel(cols, cell[1] == "fp32" ? 4 : 2, false);
    EXPECT_EQ(kind.find("_wide") != std::string::npos, fewer) << line;
    wide += fewer ? 1 : 0;
    ++checked;
  }
  EXPECT_GE(checked, 40);
  EXPECT_GE(wide, 10);
}

// Without a fit of its own, a softmax's backward is priced at kSoftmaxBackwardRatio of the
// forward; with one, by its own kernel's fit.
TEST(GpuOp, SoftmaxBackwardHasItsOwnKernelWhereFitted) {
  const GpuOpInfo& fwd = *find_gpu_op("softmax");
  const GpuOpInfo& bwd = *find_gpu_op("softmax_backward");
  OpShape s{{4096, 128256}, false};
  std::string why;
  GpuEfficiency plain;
  double f = estimate_gpu_op(h100(), devices::DType::kFp32, plain, fwd, s, false, &why)->time.value;
  double b = estimate_gpu_op(h100(), devices::DType::kFp32, plain, bwd, s, false, &why)->time.value;
  EXPECT_NEAR(b, kSoftmaxBackwardRatio * f, 1e-9 * b);
  GpuEfficiency fitted;
  fitted.stream["softmax_backward_plain"] = {2, devices::Seconds{5e-6}, devices::Seconds{}};
  double own =
      estimate_gpu_op(h100(), devices::DType::kFp32, fitted, bwd, s, false, &why)->time.value;
  double bytes = 3.0 * 4096 * 128256 * 4;  // the output and the gradient read, one written
  EXPECT_NEAR(own, 5e-6 + 2 * bytes / (h100().memory_bandwidth.value.value * fitted.memory),
              1e-6 * own);
}

// The plain kernel's later passes read the row again from memory once the rows in flight no
// longer fit in three quarters of L2 (132 units x 2 blocks on H100: 264 rows).
TEST(GpuOp, PlainSoftmaxRereadsRowsThatOutgrowL2) {
  const GpuOpInfo& fwd = *find_gpu_op("softmax");
  GpuEfficiency fitted;
  fitted.stream["softmax_plain"] = {1, devices::Seconds{}, devices::Seconds{}};
  std::string why;
  auto bytes = [&](std::int64_t cols) {
    OpShape s{{4096, cols}, false};
    return estimate_gpu_op(h100(), devices::DType::kFp32, fitted, fwd, s, false, &why)->hbm_bytes /
           (4096.0 * static_cast<double>(cols) * 4);
  };
  EXPECT_DOUBLE_EQ(bytes(32000), 2);  // 264 rows of 125 KiB: 34 MB of 50 MiB
  EXPECT_DOUBLE_EQ(bytes(50304), 4);  // 53 MB: read three times, written once
}

// RMSNorm's second pass misses L2 by the share of it that its rows in flight fill (132 units
// x 16 blocks of 128 threads on H100: 2,112 rows), all of it once they outgrow it.
TEST(GpuOp, RmsNormRereadsTheShareOfItsRowsThatL2CannotHold) {
  const GpuOpInfo& op = *find_gpu_op("rmsnorm");
  GpuEfficiency fitted;
  fitted.stream["rmsnorm"] = {1, devices::Seconds{}, devices::Seconds{}};
  std::string why;
  // The bytes moved over the row read once and written once (the weights left out).
  auto moved = [&](std::int64_t rows, std::int64_t cols) {
    OpShape s{{rows, cols}, false};
    double once = 2.0 * static_cast<double>(rows * cols) * 2;
    double bytes =
        estimate_gpu_op(h100(), devices::DType::kBf16, fitted, op, s, false, &why)->hbm_bytes;
    return (bytes - static_cast<double>(cols) * 2) / once;
  };
  double l2 = 50.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(moved(16, 4096), 1 + 16 * 8192 / l2 / 2);       // 16 rows of 8 KiB
  EXPECT_DOUBLE_EQ(moved(65536, 4096), 1 + 2112 * 8192 / l2 / 2);  // 17 MB in flight
  EXPECT_DOUBLE_EQ(moved(65536, 16384), 1.5);                      // 69 MB: read twice
}

// Without a fit of its own a norm's backward is kNormBackwardRatio times its forward; with one,
// its two kernels read the input and the gradient each, and write the input's gradient.
TEST(GpuOp, NormBackwardHasItsOwnKernelsWhereFitted) {
  const GpuOpInfo& fwd = *find_gpu_op("layernorm");
  const GpuOpInfo& bwd = *find_gpu_op("layernorm_backward");
  OpShape s{{4096, 8192}, false};
  std::string why;
  GpuEfficiency plain;
  double f = estimate_gpu_op(h100(), devices::DType::kBf16, plain, fwd, s, false, &why)->time.value;
  double b = estimate_gpu_op(h100(), devices::DType::kBf16, plain, bwd, s, false, &why)->time.value;
  EXPECT_NEAR(b, kNormBackwardRatio * f, 1e-9 * b);
  GpuEfficiency fitted;
  fitted.stream["layernorm_backward"] = {1, devices::Seconds{3e-6}, devices::Seconds{}};
  auto own = estimate_gpu_op(h100(), devices::DType::kBf16, fitted, bwd, s, false, &why);
  double bytes = 5.0 * 4096 * 8192 * 2 + 2 * 8192 * 2;  // 4 reads, a write, the weights
  EXPECT_DOUBLE_EQ(own->hbm_bytes, bytes);
  EXPECT_NEAR(own->time.value, 3e-6 + bytes / (h100().memory_bandwidth.value.value * fitted.memory),
              1e-6 * b);
}

}  // namespace
}  // namespace yirage::costmodel
