// The what-if controls: nodes, devices per node, device type, global batch, sequence
// length, precision and the bandwidth of the node fabric and of the network. Each change
// emits changed() with the scenario's WhatIf.
#pragma once

#include "devices/registry.h"
#include "gui/scenario.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QWidget>

namespace yirage::gui {

class WhatIfPanel : public QWidget {
  Q_OBJECT

 public:
  WhatIfPanel(const devices::DeviceRegistry& registry, QWidget* parent = nullptr);

  /// Shows the files' values (no changed() signal).
  void set_base(const devices::ClusterSpec& cluster, const devices::TaskSpec& task);
  /// The controls' values, as changes to the files' (unchanged values stay unset).
  WhatIf what_if() const;

  QSpinBox* nodes() const { return nodes_; }

  QSpinBox* global_batch() const { return batch_; }

  QComboBox* device() const { return device_; }

  QDoubleSpinBox* fabric() const { return fabric_; }

  QDoubleSpinBox* network() const { return network_; }

 signals:
  void changed();

 private:
  QSpinBox* nodes_;
  QSpinBox* per_node_;
  QComboBox* device_;
  QSpinBox* batch_;
  QSpinBox* seq_;
  QComboBox* precision_;
  QDoubleSpinBox* fabric_;
  QDoubleSpinBox* network_;
  WhatIf base_;  // the files' values, all set
};

}  // namespace yirage::gui
