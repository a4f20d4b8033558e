// What the SVG pictures share (report/pareto.h, report/plan_plot.h): text escaped for XML,
// coordinates to a tenth, a palette, and the 1-2-5 steps of an axis.
#pragma once

#include <array>
#include <string>

namespace yirage::report::svg {

/// A palette of eight colours that stay apart for the common kinds of colour blindness
/// (matplotlib's "tab10", less its greys).
inline constexpr std::array<const char*, 8> kColours = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                                        "#9467bd", "#17becf", "#8c564b", "#e377c2"};

/// `s` with &, <, > and " escaped.
std::string escape(const std::string& s);

/// A coordinate: `v` to one decimal.
std::string num(double v);

/// The smallest of 1, 2 or 5 times a power of ten that is at least `raw` (> 0).
double nice_step(double raw);

}  // namespace yirage::report::svg
