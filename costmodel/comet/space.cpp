#include "costmodel/comet/space.h"

#include "costmodel/comet/yaml_util.h"

#include <algorithm>
#include <sstream>

namespace yirage::costmodel::comet {
namespace {

using devices::Diagnostics;
using devices::MapReader;
using devices::YamlDoc;

int level_index(const std::string& target, const std::string& type, int row) {
  std::string name = target + "_" + type;
  if (type == "spatial")
    name += row == 0 ? "_X" : "_Y";
  const auto& names = sweep_level_names();
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

void read_constraint(const YamlDoc& doc,
                     const YAML::Node& n,
                     const ProblemSpec& problem,
                     FactorConstraints& out) {
  MapReader m(doc, n, "constraint");
  if (!m.valid())
    return;
  std::string target = m.choice("target", {"DRAM", "GB"}, true).value_or("DRAM");
  std::string type = m.choice("type", {"temporal", "spatial"}, true).value_or("temporal");
  m.string("tensor");
  YAML::Node rows = m.require("factors");
  if (rows && rows.IsSequence()) {
    for (std::size_t r = 0; r < rows.size(); ++r) {
      int level = level_index(target, type, static_cast<int>(r));
      std::string error;
      auto assignments =
          rows[r].IsScalar() ? parse_assignments(rows[r].Scalar(), error) : std::nullopt;
      if (level < 0 || !assignments) {
        doc.error(rows[r], level < 0 ? "too many factor rows" : "bad factors: " + error);
        continue;
      }
      for (const Assignment& a : *assignments) {
        std::int64_t v = 0;
        std::istringstream in(a.values.front());
        if (!(in >> v) || v < 1 || a.values.size() != 1)
          doc.error(rows[r], "factor of '" + a.dim + "' must be a positive whole number");
        else if (std::find(problem.dims.begin(), problem.dims.end(), a.dim) != problem.dims.end())
          out.fixed[a.dim][level] = v;  // dimensions the problem lacks (ND) are ignored
      }
    }
  }
  m.finish();
}

// Every ordered split of `n` into the free slots of `slots` (fixed ones already set).
void splits(std::int64_t n,
            std::array<std::int64_t, kSweepLevels>& slots,
            const std::vector<int>& free,
            std::size_t k,
            std::vector<std::array<std::int64_t, kSweepLevels>>& out) {
  if (k + 1 == free.size()) {
    slots[free[k]] = n;
    out.push_back(slots);
    return;
  }
  for (std::int64_t d = 1; d <= n; ++d) {
    if (n % d != 0)
      continue;
    slots[free[k]] = d;
    splits(n / d, slots, free, k + 1, out);
  }
}

std::vector<std::array<std::int64_t, kSweepLevels>> dim_choices(
    std::int64_t size, const std::map<int, std::int64_t>& fixed) {
  std::array<std::int64_t, kSweepLevels> slots{};
  std::vector<int> free;
  std::int64_t rest = size;
  for (int l = 0; l < kSweepLevels; ++l) {
    auto it = fixed.find(l);
    if (it == fixed.end()) {
      free.push_back(l);
      continue;
    }
    slots[l] = it->second;
    if (rest % it->second != 0)
      return {};
    rest /= it->second;
  }
  std::vector<std::array<std::int64_t, kSweepLevels>> out;
  if (free.empty()) {
    if (rest == 1)
      out.push_back(slots);
    return out;
  }
  splits(rest, slots, free, 0, out);
  return out;
}

}  // namespace

const std::array<const char*, kSweepLevels>& sweep_level_names() {
  static const std::array<const char*, kSweepLevels> names = {
      "DRAM_temporal", "DRAM_spatial_X", "DRAM_spatial_Y", "GB_temporal",
      "GB_spatial_X",  "GB_spatial_Y",   "Core_temporal",  "Compute"};
  return names;
}

FactorConstraints parse_constraints(const std::string& path,
                                    const std::string& text,
                                    const ProblemSpec& problem) {
  Diagnostics diag;
  YamlDoc doc(path, text, diag);
  FactorConstraints out;
  if (doc.root()) {
    MapReader top(doc, doc.root(), "constraints file");
    if (top.valid()) {
      YAML::Node list = top.require("mapping_constraints");
      if (list && list.IsSequence())
        for (const YAML::Node& n : list)
          read_constraint(doc, n, problem, out);
      else if (list)
        doc.error(list, "'mapping_constraints' must be a list");
      top.finish();
    }
  }
  diag.throw_if_errors();
  return out;
}

FactorConstraints load_constraints(const std::filesystem::path& path, const ProblemSpec& problem) {
  Diagnostics diag;
  std::optional<std::string> text = devices::read_file_text(path, diag);
  diag.throw_if_errors();
  return parse_constraints(path.string(), *text, problem);
}

std::vector<Candidate> enumerate_space(const ProblemSpec& problem, const FactorConstraints& c) {
  std::vector<Candidate> out{Candidate{}};
  for (const std::string& d : problem.dims) {
    auto it = c.fixed.find(d);
    auto choices = dim_choices(problem.sizes.at(d),
                               it == c.fixed.end() ? std::map<int, std::int64_t>{} : it->second);
    std::vector<Candidate> next;
    for (const Candidate& partial : out) {
      for (const auto& f : choices) {
        next.push_back(partial);
        next.back()[d] = f;
      }
    }
    out = std::move(next);
  }
  return out;
}

Constants sweep_constants(const Candidate& c, const ProblemSpec& problem) {
  auto f = [&](const char* dim, int level) {
    auto it = c.find(dim);
    return it == c.end() ? std::int64_t{1} : it->second[level];
  };
  auto size = [&](const char* dim) {
    auto it = problem.sizes.find(dim);
    return it == problem.sizes.end() ? std::int64_t{1} : it->second;
  };
  std::map<std::string, std::int64_t> v = {{"M", size("M")},
                                           {"N", size("N")},
                                           {"K", size("K")},
                                           {"M_A_DRAM_temporal", f("M", 0)},
                                           {"M_H_DRAM_temporal", f("M", 0)},
                                           {"N_DRAM_spatial_X", f("N", 1)},
                                           {"N_DRAM_spatial_Y", f("N", 2)},
                                           {"K_A_GB_temporal", f("K", 3)},
                                           {"M_A_GB_temporal", f("M", 3)},
                                           {"M_D_GB_temporal", f("M", 3)},
                                           {"M_F_GB_temporal", f("M", 3)},
                                           {"M_H_GB_temporal", f("M", 3)},
                                           {"N_A_GB_temporal", f("N", 3)},
                                           {"N_GB_spatial_X", f("N", 4)},
                                           {"N_GB_spatial_Y", f("N", 5)},
                                           {"M_Core_temporal", f("M", 6)},
                                           {"N_Core_temporal", f("N", 6)},
                                           {"K_Core_temporal", f("K", 6)},
                                           {"M_Compute", f("M", 7)},
                                           {"N_Compute", f("N", 7)},
                                           {"K_Compute", f("K", 7)},
                                           {"M_SE", f("M", 6) * f("M", 7)},
                                           {"N_SE", f("N", 6)},
                                           {"K_SE", 1},
                                           {"M_SM", 1},
                                           {"N_SM", f("N", 7)},
                                           {"K_SM", size("K")},
                                           {"red_dim_simd_val", size("K")},
                                           {"red_factor", f("M", 7)}};
  Constants out;
  for (const auto& [k, x] : v)
    out.values[k] = std::to_string(x);
  out.values["red_dim_simd"] = "K";
  out.values["red_dim"] = "M";
  return out;
}

std::string describe(const Candidate& c) {
  std::ostringstream s;
  bool first = true;
  for (const auto& [dim, f] : c) {
    s << (first ? "" : " ") << dim << "=[";
    for (int l = 0; l < kSweepLevels; ++l)
      s << (l ? "," : "") << f[l];
    s << "]";
    first = false;
  }
  return s.str();
}

}  // namespace yirage::costmodel::comet
