// A simulated step as a Chrome trace (the catapult Trace Event Format, JSON object form),
// which Perfetto and chrome://tracing open: a process per node, a thread per device and
// stream, "X" (complete) events for compute, each collective and send, and each device's
// idle gaps on its own "idle" thread. Times are in microseconds.
#pragma once

#include "costmodel/sim/simulate.h"

#include <ostream>

namespace yirage::costmodel {

/// Writes the trace of `result`, simulated from `program`, to `out`.
void write_chrome_trace(const SimProgram& program, const SimResult& result, std::ostream& out);

}  // namespace yirage::costmodel
