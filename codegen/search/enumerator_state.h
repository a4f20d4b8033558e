// The search state of enumerator.h's depth-first walk (private to the two enumerator files):
// a kernel-graph prefix and a block-graph prefix, with shapes, abstract expressions and use
// counts of their tensors.
#pragma once

#include "codegen/search/enumerator.h"

#include <algorithm>
#include <array>

namespace yirage::codegen {

/// An op's canonical rank (Mirage §4.1): its largest input, its inputs, its kind and variant,
/// compared lexicographically; a fixed array because it is built for every op tried.
struct Rank {
  std::array<int, 8> v{};
  std::size_t n = 0;

  bool operator<(const Rank& o) const {
    return std::lexicographical_compare(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n),
                                        o.v.begin(),
                                        o.v.begin() + static_cast<std::ptrdiff_t>(o.n));
  }
};

struct Enumerator::KState {
  KernelGraph g;
  std::vector<Shape> shapes;
  std::vector<Expr> exprs;
  std::vector<int> uses;
  std::vector<MapChoice> maps;
  Rank last;
  int customs = 0;
};

struct Enumerator::BState {
  BlockGraph b;
  std::vector<int> kin;
  MapChoice map;
  std::vector<Shape> shapes;
  std::vector<Expr> exprs;
  std::vector<bool> post;
  std::vector<int> uses;
  Rank last;
};

}  // namespace yirage::codegen
