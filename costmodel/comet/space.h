// The mapping space of the reference implementation's sweeps: every dimension's size split
// into factors over eight mapping levels (DRAM temporal, DRAM spatial X and Y, GB temporal,
// GB spatial X and Y, core temporal, compute primitive), some fixed by a constraints file;
// and the recipe that turns one such split into the constants of the GEMM-Softmax mapping.
// Source: COMET (arXiv 2509.00599), comet-model.md §3.8; the reference's
// test/iterative_mapper/generate_constants.py (the symbol recipe).
#pragma once

#include "costmodel/comet/problem.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace yirage::costmodel::comet {

inline constexpr int kSweepLevels = 8;

/// Level names of the sweep, outer to inner, as constraints files name them
/// ("DRAM_temporal", "GB_spatial_X", ...).
const std::array<const char*, kSweepLevels>& sweep_level_names();

/// Factors fixed by a constraints file: dimension -> level -> factor.
struct FactorConstraints {
  std::map<std::string, std::map<int, std::int64_t>> fixed;

  bool operator==(const FactorConstraints&) const = default;
};

FactorConstraints load_constraints(const std::filesystem::path& path, const ProblemSpec& problem);
FactorConstraints parse_constraints(const std::string& path,
                                    const std::string& text,
                                    const ProblemSpec& problem);

/// One point of the space: per dimension, its factor at each level (product = its size).
using Candidate = std::map<std::string, std::array<std::int64_t, kSweepLevels>>;

/// Every candidate the constraints allow, in a fixed order. Empty when a fixed factor does not
/// divide its dimension.
std::vector<Candidate> enumerate_space(const ProblemSpec& problem, const FactorConstraints& c);

/// The constants of the GEMM-Softmax mapping (data/comet/mapping.yaml) for one candidate, by
/// the reference's recipe: e.g. M_SE = M_core x M_compute, N_SM = N_compute, red_factor =
/// M_compute.
Constants sweep_constants(const Candidate& c, const ProblemSpec& problem);

/// "M=[1,1,1,1,1,1,1,256] N=[...] K=[...]"
std::string describe(const Candidate& c);

}  // namespace yirage::costmodel::comet
