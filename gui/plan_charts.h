// The charts of the selected plan: where its step goes (stacked bars: compute, the
// collectives inside the layers, pipeline sends, bubble, exposed data-parallel sync,
// optimizer) and what its memory holds per device against the device's capacity.
#pragma once

#include "planner/infer_estimate.h"
#include "planner/plan.h"

#include <QtCharts/QChartView>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace yirage::gui {

class PlanCharts : public QObject {
  Q_OBJECT

 public:
  explicit PlanCharts(QWidget* parent);

  QChartView* breakdown() const { return breakdown_; }

  QChartView* memory() const { return memory_; }

  void show(const planner::PlanEstimate& p, const std::string& device);
  void show(const planner::InferEstimate& p, const std::string& device);
  /// A plan of several node groups: its step (one bar, or a bar per group where each runs its
  /// own step) and each group's memory per device against that device's capacity.
  void show_groups(const QString& title,
                   const std::vector<std::pair<std::string, planner::StepBreakdown>>& steps,
                   const std::vector<std::pair<std::string, planner::MemoryUse>>& groups);
  void clear();

  /// Writes both charts beside `path` (".png" or ".svg"): "<name>-step.<ext>" and
  /// "<name>-memory.<ext>". Returns the error, or empty.
  QString save(const QString& path) const;

 private:
  QChartView* breakdown_;
  QChartView* memory_;
};

}  // namespace yirage::gui
