// yirage-plan: capacity planning for large-model workloads. See `yirage-plan --help`.
#include "cli/run.h"

#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return yirage::cli::run(args, std::cout, std::cerr, isatty(STDERR_FILENO) == 1);
}
