// The yirage-plan command line, callable in-process: `run` parses the arguments, runs the
// subcommand and returns the exit code, writing only to the given streams.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace yirage::cli {

/// Exit codes of yirage-plan, one table for every subcommand (docs/cli.md).
enum ExitCode : int {
  kExitOk = 0,           // answered
  kExitCheckFailed = 1,  // a check found a problem (validate, a bench target missed)
  kExitBadInput = 2,     // bad input files or arguments; nothing was written
  kExitNoAnswer = 3,     // no answer: nothing fits, or the question is not supported yet
  kExitInternal = 70,    // a bug in yirage (EX_SOFTWARE)
  kExitOutput = 74,      // standard output could not be written (EX_IOERR): a full disk, say
};

/// Runs yirage-plan with `args` (without the program name).
int run(const std::vector<std::string>& args,
        std::ostream& out,
        std::ostream& err,
        bool err_is_terminal = false);

}  // namespace yirage::cli
