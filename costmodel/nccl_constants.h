// The constants of NCCL's own tuning model (src/graph/tuning.cc and src/graph/topo.h of
// NVIDIA/nccl at commit 5067397c, June 2026): base and per-hop latencies per algorithm and
// protocol, per-link NVLink bandwidths and the protocol bandwidth caps. NCCL uses them to
// choose the algorithm and protocol it runs, so a model built on them prices collectives
// the way the library itself sees them.
#pragma once

#include <array>

namespace yirage::costmodel {

enum class Protocol { kLL, kLL128, kSimple };
inline constexpr std::array kProtocols = {Protocol::kLL, Protocol::kLL128, Protocol::kSimple};

/// The hardware a hop crosses, as NCCL classifies it.
enum class Hop { kNvlink, kPci, kNet };

/// GPU generations NCCL distinguishes in its tables (compute capability 7, 8, 9, 10).
enum class GpuGeneration { kVolta, kAmpere, kHopper, kBlackwell };

struct NcclConstants {
  /// baseLatencies[Ring|Tree][protocol], microseconds.
  static double base_latency_us(bool tree, Protocol p);
  /// hwLatencies[hop][Ring|Tree][protocol], microseconds per step.
  static double hop_latency_us(Hop hop, bool tree, Protocol p);
  /// NVLS (NVLink SHARP) latency: 25 us intra-node, +18 us when crossing the network.
  static double nvls_latency_us(bool multi_node);
  /// llMaxBws[generation][N1], GB/s: the cap of the LL protocol's bus bandwidth.
  static double ll_max_bw_gbs(GpuGeneration g);
  /// NVLink bandwidth NCCL assumes per link and direction (SMxx_NVLINK_BW), GB/s.
  static double nvlink_bw_per_link_gbs(GpuGeneration g);
  /// nvlsEfficiency[generation]: 0 where NVLS does not exist.
  static double nvls_efficiency(GpuGeneration g);
  /// PCI_BW (Gen3 x16) and NET_BW (100 Gb/s NIC) in GB/s, with their nominal rates, give
  /// NCCL's achievable fraction of a PCIe or network link.
  static constexpr double kPciBwGbs = 12.0;
  static constexpr double kPciGen3NominalGbs = 15.754;
  static constexpr double kNetBwGbs = 12.0;
  static constexpr double kNet100GNominalGbs = 12.5;
  /// treeCorrectionFactor[protocol][log2(bytes/64)] for tree all-reduce.
  static double tree_correction(Protocol p, double bytes);
};

}  // namespace yirage::costmodel
