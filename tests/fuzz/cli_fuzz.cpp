// libFuzzer target, end to end: whole input files run through the real subcommands. The bytes
// are a selector, then up to three files separated by lines of "%%": a cluster, a task, and a
// plan or tensor program. They are written to a fresh folder and `yirage-plan` runs in-process
// on them: the main form (with --save-plan), `simulate`, `capacity`, the main form with
// --plan, or `superoptimize`, each writing only into an output folder it is given.
//
// A finding is: a crash or sanitizer report; an exit code outside the table (0 answered,
// 1 check failed, 2 bad input, 3 no answer), an internal error (70) included; `inf` or `nan`
// in what was printed; a file written anywhere but the output folder.
#include "cli/run.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::vector<std::string> split_files(const std::string& text) {
  std::vector<std::string> parts(1);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line == "%%" && parts.size() < 3) {
      parts.emplace_back();
      continue;
    }
    parts.back() += line + "\n";
  }
  parts.resize(3);
  return parts;
}

// Every regular file under `root` that is not under `allowed`.
bool wrote_outside(const fs::path& root, const fs::path& inputs, const fs::path& allowed) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    fs::path p = it->path();
    if (it->is_directory(ec))
      continue;
    auto under = [&](const fs::path& dir) {
      auto rel = p.lexically_relative(dir);
      return !rel.empty() && *rel.begin() != "..";
    };
    if (!under(allowed) && !(p.parent_path() == inputs))
      return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1)
    return 0;
  // Each run in its own folder, three levels below a root the check walks, so that a path
  // climbing out of the output folder ("../../x") still lands where it is seen.
  static const fs::path root =
      fs::temp_directory_path() / ("yirage_cli_fuzz_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path inputs = root / "a" / "b" / "in";
  const fs::path out = root / "a" / "b" / "out";
  fs::create_directories(inputs);
  fs::create_directories(out);
  std::vector<std::string> files =
      split_files(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  const char* names[] = {"cluster.yaml", "task.yaml", "third.yaml"};
  for (int i = 0; i < 3; ++i)
    std::ofstream(inputs / names[i], std::ios::binary) << files[static_cast<std::size_t>(i)];
  std::string cluster = (inputs / "cluster.yaml").string();
  std::string task = (inputs / "task.yaml").string();
  std::string third = (inputs / "third.yaml").string();
  std::vector<std::string> args;
  switch (data[0] % 5) {
    case 0:
      args = {cluster, task, "--top", "3", "--save-plan", (out / "plan.yaml").string()};
      break;
    case 1:
      args = {"simulate", cluster, task, "--top", "1"};
      break;
    case 2:
      args = {"capacity", cluster, task, "--tokens-per-s", "1e5", "--max-nodes", "64"};
      break;
    case 3:
      args = {cluster, task, "--plan", third};
      break;
    default:
      args = {"superoptimize", third,        "--device",     "H100-SXM",
              "--out",         out.string(), "--time-limit", "2"};
      break;
  }
  std::ostringstream o;
  std::ostringstream e;
  int code = yirage::cli::run(args, o, e);
  if (code < 0 || code > 3)
    __builtin_trap();  // outside the table: an internal error (70) or worse
  // A non-finite number as the formatters print one: "inf s", "nan%", "-inf GB/s", or alone
  // as a value ("error 0.1", "error nan"). A name from the files may be "inf" too: a finding
  // there is looked at, not assumed.
  static const std::regex non_finite(
      R"((^|[^A-Za-z0-9_'])-?(inf|nan) ?([kMGTPE]?(s|B|B/s|b/s|J|W|FLOPS|Hz)|ms|us|ns|%)([^A-Za-z]|$))"
      R"(|[ :=(]-?(inf|nan)([ ,;)
]|$))");
  if (std::regex_search(o.str(), non_finite) || std::regex_search(e.str(), non_finite))
    __builtin_trap();
  if (wrote_outside(root, inputs, out))
    __builtin_trap();
  fs::remove_all(root);
  return 0;
}
