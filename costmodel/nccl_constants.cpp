#include "costmodel/nccl_constants.h"

#include <cmath>

namespace yirage::costmodel {
namespace {

int index(Protocol p) {
  return static_cast<int>(p);
}

}  // namespace

double NcclConstants::base_latency_us(bool tree, Protocol p) {
  // tuning.cc ncclTunerConstantsDefaults.baseLatencies: Tree {6.8, 14.0, 8.4},
  // Ring {6.6, 14.0, 8.4} (LL, LL128, Simple).
  static constexpr std::array<double, 3> kTree = {6.8, 14.0, 8.4};
  static constexpr std::array<double, 3> kRing = {6.6, 14.0, 8.4};
  return tree ? kTree[index(p)] : kRing[index(p)];
}

double NcclConstants::hop_latency_us(Hop hop, bool tree, Protocol p) {
  // tuning.cc hwLatencies: NVLINK Tree {.6, 1.25, 4.0} Ring {.6, 1.9, 3.4};
  // PCI Tree {1.0, 1.9, 4.0} Ring {1.0, 2.5, 5.7}; NET Tree {5.0, 8.5, 14} Ring {2.7, 4.0, 14}.
  static constexpr std::array<std::array<double, 3>, 6> kTable = {{
      {0.6, 1.25, 4.0},
      {0.6, 1.9, 3.4},
      {1.0, 1.9, 4.0},
      {1.0, 2.5, 5.7},
      {5.0, 8.5, 14.0},
      {2.7, 4.0, 14.0},
  }};
  int row = static_cast<int>(hop) * 2 + (tree ? 0 : 1);
  return kTable[static_cast<std::size_t>(row)][static_cast<std::size_t>(index(p))];
}

double NcclConstants::nvls_latency_us(bool multi_node) {
  // tuning.cc hwLatencies[NVLINK][NVLS][Simple] = 25, [NET][NVLS][Simple] = 18.
  return multi_node ? 25.0 + 18.0 : 25.0;
}

double NcclConstants::ll_max_bw_gbs(GpuGeneration g) {
  // tuning.cc llMaxBws, single-node column: Volta 39.0, Ampere 87.7, Hopper 141.0,
  // Blackwell 282.0.
  static constexpr std::array<double, 4> kBw = {39.0, 87.7, 141.0, 282.0};
  return kBw[static_cast<std::size_t>(g)];
}

double NcclConstants::nvlink_bw_per_link_gbs(GpuGeneration g) {
  // topo.h: SM70_NVLINK_BW 20.0, SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1.
  static constexpr std::array<double, 4> kBw = {20.0, 20.0, 20.6, 40.1};
  return kBw[static_cast<std::size_t>(g)];
}

double NcclConstants::nvls_efficiency(GpuGeneration g) {
  // tuning.cc nvlsEfficiency: Volta 0, Ampere 0, Hopper 0.85, Blackwell 0.74.
  static constexpr std::array<double, 4> kEff = {0.0, 0.0, 0.85, 0.74};
  return kEff[static_cast<std::size_t>(g)];
}

double NcclConstants::tree_correction(Protocol p, double bytes) {
  // tuning.cc treeCorrectionFactor, indexed by log2(bytes / 64) for 64 B .. 256 MiB.
  static constexpr std::array<std::array<double, 24>, 3> kFactor = {{
      {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
       .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
      {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
       .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
       .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
  }};
  if (bytes < 64)
    return 1.0;
  auto log_size = static_cast<int>(std::floor(std::log2(bytes / 64)));
  if (log_size >= 23)
    return 1.0;
  return kFactor[static_cast<std::size_t>(index(p))][static_cast<std::size_t>(log_size)];
}

}  // namespace yirage::costmodel
