// How often a piece of text occurs in another, for tests of generated text (SVG, source).
#pragma once

#include <string>

namespace yirage::testing {

/// The occurrences of `what` in `text`, overlapping ones included.
inline std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

}  // namespace yirage::testing
