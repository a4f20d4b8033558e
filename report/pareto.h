// The Pareto front of scenarios that trade a cost (lower is better) against a throughput
// (higher is better), and an SVG of it: every scenario a point coloured by its series, the
// front a line through its points. `sweep --svg` writes it; any browser opens it.
#pragma once

#include <string>
#include <vector>

namespace yirage::report {

struct ParetoPoint {
  double cost = 0;        // x: lower is better (> 0)
  double throughput = 0;  // y: higher is better (> 0)
  std::string series;     // the legend entry (a device)
  std::string label;      // the point's tooltip
};

/// The indices of the points no other point beats on both axes (as good on one and better on
/// the other), by cost ascending. Equal points are all on the front.
std::vector<std::size_t> pareto_front(const std::vector<ParetoPoint>& points);

/// An SVG document of the points and their front. Each axis is logarithmic where its values
/// span more than a factor of ten.
std::string pareto_svg(const std::vector<ParetoPoint>& points,
                       const std::string& title,
                       const std::string& cost_label,
                       const std::string& throughput_label);

}  // namespace yirage::report
