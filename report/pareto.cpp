#include "report/pareto.h"

#include "report/svg.h"

#include "devices/support/check.h"
#include "devices/support/units.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace yirage::report {

std::vector<std::size_t> pareto_front(const std::vector<ParetoPoint>& points) {
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const ParetoPoint& x = points[a];
    const ParetoPoint& y = points[b];
    if (x.cost != y.cost)
      return x.cost < y.cost;
    if (x.throughput != y.throughput)
      return x.throughput > y.throughput;
    return a < b;
  });
  std::vector<std::size_t> front;
  for (std::size_t i : order) {
    const ParetoPoint& p = points[i];
    if (front.empty()) {
      front.push_back(i);
      continue;
    }
    const ParetoPoint& last = points[front.back()];
    // Sorted by cost: p costs as much as the last or more, so only more throughput (or the
    // same point again) keeps it.
    bool same = p.cost == last.cost && p.throughput == last.throughput;
    if (same || p.throughput > last.throughput)
      front.push_back(i);
  }
  return front;
}

namespace {

constexpr double kWidth = 760;
constexpr double kHeight = 500;
constexpr double kLeft = 90;
constexpr double kRight = 190;  // the legend
constexpr double kTop = 50;
constexpr double kBottom = 60;

// A tick's label: 20k, 1.5M.
std::string tick(double v) {
  const char* suffix = "";
  for (auto [scale, name] : {std::pair{1e9, "G"}, std::pair{1e6, "M"}, std::pair{1e3, "k"}}) {
    if (std::abs(v) >= scale) {
      v /= scale;
      suffix = name;
      break;
    }
  }
  return devices::format_number(v, 3) + suffix;
}

// One axis: the range with some room, logarithmic where it spans a decade, and its ticks.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;

  Axis(double min, double max) {
    if (!(max > min)) {  // one value: a range around it
      min = min * 0.5;
      max = max * 1.5;
    }
    log = min > 0 && max / min > 10;
    if (log) {
      lo = std::pow(10, std::floor(std::log10(min)));
      hi = std::pow(10, std::ceil(std::log10(max)));
    } else {
      double pad = (max - min) * 0.08;
      lo = std::max(0.0, min - pad);
      hi = max + pad;
    }
  }

  // 0 at lo, 1 at hi.
  double at(double v) const {
    if (log)
      return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    return (v - lo) / (hi - lo);
  }

  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
      auto decades = static_cast<int>(std::lround(std::log10(hi / lo)));
      for (int k = 0; k <= decades; ++k) {
        double d = lo * std::pow(10, k);
        for (double m : {1.0, 2.0, 5.0}) {
          if (d * m <= hi * 1.0001)
            t.push_back(d * m);
        }
      }
      return t;
    }
    double step = svg::nice_step((hi - lo) / 6);
    auto first = static_cast<std::int64_t>(std::ceil(lo / step));
    auto last = static_cast<std::int64_t>(std::floor(hi / step));
    for (std::int64_t k = first; k <= last; ++k)
      t.push_back(static_cast<double>(k) * step);
    return t;
  }
};

// The plotting area: both axes and where a value lands.
struct Frame {
  Axis x, y;
  double width = kWidth - kLeft - kRight;
  double height = kHeight - kTop - kBottom;

  double px(double v) const { return kLeft + x.at(v) * width; }

  double py(double v) const { return kTop + (1 - y.at(v)) * height; }
};

Frame frame_of(const std::vector<ParetoPoint>& points) {
  double xmin = points[0].cost, xmax = xmin, ymin = points[0].throughput, ymax = ymin;
  for (const ParetoPoint& p : points) {
    CHECK(p.cost > 0 && p.throughput > 0 && std::isfinite(p.cost) && std::isfinite(p.throughput))
        << "a plotted point is not positive and finite";
    xmin = std::min(xmin, p.cost);
    xmax = std::max(xmax, p.cost);
    ymin = std::min(ymin, p.throughput);
    ymax = std::max(ymax, p.throughput);
  }
  return {Axis(xmin, xmax), Axis(ymin, ymax)};
}

// The grid, the ticks, the box and the axis labels.
void draw_axes(std::ostringstream& s,
               const Frame& f,
               const std::string& cost_label,
               const std::string& throughput_label) {
  for (double t : f.x.ticks()) {
    std::string x = svg::num(f.px(t));
    s << "<line x1=\"" << x << "\" y1=\"" << kTop << "\" x2=\"" << x << "\" y2=\""
      << kTop + f.height << "\" stroke=\"#e5e5e5\"/>\n";
    s << "<text x=\"" << x << "\" y=\"" << kTop + f.height + 16 << "\" text-anchor=\"middle\">"
      << svg::escape(tick(t)) << "</text>\n";
  }
  for (double t : f.y.ticks()) {
    std::string y = svg::num(f.py(t));
    s << "<line x1=\"" << kLeft << "\" y1=\"" << y << "\" x2=\"" << kLeft + f.width << "\" y2=\""
      << y << "\" stroke=\"#e5e5e5\"/>\n";
    s << "<text x=\"" << kLeft - 6 << "\" y=\"" << y << "\" dy=\"4\" text-anchor=\"end\">"
      << svg::escape(tick(t)) << "</text>\n";
  }
  s << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << f.width << "\" height=\""
    << f.height << "\" fill=\"none\" stroke=\"#444\"/>\n";
  s << "<text x=\"" << kLeft + f.width / 2 << "\" y=\"" << kHeight - 18
    << "\" text-anchor=\"middle\">" << svg::escape(cost_label) << (f.x.log ? " (log scale)" : "")
    << "</text>\n";
  s << "<text transform=\"translate(22 " << kTop + f.height / 2
    << ") rotate(-90)\" text-anchor=\"middle\">" << svg::escape(throughput_label)
    << (f.y.log ? " (log scale)" : "") << "</text>\n";
}

// The points, a colour per series in the order the series first appear, the front's ringed
// and joined by a line; then the legend.
void draw_points(std::ostringstream& s, const Frame& f, const std::vector<ParetoPoint>& points) {
  std::vector<std::size_t> front = pareto_front(points);
  s << "<polyline fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\" "
       "points=\"";
  for (std::size_t i : front)
    s << svg::num(f.px(points[i].cost)) << "," << svg::num(f.py(points[i].throughput)) << " ";
  s << "\"/>\n";
  std::map<std::string, std::size_t> colour;
  std::vector<std::string> series;
  for (const ParetoPoint& p : points) {
    if (colour.emplace(p.series, series.size()).second)
      series.push_back(p.series);
  }
  std::vector<bool> on_front(points.size(), false);
  for (std::size_t i : front)
    on_front[i] = true;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ParetoPoint& p = points[i];
    s << "<circle cx=\"" << svg::num(f.px(p.cost)) << "\" cy=\"" << svg::num(f.py(p.throughput))
      << "\" r=\"" << (on_front[i] ? 6 : 4) << "\" fill=\""
      << svg::kColours[colour[p.series] % svg::kColours.size()] << "\""
      << (on_front[i] ? " stroke=\"#000\" stroke-width=\"1.5\"" : " fill-opacity=\"0.75\"")
      << "><title>" << svg::escape(p.label) << "</title></circle>\n";
  }
  double lx = kLeft + f.width + 20;
  for (std::size_t k = 0; k < series.size(); ++k) {
    double y = kTop + 10 + static_cast<double>(k) * 20;
    s << "<circle cx=\"" << lx << "\" cy=\"" << y << "\" r=\"5\" fill=\""
      << svg::kColours[k % svg::kColours.size()] << "\"/>\n";
    s << "<text x=\"" << lx + 12 << "\" y=\"" << y + 4 << "\">" << svg::escape(series[k])
      << "</text>\n";
  }
  double fy = kTop + 10 + static_cast<double>(series.size()) * 20 + 10;
  s << "<line x1=\"" << lx - 6 << "\" y1=\"" << fy << "\" x2=\"" << lx + 6 << "\" y2=\"" << fy
    << "\" stroke=\"#222\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>\n";
  s << "<text x=\"" << lx + 12 << "\" y=\"" << fy + 4 << "\">Pareto front (ringed)</text>\n";
}

}  // namespace

std::string pareto_svg(const std::vector<ParetoPoint>& points,
                       const std::string& title,
                       const std::string& cost_label,
                       const std::string& throughput_label) {
  CHECK(!points.empty()) << "a Pareto plot needs points";
  Frame f = frame_of(points);
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
    << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << kLeft << "\" y=\"28\" font-size=\"15\" font-weight=\"bold\">"
    << svg::escape(title) << "</text>\n";
  draw_axes(s, f, cost_label, throughput_label);
  draw_points(s, f, points);
  s << "</svg>\n";
  return s.str();
}

}  // namespace yirage::report
