// The architecture of one accelerator as the COMET model sees it: memory and compute types,
// a tree of levels rooted at DRAM (each an array of instances on a mesh), and the network of
// every parent-child edge and of every level's own instances (the link network that explicit
// collectives run on). Read from the reference implementation's arch YAML format.
// Source: COMET (arXiv 2509.00599), comet-model.md §2.1.1 and §3.
#pragma once

#include "devices/support/diagnostics.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace yirage::costmodel::comet {

using devices::SourceLoc;

/// A network: a parent-child edge, or the link network among one level's instances.
struct NetworkSpec {
  std::int64_t mesh_x = 1;             // instances along X (meshX)
  std::int64_t mesh_y = 1;             // instances along Y (meshY)
  bool has_mesh = false;               // meshX was given
  std::int64_t port_bw = 0;            // bytes/cycle per port (bw)
  std::int64_t hop_latency = 1;        // cycles per hop (t_RC+t_VA+t_SA+t_ST+t_L)
  std::int64_t queuing_delay = 0;      // cycles per flit (t_enq)
  std::int64_t channel_width = 32;     // bits/cycle (number of 1-bit links)
  std::int64_t reduction_latency = 0;  // cycles per hop of in-network reduction
  bool broadcast = false;              // broadcast_support
  bool reduction = false;              // reduction_support
  SourceLoc loc;

  bool operator==(const NetworkSpec&) const = default;
};

/// A memory type (MemoryTypes entry). Bandwidths in bytes/cycle, energies in pJ per access of
/// one row of `width` bytes.
struct MemoryType {
  std::string name;
  SourceLoc loc;
  std::int64_t width = 0;  // bytes per row
  std::int64_t depth = 0;  // rows
  std::int64_t ports = 1;
  bool double_buffered = false;
  bool reduction = false;
  bool ports_shared = false;  // parent_child_ports_shared
  bool dma_contiguous = false;
  double reduction_cost = 1;  // cycles per reduced element write, relative
  double parent_read_bw = 0, parent_write_bw = 0;
  double child_read_bw = 0, child_write_bw = 0;
  double link_read_bw = 0, link_write_bw = 0;
  double parent_read_energy = 0, parent_write_energy = 0;
  double child_read_energy = 0, child_write_energy = 0;

  std::int64_t capacity() const { return width * depth; }  // bytes per instance

  bool operator==(const MemoryType&) const = default;
};

enum class ComputeClass { kMac, kSimd };

/// A compute type (ComputeTiles entry): a systolic array (mac) or a vector unit (simd).
struct ComputeType {
  std::string name;
  SourceLoc loc;
  ComputeClass cls = ComputeClass::kMac;
  std::int64_t width = 0;  // computeWidth: bits (mac) or lanes (simd)
  std::int64_t op_count = 0;
  std::int64_t latency = 1;
  std::int64_t startup = 0;
  std::int64_t capacity = 0;
  std::int64_t array_rows = 1, array_cols = 1;    // R, C of one sub-array
  std::int64_t num_sa_rows = 1, num_sa_cols = 1;  // n_r, n_c sub-arrays
  double compute_energy = 1;

  bool operator==(const ComputeType&) const = default;
};

/// One level of the hierarchy. A compute level named several times (under IB, WB and OB) is
/// one level with several parents.
struct Level {
  std::string name;
  SourceLoc loc;
  std::string type;
  bool is_compute = false;
  std::int64_t instances = 1;  // per parent instance ("GB[0..3]" is 4)
  int memory = -1;             // index into ArchSpec::memories
  int compute = -1;            // index into ArchSpec::computes
  std::vector<int> parents;    // indices into ArchSpec::levels
  std::optional<NetworkSpec> link_network;

  bool operator==(const Level&) const = default;
};

enum class EdgeKind { kConnect, kFill, kDrain };

/// A parent-child edge with its network.
struct Edge {
  int parent = -1;
  int child = -1;
  EdgeKind kind = EdgeKind::kConnect;
  NetworkSpec network;

  bool operator==(const Edge&) const = default;
};

/// The whole architecture. Levels are numbered in the order the reference parses them
/// (depth first: connects, then drains, then fills), which fixes the order of report rows.
struct ArchSpec {
  std::string path;
  std::vector<MemoryType> memories;
  std::vector<ComputeType> computes;
  std::vector<Level> levels;
  std::vector<Edge> edges;

  /// The level named `name`, or -1.
  int find_level(const std::string& name) const;
  /// The network from `parent` to `child`, or null.
  const NetworkSpec* network(int parent, int child) const;
  const MemoryType& memory_of(int level) const;
  const ComputeType& compute_of(int level) const;
  /// Instances of `level` in the whole chip (product along the widest parent chain).
  std::int64_t total_instances(int level) const;

  bool operator==(const ArchSpec&) const = default;
};

/// Reads an architecture file; problems are collected and thrown as one devices::InputError.
ArchSpec load_arch(const std::filesystem::path& path);
/// Parses `text` as the contents of `path` (for tests).
ArchSpec parse_arch(const std::string& path, const std::string& text);

}  // namespace yirage::costmodel::comet
