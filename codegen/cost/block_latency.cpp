#include "codegen/cost/block_latency.h"

#include "codegen/lower/block_program.h"

namespace yirage::codegen {
namespace {

// Steps of a loop over n elements spread over the block's threads.
double per_thread(std::int64_t n) {
  return static_cast<double>((n + kBlockThreads - 1) / kBlockThreads);
}

// The dependent steps of op o, added to `l`.
void add_steps(
    const BlockGraph& b, std::size_t o, const std::vector<Shape>& s, bool mma, BlockLatency& l) {
  const BlockOp& op = b.ops[o];
  const Shape& out = s[b.inputs.size() + o];
  if (is_unary(op.kind) || is_binary(op.kind)) {
    l.steps += per_thread(elements(out));
    return;
  }
  const Shape& x = s[static_cast<std::size_t>(op.in[0])];
  if (op.kind == OpKind::kAccum) {
    std::int64_t len = op.accum == Accum::kSum ? 1 : x.back();
    l.steps += per_thread(elements(out)) * static_cast<double>(len);
    return;
  }
  if (is_reduction(op.kind)) {
    std::int64_t len = x[static_cast<std::size_t>(op.dim)];
    l.steps += per_thread(elements(x) / len) * static_cast<double>(len);
    return;
  }
  // A matmul: as block_emitter.cpp chooses between yr_matmul_mma and yr_matmul.
  const Shape& w = s[static_cast<std::size_t>(op.in[1])];
  std::int64_t m = x[x.size() - 2], k = x.back(), n = w.back();
  auto inputs = static_cast<int>(b.inputs.size());
  if (mma && m % 16 == 0 && n % 8 == 0 && k % 16 == 0 && op.in[0] < inputs && op.in[1] < inputs) {
    std::int64_t tiles = elements(out) / (m * n) * (m / 16) * (n / 8);
    std::int64_t warps = kBlockThreads / 32;
    l.mma_steps += static_cast<double>((tiles + warps - 1) / warps * (k / 16));
    return;
  }
  l.steps += per_thread(elements(out)) * static_cast<double>(k);
}

}  // namespace

BlockLatency block_latency(const BlockGraph& b, const std::vector<Shape>& tiles, bool mma) {
  std::vector<bool> post = after_accum(b);
  std::size_t ni = b.inputs.size();
  BlockLatency loop{0, 0, 2};  // per iteration: after the loads' wait, closing the iteration
  BlockLatency once{0, 0, 2};  // accumulators set up, then finished
  bool accum_before = false;   // the last in-loop op was an accumulator
  for (std::size_t o = 0; o < b.ops.size(); ++o) {
    bool accum = b.ops[o].kind == OpKind::kAccum;
    BlockLatency& part = post[ni + o] && !accum ? once : loop;
    add_steps(b, o, tiles, mma, part);
    part.barriers += accum ? 0 : 1;  // every op but an accumulator ends at a barrier
    if (&part == &loop) {
      loop.barriers += accum_before && !accum ? 1 : 0;  // an op after accumulators waits
      accum_before = accum;
    }
  }
  for (const BlockOutput& out : b.outputs)
    once.steps += per_thread(elements(tiles[static_cast<std::size_t>(out.tensor)]));
  auto iters = static_cast<double>(b.forloop);
  return {loop.steps * iters + once.steps, loop.mma_steps * iters + once.mma_steps,
          loop.barriers * iters + once.barriers};
}

}  // namespace yirage::codegen
