// Assembles a COMET Report from the per-node costs and energy records: the latency breakdown
// rows (CS / OS / TMW per memory group, operation and collective) and energy by level.
// Source: COMET (arXiv 2509.00599), comet-model.md §2.9, §2.10.
#pragma once

#include "costmodel/comet/energy.h"
#include "costmodel/comet/model.h"
#include "costmodel/comet/nest.h"
#include "costmodel/comet/staging.h"

#include <vector>

namespace yirage::costmodel::comet {

/// What the evaluation computed, per mapping node.
struct ReportInputs {
  const ArchSpec& arch;
  const Mapping& m;
  const NestAnalysis& nest;
  const std::vector<NodeCost>& costs;
  const std::vector<NodeEnergy>& energy;
  const Options& opt;
};

void fill_report(const ReportInputs& in, Report& r);

}  // namespace yirage::costmodel::comet
