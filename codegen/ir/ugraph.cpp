#include "codegen/ir/ugraph.h"

#include "codegen/ir/thread_fusion.h"

#include <set>

namespace yirage::codegen {
namespace {

bool fail(std::string* why, std::string msg) {
  if (why != nullptr)
    *why = std::move(msg);
  return false;
}

std::vector<Shape> none(std::string* why, std::string msg) {
  fail(why, std::move(msg));
  return {};
}

// Divides `s[dim]` into `parts`, failing when it does not divide evenly.
bool split(Shape& s, int dim, std::int64_t parts, std::string* why) {
  if (dim < 0 || parts <= 1)
    return dim < static_cast<int>(s.size()) || fail(why, "map names a missing dim");
  if (dim >= static_cast<int>(s.size()))
    return fail(why, "map names dim " + std::to_string(dim) + " of " + shape_text(s));
  auto d = static_cast<std::size_t>(dim);
  if (s[d] % parts != 0)
    return fail(why, "dim " + std::to_string(dim) + " of " + shape_text(s) +
                         " does not split into " + std::to_string(parts));
  s[d] /= parts;
  return true;
}

bool iterator_tile(
    const Shape& full, const BlockInput& in, const BlockGraph& g, Shape* out, std::string* why) {
  Shape s = full;
  std::set<int> used;
  for (std::size_t a = 0; a < 3; ++a) {
    if (in.imap[a] == kReplicated)
      continue;
    if (!used.insert(in.imap[a]).second)
      return fail(why, "an imap maps two grid axes to one dim");
    if (!split(s, in.imap[a], g.grid[a], why))
      return false;
  }
  if (in.fmap != kReplicated && used.count(in.fmap))
    return fail(why, "an fmap splits a dim already split by the grid");
  if (!split(s, in.fmap, g.forloop, why))
    return false;
  *out = s;
  return true;
}

bool op_shape(const BlockOp& op, const std::vector<Shape>& shapes, Shape* out, std::string* why) {
  std::vector<Shape> in;
  for (int t : op.in) {
    if (t < 0 || t >= static_cast<int>(shapes.size()))
      return fail(why, "a block op reads a tensor defined after it");
    in.push_back(shapes[static_cast<std::size_t>(t)]);
  }
  if (op.kind == OpKind::kAccum) {
    if (in.size() != 1)
      return fail(why, "an accumulator takes one tensor");
    *out = accum_shape(op.accum, in[0]);
    return true;
  }
  auto s = infer_shape(op.kind, in, op.dim, why);
  if (!s)
    return false;
  *out = *s;
  return true;
}

bool check_block_outputs(const BlockGraph& g, const std::vector<bool>& post, std::string* why) {
  std::vector<int> uses(g.tensor_count(), 0);
  for (const BlockOp& op : g.ops) {
    for (int t : op.in)
      ++uses[static_cast<std::size_t>(t)];
  }
  for (const BlockOutput& o : g.outputs) {
    if (o.tensor < 0 || o.tensor >= static_cast<int>(g.tensor_count()))
      return fail(why, "an output saver names a missing tensor");
    if (!post[static_cast<std::size_t>(o.tensor)])
      return fail(why, "an output is not downstream of an accumulator");
    ++uses[static_cast<std::size_t>(o.tensor)];
    for (std::size_t a = 0; a < 3; ++a) {
      if (g.grid[a] > 1 && o.omap[a] == kReplicated)
        return fail(why, "an omap leaves grid axis " + std::to_string(a) + " unmapped");
    }
  }
  for (std::size_t t = 0; t < uses.size(); ++t) {
    if (uses[t] == 0)
      return fail(why, "block tensor " + std::to_string(t) + " is never used");
  }
  return true;
}

}  // namespace

Shape tile_shape(const Shape& full, const BlockInput& in, const Grid& grid, std::int64_t forloop) {
  BlockGraph g;
  g.grid = grid;
  g.forloop = forloop;
  Shape s;
  std::string why;
  return iterator_tile(full, in, g, &s, &why) ? s : Shape{};
}

Shape saved_shape(const Shape& tile, const DimMap& omap, const Grid& grid) {
  Shape s = tile;
  for (std::size_t a = 0; a < 3; ++a) {
    if (omap[a] != kReplicated && omap[a] < static_cast<int>(s.size()))
      s[static_cast<std::size_t>(omap[a])] *= grid[a];
  }
  return s;
}

std::vector<bool> after_accum(const BlockGraph& g) {
  std::vector<bool> post(g.inputs.size(), false);
  for (const BlockOp& op : g.ops) {
    bool p = op.kind == OpKind::kAccum;
    for (int t : op.in)
      p = p || post[static_cast<std::size_t>(t)];
    post.push_back(p);
  }
  return post;
}

std::vector<Shape> block_shapes(const BlockGraph& g,
                                const std::vector<Shape>& inputs,
                                std::string* why) {
  std::vector<Shape> shapes;
  for (const BlockInput& in : g.inputs) {
    if (in.input < 0 || in.input >= static_cast<int>(inputs.size()))
      return none(why, "an iterator names a missing input");
    Shape s;
    if (!iterator_tile(inputs[static_cast<std::size_t>(in.input)], in, g, &s, why))
      return {};
    shapes.push_back(s);
  }
  std::vector<bool> post(g.inputs.size(), false);
  for (const BlockOp& op : g.ops) {
    Shape s;
    if (!op_shape(op, shapes, &s, why))
      return {};
    bool p = false;
    bool pre = false;
    for (int t : op.in)
      (post[static_cast<std::size_t>(t)] ? p : pre) = true;
    if (op.kind == OpKind::kAccum && p)
      return none(why, "an accumulator reads a tensor that is already accumulated");
    if (op.kind != OpKind::kAccum && p && pre)
      return none(why, op_name(op.kind) + " mixes tensors from inside and after the loop");
    post.push_back(p || op.kind == OpKind::kAccum);
    shapes.push_back(s);
  }
  if (!check_block_outputs(g, post, why))
    return {};
  return shapes;
}

std::vector<Shape> kernel_shapes(const KernelGraph& g, std::string* why) {
  std::vector<Shape> shapes;
  for (const KernelInput& in : g.inputs)
    shapes.push_back(in.shape);
  for (const KernelOp& op : g.ops) {
    std::vector<Shape> in;
    for (int t : op.in) {
      if (t < 0 || t >= static_cast<int>(shapes.size()))
        return none(why, "a kernel op reads a tensor defined after it");
      in.push_back(shapes[static_cast<std::size_t>(t)]);
    }
    if (op.kind != OpKind::kCustom) {
      auto s = infer_shape(op.kind, in, op.dim, why);
      if (!s)
        return {};
      shapes.push_back(*s);
      continue;
    }
    if (op.block < 0 || op.block >= static_cast<int>(g.blocks.size()))
      return none(why, "a custom op names a missing block graph");
    const BlockGraph& b = g.blocks[static_cast<std::size_t>(op.block)];
    std::vector<Shape> bs = block_shapes(b, in, why);
    if (bs.empty())
      return {};
    for (const BlockOutput& o : b.outputs)
      shapes.push_back(saved_shape(bs[static_cast<std::size_t>(o.tensor)], o.omap, b.grid));
  }
  return shapes;
}

std::string check_graph(const KernelGraph& g, const devices::DeviceSpec* device) {
  std::string why;
  std::vector<Shape> shapes = kernel_shapes(g, &why);
  if (shapes.empty())
    return why.empty() ? "empty graph" : why;
  std::vector<int> uses(shapes.size(), 0);
  for (const KernelOp& op : g.ops) {
    for (int t : op.in)
      ++uses[static_cast<std::size_t>(t)];
  }
  for (int t : g.outputs) {
    if (t < 0 || t >= static_cast<int>(shapes.size()))
      return "an output names a missing tensor";
    ++uses[static_cast<std::size_t>(t)];
  }
  for (std::size_t t = 0; t < uses.size(); ++t) {
    if (uses[t] == 0)
      return "kernel tensor " + std::to_string(t) + " is never used";
  }
  if (device == nullptr)
    return {};
  std::int64_t limit = shared_memory_limit(*device);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const KernelOp& op = g.ops[i];
    if (op.kind != OpKind::kCustom)
      continue;
    std::vector<Shape> in;
    for (int t : op.in)
      in.push_back(shapes[static_cast<std::size_t>(t)]);
    const BlockGraph& b = g.blocks[static_cast<std::size_t>(op.block)];
    // The backends keep every tile in fp32 slots (codegen/lower), whatever the data type:
    // a µGraph priced in fp16 tiles but lowered in fp32 asked an H100 for 272 KB.
    std::int64_t need = shared_memory_bytes(b, block_shapes(b, in, &why), devices::DType::kFp32);
    if (need > limit)
      return "block graph " + std::to_string(op.block) + " needs " + std::to_string(need) +
             " bytes of shared memory; " + device->name + " has " + std::to_string(limit);
  }
  return {};
}

}  // namespace yirage::codegen
