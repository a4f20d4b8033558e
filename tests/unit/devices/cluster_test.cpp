#include "devices/cluster_loader.h"

#include <gtest/gtest.h>

namespace yirage::devices {
namespace {

const DeviceRegistry& bundled() {
  static const DeviceRegistry r = DeviceRegistry::load_bundled();
  return r;
}

std::string first_error(const std::string& text) {
  try {
    parse_cluster("c.yaml", text, bundled());
  } catch (const InputError& e) {
    return e.items().front().message;
  }
  return "";
}

TEST(Cluster, FabricDefaultsComeFromTheDevice) {
  ClusterSpec c = parse_cluster("c.yaml",
                                "name: dgx\n"
                                "node_groups:\n"
                                "  - device: h100-sxm\n"
                                "    nodes: 1\n"
                                "    devices_per_node: 8\n"
                                "    fabric: {kind: nvswitch, latency: 1 us}\n",
                                bundled());
  ASSERT_EQ(c.groups.size(), 1u);
  EXPECT_EQ(c.groups[0].device, "H100-SXM");
  EXPECT_EQ(c.groups[0].name, "H100-SXM");
  EXPECT_EQ(c.groups[0].fabric.bandwidth, bundled().find("H100-SXM")->links.at(0).bandwidth.value);
  EXPECT_DOUBLE_EQ(c.groups[0].fabric.latency.value, 1e-6);
  EXPECT_EQ(c.total_devices(), 8);
  ASSERT_EQ(c.device_types.size(), 1u);
}

// A node group's price overrides its device's; a group with neither leaves the cluster
// unpriced.
TEST(Cluster, PricesComeFromTheGroupElseTheDevice) {
  const std::string network =
      "network: {topology: fat-tree, nic_bandwidth: 400 Gbps, latency: 5 us}\n";
  ClusterSpec c =
      parse_cluster("c.yaml",
                    "name: two\n"
                    "node_groups:\n"
                    "  - {name: listed, device: H100-SXM, nodes: 1, devices_per_node: 1}\n"
                    "  - {name: deal, device: H100-SXM, nodes: 1, devices_per_node: 2,\n"
                    "     fabric: {kind: nvswitch}, price: 2 USD/h}\n" +
                        network,
                    bundled());
  double listed = bundled().find("H100-SXM")->price->value.value;
  EXPECT_DOUBLE_EQ(*c.price_per_hour(c.groups[0]), listed);
  EXPECT_DOUBLE_EQ(*c.price_per_hour(c.groups[1]), 2.0);
  EXPECT_DOUBLE_EQ(*c.usd_per_hour(), listed + 2 * 2.0);

  ClusterSpec unpriced =
      parse_cluster("c.yaml",
                    "name: mixed\n"
                    "node_groups:\n"
                    "  - {device: H100-SXM, nodes: 1, devices_per_node: 1}\n"
                    "  - {device: Ascend-910B, nodes: 1, devices_per_node: 1}\n" +
                        network,
                    bundled());
  EXPECT_FALSE(unpriced.usd_per_hour().has_value());
  // A price needs its unit, per hour.
  EXPECT_NE(first_error("name: c\nnode_groups:\n  - {device: H100-SXM, nodes: 1, "
                        "devices_per_node: 1, price: 3 USD}\n")
                .find("USD/h"),
            std::string::npos);
}

TEST(Cluster, InlineDevicesCanBeUsed) {
  ClusterSpec c = parse_cluster("c.yaml",
                                "name: custom\n"
                                "devices:\n"
                                "  - name: MyChip\n"
                                "    vendor: Me\n"
                                "    kind: accelerator\n"
                                "    backend: none\n"
                                "    peak: {bf16: 100 TFLOPS}\n"
                                "    memory: {capacity: 32 GiB, bandwidth: 1 TB/s}\n"
                                "    onchip: {compute_units: 8, clock: 1 GHz, warp_width: 32,\n"
                                "             matrix_unit: {kind: none}}\n"
                                "    power: {tdp: 200 W}\n"
                                "node_groups:\n"
                                "  - {device: mychip, nodes: 1, devices_per_node: 1}\n",
                                bundled());
  ASSERT_EQ(c.device_types.size(), 1u);
  EXPECT_EQ(c.device_types[0].name, "MyChip");
  // Without a sources table, a number's source is where it was written.
  ASSERT_TRUE(c.device_types[0].tdp);
  EXPECT_EQ(c.device_types[0].tdp->source, "c.yaml:11:18");
}

TEST(Cluster, ProblemsAreReported) {
  EXPECT_EQ(
      first_error("name: x\nnode_groups:\n  - {device: H1000, nodes: 1, devices_per_node: 1}\n"),
      "unknown device type 'H1000'; did you mean 'H100'? (`yirage-plan devices` lists them)");
  EXPECT_EQ(
      first_error("name: x\nnode_groups:\n  - {device: H100, nodes: 2, devices_per_node: 1}\n"),
      "the cluster has 2 nodes but no 'network' between them");
  EXPECT_EQ(first_error("name: x\nnode_groups: []\n"),
            "'node_groups' must be a non-empty list of node groups");
}

}  // namespace
}  // namespace yirage::devices
