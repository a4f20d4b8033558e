#include "report/structured_output.h"

#include "devices/support/check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace yirage::report {
namespace {

// A non-finite number would print as null (JSON) or .inf (YAML): refused as a bug, with nothing
// written.
TEST(StructuredOutput, RefusesNonFiniteNumbers) {
  nlohmann::ordered_json j;
  j["plans"] = nlohmann::ordered_json::array({{{"step_s", 1.5}}, {{"step_s", std::nan("")}}});
  for (bool yaml : {false, true}) {
    std::ostringstream out;
    EXPECT_THROW(write_structured(out, yaml, "training", j), devices::InternalError);
    EXPECT_EQ(out.str(), "");
  }
  j["plans"][1]["step_s"] = 2.0;
  std::ostringstream out;
  write_structured(out, false, "training", j);
  EXPECT_NE(out.str().find(R"("step_s": 2.0)"), std::string::npos) << out.str();
}

// Every document opens with its schema version and its kind, then the command's keys.
TEST(StructuredOutput, OpensWithSchemaAndKind) {
  nlohmann::ordered_json j = {{"cluster", "c"}, {"plans", nlohmann::ordered_json::array()}};
  std::ostringstream out;
  write_structured(out, false, "training", j);
  auto doc = nlohmann::ordered_json::parse(out.str());
  std::vector<std::string> keys;
  for (const auto& [key, value] : doc.items())
    keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"schema", "kind", "cluster", "plans"}));
  EXPECT_EQ(doc["schema"], kSchemaVersion);
  EXPECT_EQ(doc["kind"], "training");
}

}  // namespace
}  // namespace yirage::report
