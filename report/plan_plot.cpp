#include "report/plan_plot.h"

#include "report/summary.h"
#include "report/svg.h"

#include "devices/support/check.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace yirage::report {
namespace {

constexpr double kBars = 560;  // the bars' width
constexpr double kChar = 7;    // a character of the 12-pixel labels, at most
constexpr double kRight = 30;
constexpr double kBar = 18;
constexpr double kGap = 8;

struct Bar {
  std::string label;
  std::vector<double> parts;
  double limit = 0;  // a line across the bar (usable memory); 0: none
};

struct Chart {
  std::string title;
  std::vector<std::string> part_names;
  std::string (*format)(double) = nullptr;
  std::vector<Bar> bars;
};

// Draws `c` from `top`; returns where it ends.
double draw(std::ostringstream& s, const Chart& c, double top, double label_width) {
  double hi = 0;
  for (const Bar& b : c.bars) {
    double sum = 0;
    for (double p : b.parts)
      sum += std::max(0.0, p);
    hi = std::max({hi, sum, b.limit});
  }
  if (!(hi > 0))
    hi = 1;
  double step = svg::nice_step(hi / 6);
  hi = std::ceil(hi / step) * step;
  double x0 = label_width, w = kBars;
  auto px = [&](double v) {
    return x0 + v / hi * w;
  };
  s << "<text x=\"10\" y=\"" << top + 14 << "\" font-size=\"14\" font-weight=\"bold\">"
    << svg::escape(c.title) << "</text>\n";
  // The legend, one line.
  double lx = 10;
  double ly = top + 32;
  for (std::size_t k = 0; k < c.part_names.size(); ++k) {
    s << "<rect x=\"" << svg::num(lx) << "\" y=\"" << ly - 9
      << "\" width=\"10\" height=\"10\" fill=\"" << svg::kColours[k % svg::kColours.size()]
      << "\"/>\n";
    s << "<text x=\"" << svg::num(lx + 14) << "\" y=\"" << ly << "\">"
      << svg::escape(c.part_names[k]) << "</text>\n";
    lx += 24 + 7.2 * static_cast<double>(c.part_names[k].size());
  }
  double y = top + 48;
  double bars_top = y;
  for (const Bar& b : c.bars) {
    s << "<text x=\"" << x0 - 8 << "\" y=\"" << y + 13 << "\" text-anchor=\"end\">"
      << svg::escape(b.label) << "</text>\n";
    double at = 0;
    for (std::size_t k = 0; k < b.parts.size(); ++k) {
      double v = std::max(0.0, b.parts[k]);
      if (v <= 0)
        continue;
      s << "<rect x=\"" << svg::num(px(at)) << "\" y=\"" << y << "\" width=\""
        << svg::num(std::max(0.5, px(at + v) - px(at))) << "\" height=\"" << kBar << "\" fill=\""
        << svg::kColours[k % svg::kColours.size()] << "\"><title>" << svg::escape(c.part_names[k])
        << ": " << svg::escape(c.format(v)) << "</title></rect>\n";
      at += v;
    }
    s << "<text x=\"" << svg::num(px(std::max(at, b.limit)) + 4) << "\" y=\"" << y + 13
      << "\" font-size=\"11\">" << svg::escape(c.format(at)) << "</text>\n";
    if (b.limit > 0) {
      s << "<line x1=\"" << svg::num(px(b.limit)) << "\" y1=\"" << y - 2 << "\" x2=\""
        << svg::num(px(b.limit)) << "\" y2=\"" << y + kBar + 2
        << "\" stroke=\"#000\" stroke-width=\"2\"><title>usable: " << svg::escape(c.format(b.limit))
        << "</title></line>\n";
    }
    y += kBar + kGap;
  }
  // The axis.
  s << "<line x1=\"" << x0 << "\" y1=\"" << y << "\" x2=\"" << x0 + w << "\" y2=\"" << y
    << "\" stroke=\"#444\"/>\n";
  auto ticks = static_cast<std::int64_t>(std::lround(hi / step));
  for (std::int64_t k = 0; k <= ticks; ++k) {
    double t = static_cast<double>(k) * step;
    s << "<line x1=\"" << svg::num(px(t)) << "\" y1=\"" << bars_top - 4 << "\" x2=\""
      << svg::num(px(t)) << "\" y2=\"" << y << "\" stroke=\"#e5e5e5\"/>\n";
    s << "<text x=\"" << svg::num(px(t)) << "\" y=\"" << y + 15 << "\" text-anchor=\"middle\">"
      << svg::escape(c.format(t)) << "</text>\n";
  }
  return y + 30;
}

std::string document(const std::string& title, const std::vector<Chart>& charts) {
  // The labels (the layouts) set the left margin; the bars, their totals and the margin the
  // rest.
  std::size_t longest = 0;
  for (const Chart& c : charts) {
    for (const Bar& b : c.bars)
      longest = std::max(longest, b.label.size());
  }
  double label_width = 20 + kChar * static_cast<double>(longest);
  double width = label_width + kBars + kRight + 70;
  std::ostringstream body;
  double y = 40;
  for (const Chart& c : charts)
    y = draw(body, c, y, label_width);
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << svg::num(width) << "\" height=\""
    << svg::num(y) << "\" viewBox=\"0 0 " << svg::num(width) << " " << svg::num(y)
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" << svg::escape(title)
    << "</text>\n";
  s << body.str() << "</svg>\n";
  return s.str();
}

std::string rank_label(std::size_t i, const std::string& layout) {
  return std::to_string(i + 1) + "  " + layout;
}

}  // namespace

std::string training_plot_svg(const std::string& title,
                              const std::vector<planner::PlanEstimate>& plans,
                              std::size_t count) {
  CHECK(!plans.empty()) << "a plot needs a plan";
  Chart step{"Step time per plan",
             {"compute", "TP comm", "PP comm", "bubble", "exposed DP comm", "optimizer"},
             secs,
             {}};
  Chart memory{"Memory per device (the black mark: what it can use)",
               {"weights", "gradients", "optimizer", "activations"},
               bytes,
               {}};
  for (std::size_t i = 0; i < plans.size() && i < count; ++i) {
    const planner::PlanEstimate& p = plans[i];
    const planner::StepBreakdown& b = p.step;
    std::string label = rank_label(i, p.layout.str());
    step.bars.push_back(
        {label, {b.compute, b.tp_comm, b.pp_comm, b.bubble, b.dp_comm, b.optimizer}, 0});
    const planner::MemoryUse& m = p.memory;
    memory.bars.push_back(
        {label, {m.weights, m.gradients, m.optimizer, m.activations}, m.capacity});
  }
  return document(title, {step, memory});
}

std::string inference_plot_svg(const std::string& title,
                               const std::vector<planner::InferEstimate>& plans,
                               std::size_t count) {
  CHECK(!plans.empty()) << "a plot needs a plan";
  bool prefill = plans.front().mode == devices::Mode::kPrefill;
  Chart time{prefill ? "Time to first token per plan" : "Time per output token per plan",
             {prefill ? "TTFT" : "TPOT"},
             secs,
             {}};
  Chart memory{"Memory per device (the black mark: what it can use)",
               {"weights", "KV cache", "workspace"},
               bytes,
               {}};
  for (std::size_t i = 0; i < plans.size() && i < count; ++i) {
    const planner::InferEstimate& p = plans[i];
    std::string label = rank_label(i, p.layout.str());
    time.bars.push_back({label, {prefill ? p.ttft : p.tpot}, 0});
    memory.bars.push_back({label, {p.weights, p.kv_cache, p.workspace}, p.capacity});
  }
  return document(title, {time, memory});
}

}  // namespace yirage::report
