// The verifier (Mirage §5, done on the CPU): a candidate µGraph is compared with the
// reference program by random testing over Z_p x Z_q (fresh random inputs and root of unity
// per test), on a few sampled thread blocks during search and on whole outputs for the
// finalists, and then in floating point against a double-precision reference.
#pragma once

#include "codegen/ir/ugraph.h"
#include "codegen/verify/arith.h"
#include "codegen/verify/evaluator.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace yirage::codegen {

/// Whether a graph can be tested over finite fields (max has no meaning there).
bool field_testable(const KernelGraph& g);

/// One test: random inputs and ω drawn from `seed`, and the reference's outputs on them.
class FieldTest {
 public:
  /// `storage`: tensors of an earlier test whose memory the inputs are drawn into (at full
  /// shapes the inputs are ~1 GB, and touching fresh pages costs as much as drawing them).
  FieldTest(const KernelGraph& reference,
            std::uint64_t seed,
            std::vector<Tensor<FieldValue>> storage = {});

  /// The input tensors, handed over for the next test's `storage`; the test is spent.
  std::vector<Tensor<FieldValue>> take_inputs() { return std::move(inputs_); }

  /// Tier 1: every op of `candidate` but the last evaluated whole (memoised per test), the
  /// last one, when graph-defined, on `blocks` thread blocks chosen from `sample_seed`; its
  /// tiles compared with the reference outputs. Safe to call from several threads.
  bool check_sampled(const KernelGraph& candidate, std::uint64_t sample_seed, int blocks) const;

  /// Tier 2: the whole outputs.
  bool check_full(const KernelGraph& candidate) const;

 private:
  bool check_rows(const KernelGraph& candidate, std::uint64_t sample_seed, int rows) const;
  std::vector<const Tensor<FieldValue>*> prefix(const KernelGraph& candidate) const;

  FieldArith arith_;
  std::vector<Tensor<FieldValue>> inputs_;
  std::vector<Tensor<FieldValue>> outputs_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, Tensor<FieldValue>> memo_;
};

struct FloatCheck {
  bool pass = false;
  double error = 0;  // max |candidate - reference| / max |reference|, over all outputs
};

/// The candidate in float against the reference program in double on uniform inputs in
/// [-1, 1) drawn from `seed`; passes when the error is at most `tolerance`.
FloatCheck float_check(const KernelGraph& reference,
                       const KernelGraph& candidate,
                       std::uint64_t seed,
                       double tolerance);

/// A key naming what kernel tensor `t` computes (its op, block graph and inputs, recursively).
std::vector<std::string> tensor_keys(const KernelGraph& g);

}  // namespace yirage::codegen
