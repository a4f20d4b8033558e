#include "costmodel/schedule.h"

#include "devices/support/check.h"

#include <algorithm>

namespace yirage::costmodel {

using devices::Seconds;

ScheduleNode ScheduleNode::task(std::string name, Seconds d, std::string resource) {
  ScheduleNode n;
  n.name = std::move(name);
  n.duration = d;
  n.resource = std::move(resource);
  return n;
}

ScheduleNode ScheduleNode::group(std::string name,
                                 Binding b,
                                 std::vector<ScheduleNode> children,
                                 std::int64_t iterations) {
  ScheduleNode n;
  n.name = std::move(name);
  n.binding = b;
  n.children = std::move(children);
  n.iterations = iterations;
  return n;
}

namespace {

// "compute" or "compute:<anything>" (one per device or stage) are compute resources.
bool is_compute(const std::string& resource) {
  return resource.rfind("compute", 0) == 0;
}

// The busiest compute resource: the critical device's compute time.
Seconds busiest_compute(const ScheduleCost& c) {
  Seconds worst;
  for (const auto& [r, t] : c.busy) {
    if (is_compute(r))
      worst = std::max(worst, t);
  }
  return worst;
}

ScheduleCost scaled(ScheduleCost c, double k) {
  c.total = c.total * k;
  c.compute = c.compute * k;
  c.compulsory_stall = c.compulsory_stall * k;
  c.optional_stall = c.optional_stall * k;
  c.conflict_stall = c.conflict_stall * k;
  for (auto& [r, t] : c.busy)
    t = t * k;
  return c;
}

void add_busy(ScheduleCost& into, const ScheduleCost& c) {
  for (const auto& [r, t] : c.busy)
    into.busy[r] += t;
}

ScheduleCost leaf(const ScheduleNode& n) {
  CHECK(n.duration.value >= 0) << "negative duration of " << n.name;
  ScheduleCost c;
  c.total = n.duration;
  c.busy[n.resource] = n.duration;
  if (is_compute(n.resource)) {
    c.compute = n.duration;
  } else {
    c.compulsory_stall = n.duration;  // alone, a transfer stalls the compute
  }
  return c;
}

ScheduleCost sequential(const std::vector<ScheduleCost>& kids) {
  ScheduleCost c;
  for (const ScheduleCost& k : kids) {
    c.total += k.total;
    c.compute += k.compute;
    c.compulsory_stall += k.compulsory_stall;
    c.optional_stall += k.optional_stall;
    c.conflict_stall += k.conflict_stall;
    add_busy(c, k);
  }
  return c;
}

// E6: the busiest shared resource beyond the conflict-free length is a conflict stall.
Seconds conflict(const ScheduleCost& c, Seconds length) {
  Seconds worst;
  for (const auto& [r, t] : c.busy)
    worst = std::max(worst, t);
  return std::max(Seconds{}, worst - length);
}

// Overlapped children: compute runs alongside everything else; whatever of the critical
// length the compute does not cover was a stall of the child that set the length, with
// its own classification, the rest of it an optional stall.
ScheduleCost overlapped(const std::vector<ScheduleCost>& kids, Seconds length) {
  ScheduleCost c;
  const ScheduleCost* longest = nullptr;
  for (const ScheduleCost& k : kids) {
    add_busy(c, k);
    if (longest == nullptr || k.total > longest->total)
      longest = &k;
  }
  Seconds compute = std::min(busiest_compute(c), length);
  c.compute = compute;
  Seconds exposed = length - compute;
  // Stalls inherited from the longest child, capped by what is exposed.
  c.compulsory_stall = std::min(longest->compulsory_stall, exposed);
  c.conflict_stall = std::min(longest->conflict_stall, exposed - c.compulsory_stall);
  c.optional_stall = exposed - c.compulsory_stall - c.conflict_stall;
  c.total = length;
  Seconds cf = conflict(c, length);
  c.conflict_stall += cf;
  c.total += cf;
  return c;
}

ScheduleCost parallel(const std::vector<ScheduleCost>& kids) {
  Seconds length;
  for (const ScheduleCost& k : kids)
    length = std::max(length, k.total);
  return overlapped(kids, length);
}

// E5: k stages over I iterations, skewed by one iteration: the slowest stage runs all I
// iterations and every other stage adds its time once (pipeline fill and drain).
ScheduleCost pipeline(const std::vector<ScheduleCost>& stages, std::int64_t iterations) {
  Seconds slowest;
  Seconds sum;
  for (const ScheduleCost& s : stages) {
    slowest = std::max(slowest, s.total);
    sum += s.total;
  }
  auto it = static_cast<double>(iterations);
  Seconds length = sum + slowest * (it - 1);
  std::vector<ScheduleCost> all;
  for (const ScheduleCost& s : stages)
    all.push_back(scaled(s, it));
  ScheduleCost c = overlapped(all, length);
  // The fill and the drain (every stage but the slowest, once) cannot overlap: a ramp.
  Seconds ramp = std::min(sum - slowest, c.optional_stall);
  c.optional_stall = c.optional_stall - ramp;
  c.compulsory_stall += ramp;
  return c;
}

}  // namespace

ScheduleCost cost_schedule(const ScheduleNode& n) {
  if (n.leaf())
    return scaled(leaf(n), static_cast<double>(n.iterations));
  std::vector<ScheduleCost> kids;
  for (const ScheduleNode& child : n.children)
    kids.push_back(cost_schedule(child));
  switch (n.binding) {
    case Binding::kSequential:
      return scaled(sequential(kids), static_cast<double>(n.iterations));
    case Binding::kParallel:
      return scaled(parallel(kids), static_cast<double>(n.iterations));
    case Binding::kPipeline:
      return pipeline(kids, n.iterations);
  }
  return {};
}

}  // namespace yirage::costmodel
