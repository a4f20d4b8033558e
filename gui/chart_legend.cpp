#include "gui/chart_legend.h"

#include <QtCharts/QLegend>

namespace yirage::gui {

void place_legend(QChart* chart) {
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->legend()->setShowToolTips(true);  // the full label on hover, should one be cut
}

}  // namespace yirage::gui
