#include "codegen/program/program_loader.h"

#include "codegen/ir/ugraph_json.h"
#include "devices/registry.h"
#include "devices/support/text.h"
#include "devices/support/yaml_reader.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace yirage::codegen {
namespace {

using devices::MapReader;
using devices::YamlDoc;

// The most elements a tensor of a program may have, 2^32: larger ones are refused at load,
// before shape products can overflow 64 bits or the verifier tries to hold them in memory.
constexpr double kMaxElements = 4294967296.0;

/// Empty, or why `s` is too large.
std::string too_large(const Shape& s) {
  double n = 1;
  for (std::int64_t d : s)
    n *= static_cast<double>(d);
  if (n <= kMaxElements)
    return {};
  return "a tensor of shape " + shape_text(s) +
         " has more than 2^32 elements, the most yirage handles";
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (OpKind k : {OpKind::kMatmul, OpKind::kExp, OpKind::kSquare, OpKind::kSqrt, OpKind::kSilu,
                   OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kSum,
                   OpKind::kMean, OpKind::kRms, OpKind::kMax})
    names.push_back(op_name(k));
  return names;
}

struct Reader {
  const YamlDoc& doc;
  Program& p;
  std::vector<Shape> shapes;  // per tensor; empty when unknown after an error

  int find(const std::string& name) const {
    auto it = std::find(p.tensor_names.begin(), p.tensor_names.end(), name);
    return it == p.tensor_names.end() ? -1 : static_cast<int>(it - p.tensor_names.begin());
  }

  bool declare(const YAML::Node& at, const std::string& name) {
    if (find(name) >= 0) {
      doc.error(at, "tensor '" + name + "' is defined twice");
      return false;
    }
    p.tensor_names.push_back(name);
    return true;
  }

  void read_input(const YAML::Node& n) {
    MapReader m(doc, n, "input");
    if (!m.valid())
      return;
    std::optional<std::string> name = m.string("name", true);
    YAML::Node s = m.require("shape");
    m.finish();
    Shape shape;
    bool ok = s && s.IsSequence() && s.size() > 0;
    for (std::size_t i = 0; ok && i < s.size(); ++i) {
      std::int64_t d = 0;
      ok = YAML::convert<std::int64_t>::decode(s[i], d) && d > 0;
      shape.push_back(d);
    }
    if (s && !ok)
      doc.error(s, "shape must be a list of positive integers, such as [16, 4096]");
    if (std::string why = ok ? too_large(shape) : ""; !why.empty()) {
      doc.error(s, why);
      ok = false;
    }
    if (!name || !declare(n, *name))
      return;
    p.graph.inputs.push_back({*name, shape});
    shapes.push_back(ok ? shape : Shape{});
  }

  std::vector<int> read_operands(const YAML::Node& in) {
    std::vector<int> ids;
    if (!in || !in.IsSequence()) {
      if (in)
        doc.error(in, "'in' must be a list of tensor names");
      return ids;
    }
    for (const YAML::Node& t : in) {
      std::string name = t.IsScalar() ? t.Scalar() : "";
      int id = find(name);
      if (id < 0)
        doc.error(t, "unknown tensor '" + name + "'" + devices::did_you_mean(name, p.tensor_names));
      ids.push_back(id);
    }
    return ids;
  }

  void read_op(const YAML::Node& n) {
    MapReader m(doc, n, "operation");
    if (!m.valid())
      return;
    std::optional<std::string> name = m.string("name", true);
    std::optional<std::string> kind = m.choice("op", op_names(), true);
    YAML::Node in = m.require("in");
    std::optional<std::int64_t> dim = m.integer("dim", false, 0);
    m.finish();
    std::vector<int> ids = read_operands(in);
    if (!name || !declare(n, *name))
      return;
    shapes.emplace_back();
    if (!kind || ids.empty() || std::count(ids.begin(), ids.end(), -1) > 0)
      return;
    KernelOp op{*op_from_name(*kind), ids, -1, -1};
    std::vector<Shape> in_shapes;
    for (int id : ids) {
      if (shapes[static_cast<std::size_t>(id)].empty())
        return;  // already reported
      in_shapes.push_back(shapes[static_cast<std::size_t>(id)]);
    }
    if (is_reduction(op.kind))
      op.dim = dim ? static_cast<int>(*dim) : static_cast<int>(in_shapes[0].size()) - 1;
    std::string why;
    auto s = infer_shape(op.kind, in_shapes, op.dim, &why);
    if (s)
      why = too_large(*s);
    if (!s || !why.empty()) {
      doc.error(n, *name + ": " + why);
      return;
    }
    shapes.back() = *s;
    p.graph.ops.push_back(op);
  }

  void read_outputs(const YAML::Node& n) {
    if (!n)
      return;
    if (!n.IsSequence() || n.size() == 0) {
      doc.error(n, "'outputs' must be a non-empty list of tensor names");
      return;
    }
    for (int id : read_operands(n)) {
      if (id >= 0)
        p.graph.outputs.push_back(id);
    }
  }

  void read_list(MapReader& top, const char* key, void (Reader::*each)(const YAML::Node&)) {
    YAML::Node n = top.require(key);
    if (!n)
      return;
    if (!n.IsSequence() || n.size() == 0) {
      doc.error(n, std::string("'") + key + "' must be a non-empty list");
      return;
    }
    for (const YAML::Node& e : n)
      (this->*each)(e);
  }
};

void check_used(const YamlDoc& doc, const YAML::Node& root, const Program& p) {
  std::vector<int> uses(p.tensor_names.size(), 0);
  for (const KernelOp& op : p.graph.ops) {
    for (int t : op.in)
      ++uses[static_cast<std::size_t>(t)];
  }
  for (int t : p.graph.outputs)
    ++uses[static_cast<std::size_t>(t)];
  for (std::size_t t = 0; t < uses.size(); ++t) {
    if (uses[t] == 0)
      doc.error(root, "tensor '" + p.tensor_names[t] + "' is computed but never used");
  }
}

Program read(const YamlDoc& doc) {
  Program p;
  p.file = doc.path();
  if (!doc.root())
    return p;
  MapReader top(doc, doc.root(), "program");
  if (!top.valid())
    return p;
  p.graph.name = top.string("name", true).value_or("");
  std::optional<std::string> dtype = top.choice("dtype", {"fp32", "bf16", "fp16", "fp8"});
  for (devices::DType t : devices::kAllDTypes) {
    if (dtype && devices::dtype_name(t) == *dtype)
      p.graph.dtype = t;
  }
  Reader r{doc, p, {}};
  r.read_list(top, "inputs", &Reader::read_input);
  r.read_list(top, "ops", &Reader::read_op);
  r.read_outputs(top.require("outputs"));
  top.finish();
  if (doc.diag().empty())
    check_used(doc, doc.root(), p);
  return p;
}

}  // namespace

Program parse_program(const std::string& text, const std::string& path) {
  devices::Diagnostics diag;
  YamlDoc doc(path, text, diag);
  Program p = read(doc);
  diag.throw_if_errors();
  return p;
}

Program load_program(const std::filesystem::path& path) {
  devices::Diagnostics diag;
  YamlDoc doc = YamlDoc::load(path, diag);
  Program p = read(doc);
  diag.throw_if_errors();
  return p;
}

Program resize_inputs(const Program& p, const std::map<std::string, Shape>& shapes) {
  Program r = p;
  devices::Diagnostics diag;
  for (const auto& entry : shapes) {
    const std::string& name = entry.first;  // (clang 14 cannot capture a structured binding)
    const Shape& shape = entry.second;
    auto it = std::find_if(r.graph.inputs.begin(), r.graph.inputs.end(),
                           [&](const KernelInput& i) { return i.name == name; });
    if (it == r.graph.inputs.end())
      diag.error({p.file, 0, 0},
                 "--shape names '" + name + "', which is not an input of " + p.graph.name);
    else if (std::string why = too_large(shape); !why.empty())
      diag.error({p.file, 0, 0}, "--shape " + name + ": " + why);
    else
      it->shape = shape;
  }
  diag.throw_if_errors();
  std::string why;
  std::vector<Shape> inferred = kernel_shapes(r.graph, &why);
  if (inferred.empty())
    diag.error({p.file, 0, 0}, "with the shapes given: " + why);
  for (const Shape& s : inferred) {
    if (std::string large = too_large(s); !large.empty()) {
      diag.error({p.file, 0, 0}, "with the shapes given: " + large);
      break;
    }
  }
  diag.throw_if_errors();
  return r;
}

std::vector<std::filesystem::path> bundled_programs() {
  std::vector<std::filesystem::path> files;
  std::filesystem::path dir = devices::data_dir() / "programs";
  if (std::filesystem::is_directory(dir)) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".yaml")
        files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::optional<KernelGraph> load_reference_ugraph(const std::string& program_name) {
  std::filesystem::path p =
      devices::data_dir() / "programs" / "reference" / (program_name + ".ugraph.json");
  std::ifstream in(p);
  if (!in)
    return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return ugraph_from_json(text.str(), p.string());
}

}  // namespace yirage::codegen
