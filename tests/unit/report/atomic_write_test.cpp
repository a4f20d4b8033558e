// atomic_write: the file is replaced whole, an error leaves nothing behind, and a run
// interrupted by SIGINT in the middle of its writes leaves the old or the new file and no
// temporary file.
#include "report/atomic_write.h"

#include "tests/unit/scratch_files.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace yirage::report {
namespace {

namespace fs = std::filesystem;

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
    ++n;
  return n;
}

TEST(AtomicWrite, ReplacesTheFileAndLeavesNoTemporary) {
  fs::path dir = testing::scratch_dir("atomic_replace");
  EXPECT_EQ(atomic_write(dir / "plan.yaml", "old\n"), "");
  EXPECT_EQ(atomic_write(dir / "plan.yaml", "new\n"), "");
  EXPECT_EQ(testing::file_text(dir / "plan.yaml"), "new\n");
  EXPECT_EQ(entries(dir), 1u);
  fs::remove_all(dir);
}

TEST(AtomicWrite, AFailedWriteSaysWhyAndLeavesNothing) {
  fs::path dir = testing::scratch_dir("atomic_fail");
  std::string why = atomic_write(dir / "missing" / "plan.yaml", "x");
  EXPECT_NE(why.find("cannot write"), std::string::npos) << why;
  EXPECT_NE(why.find("No such file or directory"), std::string::npos) << why;
  EXPECT_EQ(entries(dir), 0u);
  fs::remove_all(dir);
}

TEST(AtomicWrite, AnInterruptedRunLeavesNoPartialFile) {
  fs::path dir = testing::scratch_dir("atomic_interrupt");
  const std::string text(8 << 20, 'y');  // 8 MiB: most of the child's time is in writes
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGINT, SIG_DFL);
    for (;;)
      atomic_write(dir / "trace.json", text);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(child, SIGINT);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_EQ(entries(dir), 1u) << "a temporary file was left behind";
  EXPECT_EQ(testing::file_text(dir / "trace.json").size(), text.size());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace yirage::report
