#include "devices/registry.h"

#include "devices/device_fields.h"

#include <gtest/gtest.h>

namespace yirage::devices {
namespace {

const DeviceRegistry& bundled() {
  static const DeviceRegistry r = DeviceRegistry::load_bundled();
  return r;
}

TEST(Registry, BundledHasTheRequiredDevices) {
  EXPECT_GE(bundled().devices().size(), 30u);
  for (const char* name :
       {"H100-SXM", "H100-PCIe",   "H200",       "B200",       "A100-40GB",  "A100-80GB",
        "V100",     "L40S",        "RTX-4090",   "RTX-3090",   "MI300X",     "MI325X",
        "MI250X",   "Max-1550",    "Gaudi2",     "Gaudi3",     "TPU-v4",     "TPU-v5e",
        "TPU-v5p",  "Ascend-910B", "Ascend-910", "Ascend-310", "Trainium2",  "Inferentia2",
        "M2-Ultra", "M3-Max",      "MetaX-C500", "EPYC-9654",  "Xeon-8480+", "Alveo-U280"}) {
    EXPECT_NE(bundled().find(name), nullptr) << name;
  }
}

// Every number of the bundled registry names a document of the file's `sources:` table.
TEST(Registry, EveryBundledNumberHasADocumentedSource) {
  for (const DeviceSpec& d : bundled().devices()) {
    for (const DeviceField& f : describe(d)) {
      if (!f.value)
        continue;
      EXPECT_FALSE(f.source.empty()) << d.name << " " << f.path;
      bool is_key_of_sources = false;
      for (const auto& [key, text] : d.sources)
        is_key_of_sources |= text == f.source;
      EXPECT_TRUE(is_key_of_sources) << d.name << " " << f.path << ": " << f.source;
    }
  }
}

TEST(Registry, BundledNumbersAreSane) {
  for (const DeviceSpec& d : bundled().devices()) {
    EXPECT_FALSE(d.peak.empty()) << d.name;
    EXPECT_GT(d.memory_capacity.value.value, 1e9) << d.name;
    EXPECT_GT(d.memory_bandwidth.value.value, 1e10) << d.name;
    if (d.tdp) {
      EXPECT_GT(d.tdp->value.value, 1) << d.name;
    }
    for (const auto& [type, rate] : d.peak) {
      EXPECT_GT(rate.value.value, 1e11) << d.name << " " << dtype_name(type);
      EXPECT_LT(rate.value.value, 1e17) << d.name << " " << dtype_name(type);
    }
  }
}

TEST(Registry, LookupIsCaseInsensitiveAndKnowsAliases) {
  const DeviceSpec* a = bundled().find("h100-sxm");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->name, "H100-SXM");
  for (const DeviceSpec& d : bundled().devices()) {
    for (const std::string& alias : d.aliases)
      EXPECT_EQ(bundled().find(alias), &d) << alias;
  }
}

TEST(Registry, DuplicateNamesAreRefused) {
  DeviceRegistry r = bundled();
  DeviceSpec copy = *r.find("H100-SXM");
  copy.aliases.clear();
  Diagnostics diag;
  r.add(copy, diag);
  ASSERT_EQ(diag.items().size(), 1u);
  EXPECT_NE(diag.items()[0].message.find("already used by 'H100-SXM'"), std::string::npos);
}

}  // namespace
}  // namespace yirage::devices
