// `yirage-gui --bench [CLUSTER TASK]`: the time from a what-if change to the updated plans
// table, through the window (worker thread, queued result, model reset), for a series of
// changes on the 1,024-GPU example by default, next to the 1 s target.
#pragma once

#include <QString>

#include <ostream>

namespace yirage::gui {

/// Runs the series and prints the table; returns the exit code (2: the files do not load).
int bench_whatif(const QString& cluster, const QString& task, std::ostream& out);

}  // namespace yirage::gui
