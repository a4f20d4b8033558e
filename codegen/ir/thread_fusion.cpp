#include "codegen/ir/thread_fusion.h"

#include <algorithm>

namespace yirage::codegen {
namespace {

std::vector<std::vector<int>> consumers(const BlockGraph& g) {
  std::vector<std::vector<int>> c(g.tensor_count());
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    for (int t : g.ops[i].in)
      c[static_cast<std::size_t>(t)].push_back(static_cast<int>(g.inputs.size() + i));
  }
  return c;
}

bool saved_only(const BlockGraph& g, int t, const std::vector<std::vector<int>>& c) {
  return c[static_cast<std::size_t>(t)].empty() &&
         std::any_of(g.outputs.begin(), g.outputs.end(),
                     [t](const BlockOutput& o) { return o.tensor == t; });
}

}  // namespace

ThreadPlan fuse_threads(const BlockGraph& g) {
  ThreadPlan p;
  std::size_t n = g.tensor_count();
  std::size_t ni = g.inputs.size();
  p.in_registers.assign(n, false);
  p.fused_into.resize(n);
  for (std::size_t t = 0; t < n; ++t)
    p.fused_into[t] = static_cast<int>(t);
  std::vector<std::vector<int>> c = consumers(g);
  std::vector<bool> post = after_accum(g);
  // Backwards, so that a chain of epilogue ops is recognised from the saver up.
  std::vector<bool> epilogue(n, false);
  for (std::size_t t = n; t-- > ni;) {
    const BlockOp& op = g.ops[t - ni];
    bool elementwise = is_unary(op.kind) || is_binary(op.kind);
    bool feeds_epilogue = !c[t].empty() && std::all_of(c[t].begin(), c[t].end(), [&](int u) {
      return epilogue[static_cast<std::size_t>(u)];
    });
    epilogue[t] =
        post[t] && elementwise && (saved_only(g, static_cast<int>(t), c) || feeds_epilogue);
  }
  for (std::size_t t = ni; t < n; ++t) {
    const BlockOp& op = g.ops[t - ni];
    auto src = static_cast<std::size_t>(op.in.empty() ? 0 : op.in[0]);
    bool single_use = !op.in.empty() && c[src].size() == 1;
    if (is_unary(op.kind) && single_use && src >= ni) {
      p.in_registers[src] = true;
      p.fused_into[src] = static_cast<int>(t);
    }
    if (op.kind == OpKind::kAccum && op.accum == Accum::kSum && single_use && src >= ni &&
        g.ops[src - ni].kind == OpKind::kMatmul) {
      p.in_registers[src] = true;
      p.in_registers[t] = true;
      p.fused_into[src] = static_cast<int>(t);
    }
    if (epilogue[t])
      p.in_registers[t] = true;
  }
  // Levels: the longest chain of ops that go through shared memory, inside and after the loop.
  std::vector<int> depth(n, 0);
  for (std::size_t t = ni; t < n; ++t) {
    int d = 0;
    for (int u : g.ops[t - ni].in)
      d = std::max(d, depth[static_cast<std::size_t>(u)]);
    depth[t] = d + (p.in_registers[t] ? 0 : 1);
    (post[t] ? p.epilogue_levels : p.loop_levels) =
        std::max(post[t] ? p.epilogue_levels : p.loop_levels, depth[t]);
  }
  return p;
}

std::int64_t shared_memory_bytes(const BlockGraph& g,
                                 const std::vector<Shape>& shapes,
                                 devices::DType dtype) {
  if (shapes.size() != g.tensor_count())
    return 0;
  ThreadPlan p = fuse_threads(g);
  auto b = static_cast<std::int64_t>(devices::dtype_bytes(dtype));
  std::int64_t total = 0;
  for (std::size_t t = 0; t < shapes.size(); ++t) {
    std::int64_t e = elements(shapes[t]);
    if (t < g.inputs.size()) {
      total += 2 * e * b;
    } else if (!p.in_registers[t]) {
      bool acc = g.ops[t - g.inputs.size()].kind == OpKind::kAccum;
      total += e * (acc ? 4 : b);
    }
  }
  return total;
}

std::int64_t shared_memory_limit(const devices::DeviceSpec& d) {
  if (!d.onchip.scratchpad_per_unit)
    return 0;
  auto bytes = static_cast<std::int64_t>(d.onchip.scratchpad_per_unit->value.value);
  return std::max<std::int64_t>(0, bytes - 1024);
}

}  // namespace yirage::codegen
