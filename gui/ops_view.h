// The operations of the selected plan's layer: a log-log roofline of a device (its peak
// FLOP/s and memory-bandwidth roofs) with each operation placed at its arithmetic intensity
// and the FLOP/s it achieves as modelled; the operations in a table; and every compound
// operation fused against unfused, with the decision, on each device type of the cluster.
// All figures come from planner::layer_ops (the cost model's pricing of the layer).
#pragma once

#include "costmodel/calibration.h"
#include "devices/registry.h"
#include "devices/task_spec.h"
#include "planner/layer_ops.h"

#include <QComboBox>
#include <QLabel>
#include <QTableWidget>
#include <QWidget>
#include <QtCharts/QChartView>

#include <optional>
#include <string>
#include <vector>

namespace yirage::gui {

/// The layer of one plan: what the view prices.
struct OpsSelection {
  devices::TaskSpec task;
  planner::LayerShape shape;
  std::string layout;                     // as the plans table shows it
  std::string device;                     // the device type the plan runs on
  std::vector<std::string> device_types;  // the cluster's
};

class OpsView : public QWidget {
  Q_OBJECT

 public:
  OpsView(const devices::DeviceRegistry& registry,
          const costmodel::CalibrationSet& calibrations,
          QWidget* parent = nullptr);

  /// Shows the plan's layer on its device (the device list keeps another choice if any).
  void show_plan(const OpsSelection& s);
  void clear();

  QChartView* roofline() const { return chart_; }

  QTableWidget* operations() const { return ops_; }

  QTableWidget* compounds() const { return compounds_; }

  QComboBox* device() const { return device_; }

  /// The operations placed on the roofline: (FLOP/byte, FLOP/s).
  std::vector<QPointF> points() const;

 private:
  void refresh();
  void fill_operations(const std::vector<planner::LayerOp>& ops);
  void fill_compounds();
  void plot(const devices::DeviceSpec& d, const std::vector<planner::LayerOp>& ops);

  const devices::DeviceRegistry& registry_;
  const costmodel::CalibrationSet& calibrations_;
  std::optional<OpsSelection> selection_;
  QLabel* title_;
  QComboBox* device_;
  QChartView* chart_;
  QTableWidget* ops_;
  QTableWidget* compounds_;
};

}  // namespace yirage::gui
