// The Pareto tab: the best plan of the scenario's task on each node type of its cluster at
// each node count (gui/sweep.h, `yirage-plan sweep`'s scenarios), as points of throughput
// against cost, coloured by device, with the front (no other point has more tokens/s for
// less) drawn as a line and listed in the table below (*).
#pragma once

#include "gui/sweep.h"

#include <QComboBox>
#include <QLabel>
#include <QSpinBox>
#include <QTableWidget>
#include <QWidget>
#include <QtCharts/QChartView>

#include <cstdint>
#include <vector>

namespace yirage::gui {

class ParetoView : public QWidget {
  Q_OBJECT

 public:
  explicit ParetoView(QWidget* parent = nullptr);

  /// The node counts to sweep: 1, 2, 4, ... up to the "up to" box.
  std::vector<std::int64_t> counts() const;
  SweepCost cost() const;
  /// Sets the "up to" box to four times `nodes` (at least 16), unless the user set it.
  void suggest_range(std::int64_t nodes);
  /// Shows that a sweep of `what` runs.
  void show_busy(const QString& what);
  void show_sweep(const SweepResult& r, const QString& title);
  void clear(const QString& why);

  const SweepResult& result() const { return result_; }

  QChartView* chart() const { return chart_; }

  QTableWidget* table() const { return table_; }

  QSpinBox* up_to() const { return up_to_; }

  QComboBox* cost_axis() const { return cost_; }

  QString status() const { return status_->text(); }

 signals:
  /// The range or the cost axis changed: the sweep is to be run again.
  void changed();

 private:
  void fill_table();

  QSpinBox* up_to_;
  QComboBox* cost_;
  QLabel* status_;
  QChartView* chart_;
  QTableWidget* table_;
  SweepResult result_;
  bool user_range_ = false;
};

}  // namespace yirage::gui
