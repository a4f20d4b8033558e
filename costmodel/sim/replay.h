// Runs a SimProgram on a SimGrid platform in this process (internal to costmodel/sim).
// SimGrid keeps one engine per process, so call it once per process: simulate() forks.
#pragma once

#include "costmodel/sim/simulate.h"

namespace yirage::costmodel {

SimResult replay(const devices::ClusterSpec& cluster,
                 const SimProgram& program,
                 const SimOptions& options);

}  // namespace yirage::costmodel
