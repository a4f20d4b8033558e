// The yirage-plan command line, callable in-process: `run` parses the arguments, runs the
// subcommand and returns the exit code, writing only to the given streams.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace yirage::cli {

/// Exit codes of yirage-plan.
enum ExitCode : int {
  kExitOk = 0,
  kExitCheckFailed = 1,  // a check found a problem (validate)
  kExitBadInput = 2,     // bad input files or arguments; nothing was written
  kExitUnavailable = 3,  // the requested capability is not built yet
};

/// Runs yirage-plan with `args` (without the program name).
int run(const std::vector<std::string>& args,
        std::ostream& out,
        std::ostream& err,
        bool err_is_terminal = false);

}  // namespace yirage::cli
