#include "cli/progress.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

namespace yirage::cli {
namespace {

// Pipes, files and tests never see progress lines.
TEST(Progress, SilentWhenNotATerminal) {
  std::ostringstream err;
  {
    Progress p(err, "capacity", false);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    p.step("64 nodes");
  }
  EXPECT_EQ(err.str(), "");
}

// On a terminal: nothing during the first second, then one rewritten line, erased at the end.
TEST(Progress, ShownAfterASecondAndErased) {
  std::ostringstream err;
  {
    Progress p(err, "capacity", true);
    p.step("1 node");
    EXPECT_EQ(err.str(), "");
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    p.step("2 nodes");
    EXPECT_NE(err.str().find("capacity: 2 done, 2 nodes"), std::string::npos) << err.str();
  }
  EXPECT_TRUE(err.str().ends_with("\r\033[K"));
}

}  // namespace
}  // namespace yirage::cli
