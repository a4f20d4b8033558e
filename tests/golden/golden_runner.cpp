// Runs one golden case: yirage-plan, in-process, in the case's folder, with the arguments
// in its `args` file (one per line); compares exit code, stdout and stderr with
// `expected.txt`. GOLDEN_UPDATE=1 writes `expected.txt` instead.
#include "cli/run.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> read_args(const std::filesystem::path& p) {
  std::vector<std::string> args;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.front() != '#')
      args.push_back(line);
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: golden_runner CASE_DIR\n";
    return 2;
  }
  std::filesystem::path dir = std::filesystem::absolute(argv[1]);
  std::vector<std::string> args = read_args(dir / "args");
  std::filesystem::current_path(dir);
  std::ostringstream out;
  std::ostringstream err;
  int code = yirage::cli::run(args, out, err);
  std::string actual =
      "exit " + std::to_string(code) + "\n--- stdout\n" + out.str() + "--- stderr\n" + err.str();
  const char* update = std::getenv("GOLDEN_UPDATE");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(dir / "expected.txt", std::ios::binary) << actual;
    std::cout << "updated " << (dir / "expected.txt").string() << "\n";
    return 0;
  }
  std::string expected = read(dir / "expected.txt");
  if (actual == expected)
    return 0;
  std::cout << "golden mismatch in " << dir.string() << "\n--- expected\n"
            << expected << "--- actual\n"
            << actual;
  return 1;
}
