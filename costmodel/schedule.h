// Stall scheduling for a tree of costed tasks: the step schedule the planner builds
// (compute, collectives, pipeline sends) priced with COMET's binding model
// (comet-model.md §2.4-2.5, E4-E6): sequential siblings add up and a transfer between them
// is a compulsory stall; parallel siblings overlap and the part of a transfer longer than
// the compute it hides behind is an optional stall; pipelined siblings overlap across
// iterations (fill, steady state, drain); siblings that need the same resource at once
// serialise on it, and the excess is a conflict stall.
#pragma once

#include "devices/support/units.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace yirage::costmodel {

enum class Binding { kSequential, kParallel, kPipeline };

/// A leaf is a task on one resource ("compute", "network", "nvlink", ...); a group binds its
/// children and repeats `iterations` times.
struct ScheduleNode {
  std::string name;
  devices::Seconds duration;  // leaf only
  std::string resource;       // leaf only; "compute" is the resource stalls are counted on
  Binding binding = Binding::kSequential;  // group only
  std::int64_t iterations = 1;
  std::vector<ScheduleNode> children;  // empty for a leaf

  bool leaf() const { return children.empty(); }

  static ScheduleNode task(std::string name, devices::Seconds d, std::string resource);
  static ScheduleNode group(std::string name,
                            Binding b,
                            std::vector<ScheduleNode> children,
                            std::int64_t iterations = 1);
};

struct ScheduleCost {
  devices::Seconds total;
  devices::Seconds compute;           // time the compute resource is busy
  devices::Seconds compulsory_stall;  // transfers nothing could overlap
  devices::Seconds optional_stall;    // transfers longer than the compute they hide behind
  devices::Seconds conflict_stall;    // siblings waiting for a shared resource
  std::map<std::string, devices::Seconds> busy;  // per resource

  /// total = compute + the three stalls (the invariant the tests check).
  devices::Seconds accounted() const {
    return compute + compulsory_stall + optional_stall + conflict_stall;
  }
};

ScheduleCost cost_schedule(const ScheduleNode& root);

}  // namespace yirage::costmodel
