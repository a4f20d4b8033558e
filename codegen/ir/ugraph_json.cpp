#include "codegen/ir/ugraph_json.h"

#include "devices/support/diagnostics.h"

#include <nlohmann/json.hpp>

namespace yirage::codegen {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kFormat = "yirage-ugraph";

Json block_json(const BlockGraph& b) {
  Json j;
  j["grid"] = b.grid;
  j["forloop"] = b.forloop;
  Json in = Json::array();
  for (const BlockInput& i : b.inputs)
    in.push_back({{"input", i.input}, {"imap", i.imap}, {"fmap", i.fmap}});
  j["inputs"] = in;
  Json ops = Json::array();
  for (const BlockOp& op : b.ops) {
    Json o = {{"op", op_name(op.kind)}, {"in", op.in}};
    if (is_reduction(op.kind))
      o["dim"] = op.dim;
    if (op.kind == OpKind::kAccum)
      o["accum"] = accum_name(op.accum);
    ops.push_back(o);
  }
  j["ops"] = ops;
  Json out = Json::array();
  for (const BlockOutput& o : b.outputs)
    out.push_back({{"tensor", o.tensor}, {"omap", o.omap}});
  j["outputs"] = out;
  return j;
}

OpKind read_kind(const Json& j) {
  std::string name = j.at("op").get<std::string>();
  auto k = op_from_name(name);
  if (!k)
    throw std::invalid_argument("unknown op '" + name + "'");
  return *k;
}

BlockGraph read_block(const Json& j) {
  BlockGraph b;
  b.grid = j.at("grid").get<Grid>();
  b.forloop = j.at("forloop").get<std::int64_t>();
  for (const Json& i : j.at("inputs"))
    b.inputs.push_back(
        {i.at("input").get<int>(), i.at("imap").get<DimMap>(), i.at("fmap").get<int>()});
  for (const Json& o : j.at("ops")) {
    BlockOp op{read_kind(o), o.at("in").get<std::vector<int>>(), o.value("dim", -1), Accum::kSum};
    if (op.kind == OpKind::kAccum) {
      auto a = accum_from_name(o.at("accum").get<std::string>());
      if (!a)
        throw std::invalid_argument("unknown accumulator '" + o.at("accum").get<std::string>() +
                                    "'");
      op.accum = *a;
    }
    b.ops.push_back(op);
  }
  for (const Json& o : j.at("outputs"))
    b.outputs.push_back({o.at("tensor").get<int>(), o.at("omap").get<DimMap>()});
  return b;
}

KernelGraph read_graph(const Json& j) {
  if (j.value("format", std::string()) != kFormat)
    throw std::invalid_argument(std::string("not a µGraph file (\"format\": \"") + kFormat +
                                "\" expected)");
  int version = j.at("version").get<int>();
  if (version != kUgraphJsonVersion)
    throw std::invalid_argument("µGraph format version " + std::to_string(version) +
                                "; this build reads version " + std::to_string(kUgraphJsonVersion));
  KernelGraph g;
  g.name = j.at("name").get<std::string>();
  std::string dtype = j.at("dtype").get<std::string>();
  bool known = false;
  for (devices::DType t : devices::kAllDTypes) {
    if (devices::dtype_name(t) == dtype) {
      g.dtype = t;
      known = true;
    }
  }
  if (!known)
    throw std::invalid_argument("unknown dtype '" + dtype + "'");
  for (const Json& i : j.at("inputs"))
    g.inputs.push_back({i.at("name").get<std::string>(), i.at("shape").get<Shape>()});
  for (const Json& o : j.at("ops"))
    g.ops.push_back({read_kind(o), o.at("in").get<std::vector<int>>(), o.value("dim", -1),
                     o.value("block", -1)});
  for (const Json& b : j.at("blocks"))
    g.blocks.push_back(read_block(b));
  g.outputs = j.at("outputs").get<std::vector<int>>();
  return g;
}

[[noreturn]] void bad(const std::string& file, const std::string& msg) {
  throw devices::InputError({devices::Diagnostic{devices::SourceLoc{file, 0, 0}, msg, {}}});
}

}  // namespace

std::string ugraph_to_json(const KernelGraph& g) {
  Json j;
  j["format"] = kFormat;
  j["version"] = kUgraphJsonVersion;
  j["name"] = g.name;
  j["dtype"] = devices::dtype_name(g.dtype);
  Json in = Json::array();
  for (const KernelInput& i : g.inputs)
    in.push_back({{"name", i.name}, {"shape", i.shape}});
  j["inputs"] = in;
  Json ops = Json::array();
  for (const KernelOp& op : g.ops) {
    Json o = {{"op", op_name(op.kind)}, {"in", op.in}};
    if (is_reduction(op.kind))
      o["dim"] = op.dim;
    if (op.kind == OpKind::kCustom)
      o["block"] = op.block;
    ops.push_back(o);
  }
  j["ops"] = ops;
  Json blocks = Json::array();
  for (const BlockGraph& b : g.blocks)
    blocks.push_back(block_json(b));
  j["blocks"] = blocks;
  j["outputs"] = g.outputs;
  return j.dump(2) + "\n";
}

KernelGraph ugraph_from_json(const std::string& text, const std::string& file) {
  KernelGraph g;
  try {
    g = read_graph(Json::parse(text));
  } catch (const nlohmann::json::exception& e) {
    bad(file, std::string("malformed µGraph: ") + e.what());
  } catch (const std::invalid_argument& e) {
    bad(file, e.what());
  }
  std::string why = check_graph(g, nullptr);
  if (!why.empty())
    bad(file, "invalid µGraph: " + why);
  return g;
}

}  // namespace yirage::codegen
