// The µGraph IR (Mirage, OSDI'25 §2): a kernel graph of device tensors whose ops are
// library kernels or graph-defined ops, each graph-defined op a block graph (what one thread
// block does: grid, for-loop, input iterators with imap/fmap, ops on shared-memory tiles,
// accumulators, output savers with omap). Tensors are indices; shapes are derived.
#pragma once

#include "codegen/ir/op.h"
#include "devices/device_spec.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace yirage::codegen {

/// A grid axis mapped to no data dim (Mirage's φ): the tensor is replicated along it.
inline constexpr int kReplicated = -1;

using Grid = std::array<std::int64_t, 3>;
using DimMap = std::array<int, 3>;  // per grid axis (x, y, z): a data dim or kReplicated

/// An input iterator: loads a tile of the custom op's input `input` every iteration.
struct BlockInput {
  int input = 0;                                          // position among the op's inputs
  DimMap imap = {kReplicated, kReplicated, kReplicated};  // grid axis -> split data dim
  int fmap = kReplicated;                                 // data dim split over the for-loop

  bool operator==(const BlockInput&) const = default;
};

/// A block op on shared-memory tensors. Block tensor t < inputs.size() is iterator t; tensor
/// inputs.size() + i is the result of ops[i].
struct BlockOp {
  OpKind kind = OpKind::kAdd;
  std::vector<int> in;
  int dim = -1;               // reductions: the last dim
  Accum accum = Accum::kSum;  // kind == kAccum

  bool operator==(const BlockOp&) const = default;
};

/// An output saver: writes a post-accumulator tile to device memory at its omap position.
struct BlockOutput {
  int tensor = 0;
  DimMap omap = {kReplicated, kReplicated, kReplicated};

  bool operator==(const BlockOutput&) const = default;
};

struct BlockGraph {
  Grid grid = {1, 1, 1};
  std::int64_t forloop = 1;
  std::vector<BlockInput> inputs;
  std::vector<BlockOp> ops;
  std::vector<BlockOutput> outputs;

  bool operator==(const BlockGraph&) const = default;

  std::int64_t blocks() const { return grid[0] * grid[1] * grid[2]; }

  std::size_t tensor_count() const { return inputs.size() + ops.size(); }
};

/// A kernel op: a library op, or a graph-defined op (kCustom) running `blocks[block]`.
struct KernelOp {
  OpKind kind = OpKind::kAdd;
  std::vector<int> in;  // kernel tensor ids
  int dim = -1;         // reductions
  int block = -1;       // kCustom: index into KernelGraph::blocks

  bool operator==(const KernelOp&) const = default;
};

struct KernelInput {
  std::string name;
  Shape shape;

  bool operator==(const KernelInput&) const = default;
};

/// Kernel tensor ids: the inputs first, then the outputs of each op in order (one per op,
/// or one per saver of a custom op).
struct KernelGraph {
  std::string name;
  devices::DType dtype = devices::DType::kFp16;
  std::vector<KernelInput> inputs;
  std::vector<KernelOp> ops;
  std::vector<BlockGraph> blocks;
  std::vector<int> outputs;

  bool operator==(const KernelGraph&) const = default;
};

/// The tile an iterator loads each iteration from a tensor of shape `full`.
Shape tile_shape(const Shape& full, const BlockInput& in, const Grid& grid, std::int64_t forloop);

/// The device tensor a saver writes from a tile of shape `tile`.
Shape saved_shape(const Shape& tile, const DimMap& omap, const Grid& grid);

/// The shapes of a block graph's tensors given its inputs' device shapes, or an empty
/// vector with the reason in `why`.
std::vector<Shape> block_shapes(const BlockGraph& g,
                                const std::vector<Shape>& inputs,
                                std::string* why);

/// Whether each block tensor is computed after the for-loop (downstream of an accumulator).
std::vector<bool> after_accum(const BlockGraph& g);

/// The shapes of every kernel tensor, or empty with the reason in `why`.
std::vector<Shape> kernel_shapes(const KernelGraph& g, std::string* why);

/// The validity rules (Mirage Def. 2.1): shapes, the path rule (every input-to-output path
/// of a block graph passes exactly one accumulator), grid and for-loop splits that divide,
/// omaps that cover the grid, shared memory within `device` (when given) and every tensor
/// used. Returns the first problem, or empty when valid.
std::string check_graph(const KernelGraph& g, const devices::DeviceSpec* device);

}  // namespace yirage::codegen
