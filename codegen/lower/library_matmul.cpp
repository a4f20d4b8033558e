#include "codegen/lower/library_matmul.h"

#include <algorithm>

namespace yirage::codegen {

bool program_tensor(const KernelGraph& g, int t) {
  return t < static_cast<int>(g.inputs.size()) ||
         std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end();
}

LibraryMatmul library_matmul(const KernelGraph& g,
                             const std::vector<Shape>& shapes,
                             const KernelOp& op,
                             int out) {
  const Shape& a = shapes[static_cast<std::size_t>(op.in[0])];
  const Shape& b = shapes[static_cast<std::size_t>(op.in[1])];
  const Shape& c = shapes[static_cast<std::size_t>(out)];
  LibraryMatmul r;
  r.m = a[a.size() - 2];
  r.k = a.back();
  r.n = b.back();
  r.batch = elements(c) / (r.m * r.n);
  r.sa = elements(a) == r.m * r.k ? 0 : r.m * r.k;
  r.sb = elements(b) == r.k * r.n ? 0 : r.k * r.n;
  bool f0 = !program_tensor(g, op.in[0]), f1 = !program_tensor(g, op.in[1]);
  r.fp32 = f0 || f1;
  r.widened = f0 == f1 ? -1 : f0 ? 1 : 0;
  if (!r.fp32)
    return r;
  std::int64_t tiles = r.batch * ((r.m + 63) / 64) * ((r.n + 63) / 64);
  while (r.slices * 2 * tiles <= kSplitTiles && r.k % (r.slices * 2) == 0 &&
         r.k / (r.slices * 2) >= kMinSliceK)
    r.slices *= 2;
  r.narrowed = program_tensor(g, out) && r.slices == 1;
  return r;
}

}  // namespace yirage::codegen
