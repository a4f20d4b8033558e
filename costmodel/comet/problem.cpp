#include "costmodel/comet/problem.h"

#include "costmodel/comet/yaml_util.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace yirage::costmodel::comet {
namespace {

using devices::Diagnostics;
using devices::MapReader;
using devices::YamlDoc;

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty())
      out.push_back(item);
  }
  return out;
}

// A projection: a list of ranks, each a list of dimension names: [[M]], [[K]].
std::vector<std::vector<std::string>> read_projection(const YamlDoc& doc, const YAML::Node& n) {
  std::vector<std::vector<std::string>> out;
  if (!n || !n.IsSequence()) {
    doc.error(n, "'projection' must be a list of ranks, such as [[M]]");
    return out;
  }
  for (const YAML::Node& rank : n) {
    std::vector<std::string> terms;
    const YAML::Node& items =
        rank.IsSequence() && rank.size() == 1 && rank[0].IsSequence() ? rank[0] : rank;
    if (!items.IsSequence()) {
      doc.error(rank, "a projection rank must be a list of dimensions, such as [[M]]");
      continue;
    }
    for (const YAML::Node& d : items) {
      if (d.IsScalar()) {
        terms.push_back(d.Scalar());
      } else if (d.IsSequence() && d.size() == 1 && d[0].IsScalar()) {
        terms.push_back(d[0].Scalar());
      } else {
        doc.error(d, "a projection term must be a dimension name");
      }
    }
    out.push_back(std::move(terms));
  }
  return out;
}

void check_dims(const YamlDoc& doc,
                const ProblemSpec& p,
                const TensorUse& t,
                const YAML::Node& at) {
  for (const auto& rank : t.projection)
    for (const std::string& d : rank)
      if (std::find(p.dims.begin(), p.dims.end(), d) == p.dims.end())
        doc.error(at, "tensor '" + t.name + "' projects on unknown dimension '" + d + "'");
}

Operation read_operation(const YamlDoc& doc, const YAML::Node& n, const ProblemSpec& p) {
  MapReader m(doc, n, "operation");
  Operation op;
  op.loc = doc.loc(n);
  if (!m.valid())
    return op;
  op.name = m.string("name", true).value_or("");
  op.ins = read_name_list(m, "ins");
  op.out = m.string("out", true).value_or("");
  op.dims = m.strings("dimensions").value_or(p.dims);
  YAML::Node tensors = m.require("tensors");
  if (tensors && tensors.IsSequence()) {
    for (const YAML::Node& tn : tensors) {
      MapReader t(doc, tn, "tensor");
      if (!t.valid())
        continue;
      TensorUse use;
      use.name = t.string("name", true).value_or("");
      use.projection = read_projection(doc, t.require("projection"));
      use.read_write = read_bool(t, "read-write").value_or(false);
      check_dims(doc, p, use, tn);
      t.finish();
      op.tensors.push_back(std::move(use));
    }
  } else if (tensors) {
    doc.error(tensors, "'tensors' must be a list");
  }
  m.finish();
  return op;
}

ProblemSpec build(const YamlDoc& doc, const Constants& constants) {
  ProblemSpec p;
  p.path = doc.path();
  MapReader top(doc, doc.root(), "problem file");
  if (!top.valid())
    return p;
  MapReader m(doc, top.require("problem"), "problem");
  top.finish();
  if (!m.valid())
    return p;
  if (YAML::Node io = m.get("io")) {
    MapReader r(doc, io, "io");
    if (r.valid()) {
      p.ins = read_name_list(r, "ins");
      p.outs = read_name_list(r, "outs");
      r.finish();
    }
  }
  p.dims = m.strings("dimensions").value_or(std::vector<std::string>{});
  if (YAML::Node inst = m.require("instance"); inst && inst.IsMap()) {
    for (auto it = inst.begin(); it != inst.end(); ++it) {
      std::string dim = it->first.Scalar();
      std::optional<std::int64_t> v = constants.number(it->second.Scalar());
      if (std::find(p.dims.begin(), p.dims.end(), dim) == p.dims.end())
        doc.error(it->first, "instance size of unknown dimension '" + dim + "'");
      else if (!v || *v < 1)
        doc.error(it->second, "size of '" + dim + "' must be a positive number or a constant " +
                                  "holding one, got '" + it->second.Scalar() + "'");
      else
        p.sizes[dim] = *v;
    }
  }
  if (YAML::Node ops = m.require("operations"); ops && ops.IsSequence()) {
    for (const YAML::Node& o : ops)
      p.ops.push_back(read_operation(doc, o, p));
  }
  m.finish();
  return p;
}

}  // namespace

std::vector<std::string> read_name_list(MapReader& m, std::string_view key) {
  YAML::Node n = m.get(key);
  if (!n)
    return {};
  if (n.IsSequence())
    return m.strings(key).value_or(std::vector<std::string>{});
  return split_commas(m.string(key).value_or(""));
}

std::optional<std::int64_t> Constants::number(const std::string& text) const {
  std::string t = text;
  if (auto it = values.find(text); it != values.end())
    t = it->second;
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size())
    return std::nullopt;
  return v;
}

std::string Constants::name(const std::string& text) const {
  auto it = values.find(text);
  return it == values.end() ? text : it->second;
}

namespace {

void read_table(const YamlDoc& doc, Constants& c) {
  MapReader top(doc, doc.root(), "constants file");
  if (!top.valid())
    return;
  YAML::Node table = top.require("const");
  if (table && !table.IsMap())
    doc.error(table, "'const' must be a mapping of names to values");
  for (auto it = table.begin(); table && table.IsMap() && it != table.end(); ++it) {
    if (it->second.IsScalar())
      c.values[it->first.Scalar()] = it->second.Scalar();
    else
      doc.error(it->second, "constant '" + it->first.Scalar() + "' must be a scalar");
  }
  top.finish();
}

}  // namespace

Constants parse_constants(const std::string& path, const std::string& text) {
  Diagnostics diag;
  YamlDoc doc(path, text, diag);
  Constants c;
  if (doc.root())
    read_table(doc, c);
  diag.throw_if_errors();
  return c;
}

Constants load_constants(const std::filesystem::path& path) {
  if (path.empty())
    return {};
  Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  return parse_constants(path.string(), *text);
}

const TensorUse* Operation::tensor(const std::string& n) const {
  for (const TensorUse& t : tensors)
    if (t.name == n)
      return &t;
  return nullptr;
}

const Operation* ProblemSpec::op(const std::string& name) const {
  for (const Operation& o : ops)
    if (o.name == name)
      return &o;
  return nullptr;
}

bool ProblemSpec::intermediate(const std::string& tensor) const {
  auto in = [&](const std::vector<std::string>& v) {
    return std::find(v.begin(), v.end(), tensor) != v.end();
  };
  return !in(ins) && !in(outs);
}

const TensorUse* ProblemSpec::tensor_use(const std::string& tag, const std::string& t) const {
  if (const Operation* o = op(tag))
    if (const TensorUse* u = o->tensor(t))
      return u;
  for (const Operation& o : ops)
    if (const TensorUse* u = o.tensor(t))
      return u;
  return nullptr;
}

ProblemSpec parse_problem(const std::string& path,
                          const std::string& text,
                          const Constants& constants) {
  Diagnostics diag;
  YamlDoc doc(path, text, diag);
  ProblemSpec p;
  if (doc.root())
    p = build(doc, constants);
  diag.throw_if_errors();
  return p;
}

ProblemSpec load_problem(const std::filesystem::path& path, const Constants& constants) {
  Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  return parse_problem(path.string(), *text, constants);
}

}  // namespace yirage::costmodel::comet
