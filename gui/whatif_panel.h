// The what-if controls: nodes, devices per node, device type, global batch, sequence
// length (a serve task: its request rate, prompt and output lengths instead, its batch being
// the search's choice), precision and the bandwidth of the node fabric and of the network.
// They show the loaded files' values; each change emits changed() with the scenario's WhatIf.
#pragma once

#include "devices/registry.h"
#include "gui/scenario.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSpinBox>
#include <QWidget>

namespace yirage::gui {

class WhatIfPanel : public QWidget {
  Q_OBJECT

 public:
  WhatIfPanel(const devices::DeviceRegistry& registry, QWidget* parent = nullptr);

  /// Shows the cluster file's values (no changed() signal); the what-if changes to the
  /// cluster are dropped.
  void set_cluster(const devices::ClusterSpec& cluster);
  /// Shows the task file's values, likewise.
  void set_task(const devices::TaskSpec& task);
  /// The controls' values, as changes to the files' (unchanged values stay unset).
  WhatIf what_if() const;

  QSpinBox* nodes() const { return nodes_; }

  QSpinBox* devices_per_node() const { return per_node_; }

  QSpinBox* global_batch() const { return batch_; }

  QSpinBox* sequence_length() const { return seq_; }

  QDoubleSpinBox* request_rate() const { return rate_; }

  QSpinBox* prompt_length() const { return prompt_; }

  QSpinBox* output_length() const { return output_; }

  QComboBox* device() const { return device_; }

  QDoubleSpinBox* fabric() const { return fabric_; }

  QDoubleSpinBox* network() const { return network_; }

 signals:
  void changed();

 private:
  void show_base();

  QFormLayout* form_;
  QSpinBox* nodes_;
  QSpinBox* per_node_;
  QComboBox* device_;
  QSpinBox* batch_;
  QSpinBox* seq_;
  QDoubleSpinBox* rate_;
  QSpinBox* prompt_;
  QSpinBox* output_;
  QComboBox* precision_;
  QDoubleSpinBox* fabric_;
  QDoubleSpinBox* network_;
  WhatIf base_;  // the files' values; a task's are unset until one is loaded
  bool serve_ = false;
};

}  // namespace yirage::gui
