// What every libFuzzer target of tests/fuzz/ shares: the rule that a parser given any bytes
// either returns a value or throws `InputError` (bad input, exit code 2 in the CLI). Any
// other exception, a crash, a sanitizer report, a hang or a memory blow-up is a finding.
#pragma once

#include "devices/support/diagnostics.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace yirage::fuzz {

/// The fuzzer's bytes as the text of a file.
inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs `parse`; an `InputError` is the expected answer to bad input and must carry at
/// least one diagnostic, each of which renders. Anything else escapes to libFuzzer.
template <class F>
void expect_value_or_input_error(F&& parse) {
  try {
    parse();
  } catch (const devices::InputError& e) {
    if (e.items().empty())
      __builtin_trap();  // an InputError that says nothing is a finding
    for (const devices::Diagnostic& d : e.items())
      (void)devices::render(d);
  }
}

}  // namespace yirage::fuzz
