// The generator: kernel graphs enumerated op by op in canonical order (Mirage §4.1), each
// graph-defined op's inputs enumerated among the live tensors, its maps from space.h, and
// its block graph enumerated op by op in canonical order too; every new tensor's abstract
// expression must be a subexpression of the target's (abstract_expr.h), or the prefix is
// pruned. Complete graphs whose outputs' expressions equal the target's are handed to a sink.
#pragma once

#include "codegen/ir/ugraph.h"
#include "codegen/search/abstract_expr.h"
#include "codegen/search/space.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

namespace yirage::codegen {

struct SearchLimits {
  int kernel_ops = 3;                 // ops of a candidate kernel graph
  int custom_ops = 1;                 // graph-defined ops among them
  int block_ops = 6;                  // ops of a block graph, accumulators included
  int block_inputs = 4;               // inputs of a graph-defined op
  int block_outputs = 2;              // outputs of a graph-defined op
  std::int64_t max_states = 200'000;  // per work item; beyond it the item stops (reported)
  /// Beyond it every work item stops where it is (reported as timed out): a wall-clock bound
  /// on the search, whose result then depends on the machine's speed.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

/// A complete candidate: graph-defined ops at their smallest schedule, with their maps.
struct Found {
  KernelGraph graph;
  std::vector<MapChoice> maps;  // per graph-defined op, in op order
};

struct EnumStats {
  std::int64_t generated = 0;      // prefixes built (kernel and block ops)
  std::int64_t pruned = 0;         // of them, cut by abstract expressions
  std::int64_t complete = 0;       // complete graphs handed to the sink
  bool truncated = false;          // a work item hit max_states
  bool timed_out = false;          // a work item stopped at the deadline
  std::int64_t budget_checks = 0;  // how often the item asked whether to stop
};

/// One top-level branch of the search: the first kernel op.
struct WorkItem {
  KernelOp op;   // a library op, or kCustom with its inputs
  int map = -1;  // kCustom: index into map_choices of its inputs
};

class Enumerator {
 public:
  Enumerator(const KernelGraph& reference,
             const SearchLimits& limits,
             const devices::DeviceSpec& device);

  /// The top-level branches, in canonical order.
  std::vector<WorkItem> work_items() const;

  /// Runs one branch to the end (deterministic), calling `sink` on every complete graph.
  void run(const WorkItem& item,
           const std::function<void(const Found&)>& sink,
           EnumStats& stats) const;

  const std::vector<Expr>& target() const { return target_; }

  const SearchLimits& limits() const { return limits_; }

 private:
  struct KState;
  struct BState;
  /// Whether the work item must stop: the state limit or the deadline (recorded in `st`).
  bool out_of_budget(EnumStats& st) const;
  void kernel_dfs(KState& s, const std::function<void(const Found&)>& sink, EnumStats& st) const;
  void try_library(KState& s,
                   const KernelOp& op,
                   const std::function<void(const Found&)>& sink,
                   EnumStats& st) const;
  void try_custom(KState& s,
                  const std::vector<int>& in,
                  int map,
                  const MapChoice& mc,
                  const std::function<void(const Found&)>& sink,
                  EnumStats& st) const;
  void block_dfs(KState& k,
                 BState& b,
                 const std::function<void(const Found&)>& sink,
                 EnumStats& st) const;
  void try_block_op(KState& k,
                    BState& b,
                    const BlockOp& op,
                    const std::function<void(const Found&)>& sink,
                    EnumStats& st) const;
  void close_block(KState& k,
                   BState& b,
                   const std::function<void(const Found&)>& sink,
                   EnumStats& st) const;
  bool useful(const Expr& e) const;
  bool complete(const KState& s, std::vector<int>* outputs) const;

  KernelGraph reference_;
  SearchLimits limits_;
  const devices::DeviceSpec& device_;
  std::vector<Expr> target_;
  std::vector<Shape> target_shapes_;
  std::vector<OpKind> kernel_menu_;  // library ops of the reference, in enum order
  std::vector<OpKind> block_menu_;
  std::vector<Accum> accums_;
  std::vector<std::pair<OpKind, int>> reductions_;  // (kind, dim) of the reference
};

/// The abstract expression of an op's output (library or block op, not accumulators).
Expr op_expr(OpKind k, const std::vector<Expr>& in, const std::vector<Shape>& shapes);
/// The abstract expression after an accumulator over `forloop` iterations.
Expr accum_expr(Accum a, const Expr& in, const Shape& shape, std::int64_t forloop);
/// The abstract expressions of every tensor of a graph of library ops.
std::vector<Expr> program_exprs(const KernelGraph& g);

}  // namespace yirage::codegen
