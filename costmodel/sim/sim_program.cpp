#include "costmodel/sim/sim_program.h"

#include "devices/support/check.h"

#include <set>
#include <utility>

namespace yirage::costmodel {

std::string sim_task_kind_name(SimTaskKind k) {
  switch (k) {
    case SimTaskKind::kCompute:
      return "compute";
    case SimTaskKind::kCollective:
      return "collective";
    case SimTaskKind::kSend:
      return "send";
  }
  return "?";
}

std::size_t SimProgram::add(SimTask t) {
  CHECK(!t.ranks.empty()) << "task '" << t.name << "' has no ranks";
  if (t.kind == SimTaskKind::kCompute) {
    CHECK(t.ranks.size() == 1) << "compute task '" << t.name << "' on several ranks";
  }
  if (t.kind == SimTaskKind::kSend) {
    CHECK(t.ranks.size() == 2 && t.ranks[0] != t.ranks[1])
        << "send '" << t.name << "' needs two different ranks";
  }
  std::set<std::int64_t> seen;
  for (std::int64_t r : t.ranks) {
    CHECK(r >= 0) << "negative rank in '" << t.name << "'";
    CHECK(seen.insert(r).second) << "rank " << r << " twice in '" << t.name << "'";
  }
  for (std::size_t d : t.after) {
    CHECK(d < tasks.size()) << "task '" << t.name << "' depends on a later task " << d;
  }
  CHECK(t.bytes >= 0 && t.duration.value >= 0) << "negative size in '" << t.name << "'";
  tasks.push_back(std::move(t));
  return tasks.size() - 1;
}

std::size_t SimProgram::compute(std::int64_t rank,
                                std::string name,
                                devices::Seconds duration,
                                std::vector<std::size_t> after,
                                std::string stream) {
  SimTask t;
  t.name = std::move(name);
  t.kind = SimTaskKind::kCompute;
  t.stream = std::move(stream);
  t.ranks = {rank};
  t.duration = duration;
  t.after = std::move(after);
  return add(std::move(t));
}

std::size_t SimProgram::collective(std::vector<std::int64_t> ranks,
                                   Collective op,
                                   double bytes,
                                   std::string name,
                                   std::string stream,
                                   std::vector<std::size_t> after) {
  SimTask t;
  t.name = std::move(name);
  t.kind = SimTaskKind::kCollective;
  t.stream = std::move(stream);
  t.ranks = std::move(ranks);
  t.op = op;
  t.bytes = bytes;
  t.after = std::move(after);
  return add(std::move(t));
}

std::size_t SimProgram::send(std::int64_t from,
                             std::int64_t to,
                             double bytes,
                             std::string name,
                             std::vector<std::size_t> after,
                             std::string stream) {
  SimTask t;
  t.name = std::move(name);
  t.kind = SimTaskKind::kSend;
  t.stream = std::move(stream);
  t.ranks = {from, to};
  t.bytes = bytes;
  t.after = std::move(after);
  return add(std::move(t));
}

std::vector<SimRankPlace> sim_rank_places(const devices::ClusterSpec& cluster) {
  std::vector<SimRankPlace> out;
  std::int64_t node = 0;
  for (std::size_t g = 0; g < cluster.groups.size(); ++g) {
    const devices::NodeGroup& ng = cluster.groups[g];
    for (std::int64_t n = 0; n < ng.nodes; ++n, ++node) {
      for (std::int64_t d = 0; d < ng.devices_per_node; ++d)
        out.push_back({g, node, d});
    }
  }
  return out;
}

std::int64_t sim_rank_of(const devices::ClusterSpec& cluster,
                         std::size_t group,
                         std::int64_t node_in_group,
                         std::int64_t local) {
  CHECK(group < cluster.groups.size()) << "no node group " << group;
  std::int64_t rank = 0;
  for (std::size_t g = 0; g < group; ++g)
    rank += cluster.groups[g].devices();
  const devices::NodeGroup& ng = cluster.groups[group];
  CHECK(node_in_group >= 0 && node_in_group < ng.nodes && local >= 0 && local < ng.devices_per_node)
      << "no device " << local << " on node " << node_in_group << " of group " << ng.name;
  return rank + node_in_group * ng.devices_per_node + local;
}

}  // namespace yirage::costmodel
