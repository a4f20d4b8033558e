// The search state of enumerator.h's depth-first walk (private to the two enumerator files):
// a kernel-graph prefix and a block-graph prefix, with shapes, abstract expressions and use
// counts of their tensors.
#pragma once

#include "codegen/search/enumerator.h"

namespace yirage::codegen {

struct Enumerator::KState {
  KernelGraph g;
  std::vector<Shape> shapes;
  std::vector<Expr> exprs;
  std::vector<int> uses;
  std::vector<MapChoice> maps;
  std::vector<int> last;
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
  std::vector<int> last;
};

}  // namespace yirage::codegen
