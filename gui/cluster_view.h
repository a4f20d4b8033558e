// A table of a cluster's node groups and device types: the first view of yirage-gui.
#pragma once

#include "devices/cluster_spec.h"

#include <QTableWidget>

namespace yirage::gui {

class ClusterView : public QTableWidget {
  Q_OBJECT

 public:
  explicit ClusterView(QWidget* parent = nullptr);
  /// Shows one row per node group: its device type and that device's main figures.
  void show_cluster(const devices::ClusterSpec& cluster);
};

}  // namespace yirage::gui
