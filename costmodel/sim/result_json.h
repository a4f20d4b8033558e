// SimResult to and from JSON: how the simulating child process hands its result back, and
// the machine-readable form of a simulation (internal to costmodel/sim; nlohmann-json stays
// in the .cpp).
#pragma once

#include "costmodel/sim/simulate.h"

#include <string>

namespace yirage::costmodel {

std::string sim_result_to_json(const SimResult& r);
/// CHECK-fails on text that sim_result_to_json did not write.
SimResult sim_result_from_json(const std::string& text);

}  // namespace yirage::costmodel
