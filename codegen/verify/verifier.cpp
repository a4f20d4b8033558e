#include "codegen/verify/verifier.h"

#include "codegen/ir/ugraph_json.h"

#include <algorithm>
#include <cmath>

namespace yirage::codegen {
namespace {

// Random inputs of `g` drawn from `seed`, into the tensors of `storage` where it has them.
template <class A>
std::vector<Tensor<typename A::Value>> random_inputs(
    const KernelGraph& g,
    const A& a,
    std::uint64_t seed,
    std::vector<Tensor<typename A::Value>> storage = {}) {
  SplitMix64 rng(seed);
  std::vector<Tensor<typename A::Value>> in = std::move(storage);
  in.resize(g.inputs.size());
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    in[i].shape = g.inputs[i].shape;
    in[i].data.resize(static_cast<std::size_t>(elements(g.inputs[i].shape)));
    for (auto& v : in[i].data)
      v = a.random(rng);
  }
  return in;
}

template <class V>
std::vector<Tensor<V>> pick_outputs(const KernelGraph& g, std::vector<Tensor<V>> all) {
  std::vector<Tensor<V>> out;
  for (int t : g.outputs)
    out.push_back(std::move(all[static_cast<std::size_t>(t)]));
  return out;
}

std::string block_key(const BlockGraph& b) {
  KernelGraph one;
  one.blocks = {b};
  std::string j = ugraph_to_json(one);
  j.erase(std::remove_if(j.begin(), j.end(), [](char c) { return c == ' ' || c == '\n'; }),
          j.end());
  return j;
}

// Where the tile of block `coord` of output `o` sits in the whole output.
std::vector<std::int64_t> tile_at(const BlockOutput& o,
                                  const Shape& tile,
                                  const std::array<std::int64_t, 3>& coord) {
  std::vector<std::int64_t> at(tile.size(), 0);
  for (std::size_t a = 0; a < 3; ++a) {
    if (o.omap[a] != kReplicated)
      at[static_cast<std::size_t>(o.omap[a])] =
          coord[a] * tile[static_cast<std::size_t>(o.omap[a])];
  }
  return at;
}

}  // namespace

bool field_testable(const KernelGraph& g) {
  auto has_max = [](OpKind k) {
    return k == OpKind::kMax;
  };
  for (const KernelOp& op : g.ops) {
    if (has_max(op.kind))
      return false;
  }
  for (const BlockGraph& b : g.blocks) {
    for (const BlockOp& op : b.ops) {
      if (has_max(op.kind) || (op.kind == OpKind::kAccum && op.accum == Accum::kMaxLast))
        return false;
    }
  }
  return true;
}

std::vector<std::string> tensor_keys(const KernelGraph& g) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < g.inputs.size(); ++i)
    keys.push_back("in" + std::to_string(i));
  for (const KernelOp& op : g.ops) {
    std::string k = op_name(op.kind) + std::to_string(op.dim) + "(";
    for (int t : op.in)
      k += keys[static_cast<std::size_t>(t)] + ",";
    k += ")";
    if (op.kind != OpKind::kCustom) {
      keys.push_back(k);
      continue;
    }
    const BlockGraph& b = g.blocks[static_cast<std::size_t>(op.block)];
    k += block_key(b);
    for (std::size_t o = 0; o < b.outputs.size(); ++o)
      keys.push_back(k + "#" + std::to_string(o));
  }
  return keys;
}

FieldTest::FieldTest(const KernelGraph& reference,
                     std::uint64_t seed,
                     std::vector<Tensor<FieldValue>> storage)
    : arith_(seed ^ 0x5bd1e995ULL),
      inputs_(random_inputs(reference, arith_, seed, std::move(storage))) {
  Evaluator<FieldArith> ev(arith_);
  outputs_ = pick_outputs(reference, ev.graph(reference, inputs_));
}

std::vector<const Tensor<FieldValue>*> FieldTest::prefix(const KernelGraph& c) const {
  Evaluator<FieldArith> ev(arith_);
  std::vector<std::string> keys = tensor_keys(c);
  std::vector<const Tensor<FieldValue>*> t;
  for (const Tensor<FieldValue>& in : inputs_)
    t.push_back(&in);
  for (std::size_t i = 0; i + 1 < c.ops.size(); ++i) {
    const KernelOp& op = c.ops[i];
    std::size_t first = t.size();
    std::size_t n = op.kind == OpKind::kCustom
                        ? c.blocks[static_cast<std::size_t>(op.block)].outputs.size()
                        : 1;
    std::vector<Tensor<FieldValue>> r;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      bool cached = true;
      for (std::size_t o = 0; o < n && cached; ++o)
        cached = memo_.count(keys[first + o]) > 0;
      if (cached) {
        for (std::size_t o = 0; o < n; ++o)
          t.push_back(&memo_.at(keys[first + o]));
        continue;
      }
    }
    std::vector<const Tensor<FieldValue>*> args;
    for (int u : op.in)
      args.push_back(t[static_cast<std::size_t>(u)]);
    if (op.kind == OpKind::kCustom)
      r = ev.custom(c.blocks[static_cast<std::size_t>(op.block)], args);
    else
      r.push_back(ev.op(op.kind, op.dim, args));
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t o = 0; o < r.size(); ++o)
      t.push_back(&memo_.emplace(keys[first + o], std::move(r[o])).first->second);
  }
  return t;
}

bool FieldTest::check_sampled(const KernelGraph& c, std::uint64_t sample_seed, int blocks) const {
  if (c.ops.empty() || c.outputs.size() != outputs_.size())
    return false;
  std::string why;
  std::vector<Shape> shapes = kernel_shapes(c, &why);
  for (std::size_t o = 0; o < c.outputs.size(); ++o) {
    auto t = static_cast<std::size_t>(c.outputs[o]);
    if (t >= shapes.size() || shapes[t] != outputs_[o].shape)
      return false;  // a schedule that saves a different shape: its tiles would not fit
  }
  if (c.ops.back().kind == OpKind::kMatmul && c.outputs.size() == 1 &&
      c.outputs[0] == static_cast<int>(tensor_keys(c).size()) - 1)
    return check_rows(c, sample_seed, blocks);
  if (c.ops.back().kind != OpKind::kCustom)
    return check_full(c);
  std::vector<const Tensor<FieldValue>*> t = prefix(c);
  const KernelOp& last = c.ops.back();
  const BlockGraph& b = c.blocks[static_cast<std::size_t>(last.block)];
  std::vector<const Tensor<FieldValue>*> args;
  for (int u : last.in)
    args.push_back(t[static_cast<std::size_t>(u)]);
  Evaluator<FieldArith> ev(arith_);
  std::mt19937_64 rng(sample_seed);
  std::size_t first = t.size();
  for (int s = 0; s < blocks; ++s) {
    std::array<std::int64_t, 3> coord{};
    for (std::size_t a = 0; a < 3; ++a)
      coord[a] = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(b.grid[a]));
    std::vector<Tensor<FieldValue>> tiles = ev.block(b, args, coord);
    for (std::size_t o = 0; o < tiles.size(); ++o) {
      auto pos = std::find(c.outputs.begin(), c.outputs.end(), static_cast<int>(first + o));
      if (pos == c.outputs.end())
        continue;
      const Tensor<FieldValue>& ref = outputs_[static_cast<std::size_t>(pos - c.outputs.begin())];
      Tensor<FieldValue> want =
          detail::copy_tile(ref, tiles[o].shape, tile_at(b.outputs[o], tiles[o].shape, coord));
      if (want.data != tiles[o].data)
        return false;
    }
  }
  return true;
}

bool FieldTest::check_rows(const KernelGraph& c, std::uint64_t sample_seed, int rows) const {
  std::vector<const Tensor<FieldValue>*> t = prefix(c);
  const KernelOp& last = c.ops.back();
  const Tensor<FieldValue>& a = *t[static_cast<std::size_t>(last.in[0])];
  const Tensor<FieldValue>& b = *t[static_cast<std::size_t>(last.in[1])];
  const Tensor<FieldValue>& ref = outputs_[0];
  std::size_t r = a.shape.size();
  if (r < 2 || b.shape.size() != r)
    return false;
  std::int64_t m = a.shape[r - 2];
  std::int64_t k = a.shape[r - 1];
  std::int64_t n = b.shape[r - 1];
  if (elements(ref.shape) != elements(a.shape) / k * n)
    return false;
  std::mt19937_64 rng(sample_seed);
  std::vector<FieldValue> row(static_cast<std::size_t>(n));
  for (int i = 0; i < rows; ++i) {
    auto pick =
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(elements(a.shape) / k));
    std::int64_t batch = pick / m;
    arith_.matmul(a.data.data() + pick * k, b.data.data() + batch * k * n, row.data(), 1, k, n);
    if (!std::equal(row.begin(), row.end(), ref.data.begin() + pick * n))
      return false;
  }
  return true;
}

bool FieldTest::check_full(const KernelGraph& c) const {
  Evaluator<FieldArith> ev(arith_);
  std::vector<Tensor<FieldValue>> out = pick_outputs(c, ev.graph(c, inputs_));
  if (out.size() != outputs_.size())
    return false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].shape != outputs_[i].shape || out[i].data != outputs_[i].data)
      return false;
  }
  return true;
}

FloatCheck float_check(const KernelGraph& reference,
                       const KernelGraph& candidate,
                       std::uint64_t seed,
                       double tolerance) {
  RealArith<double> ad;
  RealArith<float> af;
  std::vector<Tensor<double>> din = random_inputs(reference, ad, seed);
  std::vector<Tensor<float>> fin;
  for (const Tensor<double>& t : din)
    fin.push_back({t.shape, std::vector<float>(t.data.begin(), t.data.end())});
  std::vector<Tensor<double>> ref = pick_outputs(reference, Evaluator(ad).graph(reference, din));
  std::vector<Tensor<float>> got = pick_outputs(candidate, Evaluator(af).graph(candidate, fin));
  FloatCheck r;
  if (ref.size() != got.size())
    return r;
  double scale = 0;
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (ref[i].shape != got[i].shape)
      return r;
    for (std::size_t e = 0; e < ref[i].data.size(); ++e) {
      scale = std::max(scale, std::abs(ref[i].data[e]));
      double d = std::abs(ref[i].data[e] - static_cast<double>(got[i].data[e]));
      worst = std::isnan(d) ? INFINITY : std::max(worst, d);
    }
  }
  r.error = scale > 0 ? worst / scale : worst;
  r.pass = r.error <= tolerance;
  return r;
}

}  // namespace yirage::codegen
