// match_gemv (block_program.h): recognises the small-M streaming form of a lowered µGraph.
#include "codegen/lower/block_program.h"

namespace yirage::codegen {
namespace {

bool fail(std::string* why, const std::string& msg) {
  if (why != nullptr)
    *why = msg;
  return false;
}

bool replicated(const DimMap& m) {
  return m[0] == kReplicated && m[1] == kReplicated && m[2] == kReplicated;
}

// In-loop ops: matmul(X tile, W tile) into a sum accumulator, or an rms accumulator of the
// X tile. Fills the form's weights and accumulators.
bool match_loop(const LoweredBlock& b, int x_tile, GemvForm& f, std::string* why) {
  const BlockGraph& g = b.graph;
  std::size_t ni = g.inputs.size();
  for (int o : b.in_loop) {
    const BlockOp& op = g.ops[static_cast<std::size_t>(o)];
    int id = static_cast<int>(ni) + o;
    if (op.kind == OpKind::kMatmul) {
      if (op.in[0] != x_tile || op.in[1] >= static_cast<int>(ni))
        return fail(why, "a matmul does not read the X tile and a weight tile");
      const BlockInput& w = g.inputs[static_cast<std::size_t>(op.in[1])];
      if (w.fmap != 0)
        return fail(why, "a weight is not split along K by the for-loop");
      continue;
    }
    if (op.kind != OpKind::kAccum)
      return fail(why, "the loop computes " + op_name(op.kind));
    int src = op.in[0];
    if (op.accum == Accum::kRmsLast && src == x_tile) {
      f.rms_accum = id;
      continue;
    }
    const BlockOp* m =
        src >= static_cast<int>(ni) ? &g.ops[static_cast<std::size_t>(src) - ni] : nullptr;
    if (op.accum != Accum::kSum || m == nullptr || m->kind != OpKind::kMatmul)
      return fail(why, "an accumulator is not a sum of a matmul or an rms of X");
    f.matmul_accums.push_back(id);
    f.weight_inputs.push_back(g.inputs[static_cast<std::size_t>(m->in[1])].input);
  }
  return !f.matmul_accums.empty() || fail(why, "no matmul");
}

}  // namespace

std::optional<GemvForm> match_gemv(const BlockProgram& p, std::string* why) {
  if (p.steps.size() != 1 || !p.steps[0].block)
    return fail(why, "not a single graph-defined op"), std::nullopt;
  const LoweredBlock& b = *p.steps[0].block;
  const BlockGraph& g = b.graph;
  int x_tile = -1;
  for (std::size_t i = 0; i < g.inputs.size(); ++i)
    if (replicated(g.inputs[i].imap) && g.inputs[i].fmap == 1)
      x_tile = static_cast<int>(i);
  if (x_tile < 0)
    return fail(why, "no X tile replicated over the grid"), std::nullopt;
  GemvForm f;
  f.x_input = p.steps[0].op.in[static_cast<std::size_t>(g.inputs[x_tile].input)];
  const Shape& xs = p.shapes[static_cast<std::size_t>(f.x_input)];
  if (xs.size() != 2 || xs[0] > 16)
    return fail(why, "X is not [M <= 16, K]"), std::nullopt;
  f.m = xs[0];
  f.k = xs[1];
  if (!match_loop(b, x_tile, f, why))
    return std::nullopt;
  for (int& w : f.weight_inputs) {
    w = p.steps[0].op.in[static_cast<std::size_t>(w)];
    const Shape& ws = p.shapes[static_cast<std::size_t>(w)];
    if (ws.size() != 2 || ws[0] != f.k || (f.n != 0 && ws[1] != f.n))
      return fail(why, "the weights are not [K, N] alike"), std::nullopt;
    f.n = ws[1];
  }
  for (int o : b.after) {
    const BlockOp& op = g.ops[static_cast<std::size_t>(o)];
    // A matmul over an inner dim of 1 is a broadcast product: elementwise too.
    bool outer =
        op.kind == OpKind::kMatmul && b.tiles[static_cast<std::size_t>(op.in[0])].back() == 1;
    if (!is_unary(op.kind) && !is_binary(op.kind) && !outer)
      return fail(why, "the epilogue computes " + op_name(op.kind)), std::nullopt;
  }
  if (f.k % 32 != 0 || f.n % 64 != 0)
    return fail(why, "K is not a multiple of 32 or N of 64"), std::nullopt;
  if (g.outputs.size() != 1 || b.outputs[0] != Shape{f.m, f.n})
    return fail(why, "the output is not one [M, N] tensor"), std::nullopt;
  return f;
}

}  // namespace yirage::codegen
