#include "report/structured_output.h"

#include "devices/support/check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace yirage::report {
namespace {

// A non-finite number would print as null (JSON) or .inf (YAML): refused as a bug, with nothing
// written.
TEST(StructuredOutput, RefusesNonFiniteNumbers) {
  nlohmann::ordered_json j;
  j["plans"] = nlohmann::ordered_json::array({{{"step_s", 1.5}}, {{"step_s", std::nan("")}}});
  for (bool yaml : {false, true}) {
    std::ostringstream out;
    EXPECT_THROW(write_structured(out, yaml, j), devices::InternalError);
    EXPECT_EQ(out.str(), "");
  }
  j["plans"][1]["step_s"] = 2.0;
  std::ostringstream out;
  write_structured(out, false, j);
  EXPECT_NE(out.str().find(R"("step_s": 2.0)"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace yirage::report
