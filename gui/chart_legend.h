// Where the charts put their legends: at the right of the plot, one entry a line, so that
// every label shows whole. Under a chart, Qt Charts lays the entries out on one row and cuts
// each label to its share of the width ("comp..." for "compute") as soon as they do not fit.
#pragma once

#include <QtCharts/QChart>

namespace yirage::gui {

void place_legend(QChart* chart);

}  // namespace yirage::gui
