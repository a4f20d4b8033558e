// Absurd inputs at load: counts beyond what yirage can multiply without overflow are refused
// with the key, the value and the limit; a billion devices is accepted.
#include "devices/cluster_loader.h"
#include "devices/model_loader.h"
#include "devices/support/yaml_reader.h"
#include "devices/task_loader.h"

#include <gtest/gtest.h>

#include <string>

namespace yirage::devices {
namespace {

const DeviceRegistry& bundled() {
  static const DeviceRegistry r = DeviceRegistry::load_bundled();
  return r;
}

std::string cluster_text(const std::string& nodes, const std::string& per_node) {
  return "name: big\n"
         "node_groups:\n"
         "  - device: H100-SXM\n"
         "    nodes: " +
         nodes +
         "\n"
         "    devices_per_node: " +
         per_node +
         "\n"
         "    fabric: {kind: nvswitch, latency: 1 us}\n"
         "network: {topology: fat-tree, nic_bandwidth: 400 Gb/s, latency: 3 us}\n";
}

/// The rendered errors of loading `text` as a cluster, or empty when it loads.
std::string cluster_errors(const std::string& text) {
  try {
    parse_cluster("c.yaml", text, bundled());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Limits, ABillionDevicesLoad) {
  ClusterSpec c = parse_cluster("c.yaml", cluster_text("125000000", "8"), bundled());
  EXPECT_EQ(c.total_devices(), 1'000'000'000);
}

TEST(Limits, CountsAboveTwoToTheThirtyOneAreRefused) {
  EXPECT_EQ(cluster_errors(cluster_text("1000000000000", "8")),
            "c.yaml:4:12: error: 'nodes' is out of range: 1000000000000 (at most 2147483647)\n"
            "      nodes: 1000000000000\n"
            "             ^\n");
  EXPECT_NE(cluster_errors(cluster_text("99999999999999999999999", "8"))
                .find("'nodes' is out of range: 99999999999999999999999 (at most 2147483647)"),
            std::string::npos);
}

TEST(Limits, ClustersAboveTwoToTheThirtyOneDevicesAreRefused) {
  std::string e = cluster_errors(cluster_text("2000000000", "8"));
  EXPECT_NE(e.find("error: the cluster has 16000000000 devices; yirage plans clusters of at most "
                   "2147483647"),
            std::string::npos)
      << e;
}

TEST(Limits, EndlessSequencesAreRefused) {
  ModelRegistry models = ModelRegistry::load_bundled();
  try {
    parse_task("t.yaml",
               "name: endless\nmodel: llama3-8b\nmode: decode\nsequence_length: "
               "4611686018427387904\nglobal_batch: 32\n",
               models);
    FAIL() << "an endless sequence loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(e.items().front().message,
              "'sequence_length' is out of range: 4611686018427387904 (at most 2147483647)");
  }
}

}  // namespace
}  // namespace yirage::devices
