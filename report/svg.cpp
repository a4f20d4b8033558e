#include "report/svg.h"

#include <cmath>
#include <sstream>

namespace yirage::report::svg {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << v;
  return s.str();
}

double nice_step(double raw) {
  double step = std::pow(10, std::floor(std::log10(raw)));
  for (int m : {1, 2, 5}) {
    if (step * m >= raw)
      return step * m;
  }
  return step * 10;
}

}  // namespace yirage::report::svg
