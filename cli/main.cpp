// yirage-plan: capacity planning for large-model workloads. See `yirage-plan --help`.
#include "cli/run.h"

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  int code = yirage::cli::run(args, std::cout, std::cerr, isatty(STDERR_FILENO) == 1);
  // An answer that did not reach its reader is not a success.
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "error: standard output could not be written (" << std::strerror(errno) << ")\n";
    return code == yirage::cli::kExitOk ? yirage::cli::kExitOutput : code;
  }
  return code;
}
