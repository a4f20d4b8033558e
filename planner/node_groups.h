// The node groups of a heterogeneous cluster, each as a cluster of its own, in a canonical
// order (device, then name) so that plans do not depend on how the cluster file lists them.
#pragma once

#include "devices/cluster_spec.h"

#include <vector>

namespace yirage::planner {

/// The groups in canonical order (device, then name).
std::vector<const devices::NodeGroup*> canonical_groups(const devices::ClusterSpec& cluster);

/// A cluster of the given groups alone (with `nodes` overridden when positive), with the
/// network of the whole.
devices::ClusterSpec sub_cluster(const devices::ClusterSpec& c,
                                 const std::vector<const devices::NodeGroup*>& groups,
                                 std::int64_t nodes = 0);

}  // namespace yirage::planner
