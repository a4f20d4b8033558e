// Outputs stay inside what the user named: names from input files become one safe path
// component whatever their bytes, and no output replaces an input or a non-regular file.
#include "cli/output_file.h"

#include "tests/unit/scratch_files.h"

#include "devices/support/input_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>

namespace yirage::cli {
namespace {

namespace fs = std::filesystem;

bool safe_part(const std::string& part) {
  if (part.empty() || part.front() == '.' || part.front() == '-')
    return false;
  for (char c : part) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok)
      return false;
  }
  return true;
}

TEST(FileNamePart, KeepsPlainNames) {
  EXPECT_EQ(file_name_part("H100-SXM"), "H100-SXM");
  EXPECT_EQ(file_name_part("gated_mlp.cu"), "gated_mlp.cu");
}

TEST(FileNamePart, HostileNamesStayOneComponent) {
  EXPECT_EQ(file_name_part("../../x"), "_.._.._x");
  EXPECT_EQ(file_name_part(".."), "_..");
  EXPECT_EQ(file_name_part(""), "_");
  EXPECT_EQ(file_name_part("/etc/passwd"), "_etc_passwd");
  EXPECT_EQ(file_name_part("-rf"), "_-rf");
  EXPECT_EQ(file_name_part("a\nb\x1b[31m"), "a_b__31m");
}

// Property: any bytes at all give a part that, joined to a folder, names a file directly in
// that folder.
TEST(FileNamePart, AnyBytesNameAFileInsideTheFolder) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 24);
  const fs::path dir = "/out/kernels";
  for (int i = 0; i < 5000; ++i) {
    std::string name(static_cast<std::size_t>(length(rng)), '\0');
    for (char& c : name)
      c = static_cast<char>(byte(rng));
    std::string part = file_name_part(name);
    ASSERT_TRUE(safe_part(part)) << "from " << i;
    EXPECT_EQ((dir / part).lexically_normal().parent_path(), dir);
    EXPECT_EQ(file_name_part(name), part);  // deterministic
  }
}

TEST(WriteOutput, RefusesToReplaceAnInputFile) {
  fs::path dir = testing::scratch_dir("output_input");
  fs::path input = dir / "cluster.yaml";
  std::ofstream(input) << "name: c\n";
  devices::note_input_file(input);
  std::string why = write_output(input, "overwritten\n");
  EXPECT_NE(why.find("one of this run's input files"), std::string::npos) << why;
  EXPECT_EQ(testing::file_text(input), "name: c\n");
  // Also through another name for the same file.
  fs::create_hard_link(input, dir / "alias.yaml");
  EXPECT_FALSE(write_output(dir / "alias.yaml", "x").empty());
  EXPECT_EQ(testing::file_text(input), "name: c\n");
  fs::remove_all(dir);
}

TEST(WriteOutput, RefusesNonRegularTargets) {
  fs::path dir = testing::scratch_dir("output_special");
  EXPECT_NE(write_output("/dev/null", "x").find("not a regular file"), std::string::npos);
  fs::create_directories(dir / "folder");
  EXPECT_NE(write_output(dir / "folder", "x").find("not a regular file"), std::string::npos);
  std::ofstream(dir / "target") << "kept\n";
  fs::create_symlink(dir / "target", dir / "link");
  EXPECT_NE(write_output(dir / "link", "x").find("not a regular file"), std::string::npos);
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(testing::file_text(dir / "target"), "kept\n");
  EXPECT_EQ(write_output(dir / "new.yaml", "fresh\n"), "");
  EXPECT_EQ(testing::file_text(dir / "new.yaml"), "fresh\n");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace yirage::cli
