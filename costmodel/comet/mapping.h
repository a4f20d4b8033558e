// A COMET mapping: a tree of data-movement tiles (temporal or spatial loops that move tensors
// from a target memory to a child level), operations (the compute primitive), explicit
// collectives between the instances of one level, and bindings that schedule siblings.
// Symbolic factors are substituted from the constants table when the file is read.
// Source: COMET (arXiv 2509.00599), comet-model.md §2.1.3.
#pragma once

#include "costmodel/comet/arch.h"
#include "costmodel/comet/problem.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace yirage::costmodel::comet {

enum class NodeKind { kTile, kOperation, kCollective, kBinding };
enum class LoopType { kTemporal, kSpatial };
enum class Binding { kSequential, kPipeline, kParallel, kSharing };
enum class CollectiveType { kBroadcast, kReduction, kGather, kScatter, kAllGather, kAllReduce };
enum class ReduceOp { kNone, kAdd, kMax, kMult };
/// How an explicit collective runs on the mesh: the reference's row-then-column phases (E7,
/// E8), or a ring of neighbour steps (all-reduce and all-gather only; the others stay mesh).
enum class CollectiveAlgorithm { kMesh, kRing };

/// Per dimension, the loop factor of one tensor entry (one row: temporal X, or spatial X / Y).
using Factors = std::map<std::string, std::int64_t>;

/// One tensor instance moved by a tile node; `tag` names the operation it serves.
struct TensorEntry {
  std::string tensor;
  std::string tag;
  int target = -1;             // source memory level
  int child = -1;              // destination level (memory or compute)
  std::int64_t precision = 8;  // bits per element
  bool rmw = false;
  bool wb_output = false;
  std::vector<Factors> rows;  // 1 row (temporal) or 2 rows (spatial X, then Y)

  /// Product of this entry's factors for `dim` over all rows.
  std::int64_t factor(const std::string& dim) const;
  /// Product of all factors (iterations, or spatial instances).
  std::int64_t volume() const;

  bool operator==(const TensorEntry&) const = default;
};

/// The compute primitive of an Operation node.
struct OperationInfo {
  std::string type;   // GEMM, rowmax, add, exp, rowsum, div, mult, sqrt, max
  std::string name;   // the problem operation
  Factors primitive;  // per dimension, in problem dimension order
  std::vector<std::string> reduction_dims;
  std::vector<std::int64_t> reduction_factors;

  bool operator==(const OperationInfo&) const = default;
};

struct CollectiveInfo {
  CollectiveType type = CollectiveType::kAllReduce;
  ReduceOp op = ReduceOp::kNone;
  std::string dimension;
  std::string in_tensor, out_tensor, tag;
  std::int64_t precision = 8;
  int level = -1;  // target = child: the level whose instances exchange data
  std::vector<int> src, dest;
  std::int64_t spatial_factor = 0;                             // 0: the number of source instances
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kMesh;  // `algorithm: mesh | ring`

  bool operator==(const CollectiveInfo&) const = default;
};

struct MappingNode {
  NodeKind kind = NodeKind::kTile;
  SourceLoc loc;
  int parent = -1;
  std::vector<int> children;  // in file order, bindings included
  // kTile
  LoopType loop = LoopType::kTemporal;
  std::vector<TensorEntry> entries;
  std::vector<std::string> permutation;  // dimensions, inner to outer
  // kOperation
  OperationInfo op;
  // kCollective
  CollectiveInfo collective;
  // kBinding
  Binding binding = Binding::kSequential;

  bool operator==(const MappingNode&) const = default;
};

/// The tree; nodes are numbered in pre-order (bindings and operations included), the
/// numbering the reference uses in its report ("ALLREDUCE-12").
struct Mapping {
  std::string path;
  std::vector<MappingNode> nodes;

  bool leaf(int node) const;  // a tile node whose child is an operation
  /// The non-binding children of `node`.
  std::vector<int> members(int node) const;
  /// The binding kinds among `node`'s children, in order.
  std::vector<Binding> bindings(int node) const;

  bool operator==(const Mapping&) const = default;
};

Mapping load_mapping(const std::filesystem::path& path,
                     const ArchSpec& arch,
                     const ProblemSpec& problem,
                     const Constants& constants);
Mapping parse_mapping(const std::string& path,
                      const std::string& text,
                      const ArchSpec& arch,
                      const ProblemSpec& problem,
                      const Constants& constants);

std::string collective_name(CollectiveType t);  // "ALLREDUCE"

}  // namespace yirage::costmodel::comet
