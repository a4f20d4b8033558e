#include "gui/whatif_panel.h"

#include <QFormLayout>
#include <QPushButton>

namespace yirage::gui {
namespace {

QSpinBox* spin(QWidget* parent, int max) {
  auto* s = new QSpinBox(parent);
  s->setRange(1, max);
  s->setKeyboardTracking(false);  // one change per edit, not per keystroke
  return s;
}

QDoubleSpinBox* scale(QWidget* parent) {
  auto* s = new QDoubleSpinBox(parent);
  s->setRange(0.05, 20);
  s->setSingleStep(0.25);
  s->setDecimals(2);
  s->setValue(1);
  s->setSuffix(" x");
  s->setKeyboardTracking(false);
  return s;
}

}  // namespace

WhatIfPanel::WhatIfPanel(const devices::DeviceRegistry& registry, QWidget* parent)
    : QWidget(parent),
      nodes_(spin(this, 1'000'000)),
      per_node_(spin(this, 1024)),
      device_(new QComboBox(this)),
      batch_(spin(this, 100'000'000)),
      seq_(spin(this, 100'000'000)),
      precision_(new QComboBox(this)),
      fabric_(scale(this)),
      network_(scale(this)) {
  for (const devices::DeviceSpec& d : registry.devices()) {
    if (d.kind != devices::DeviceKind::kCpu)
      device_->addItem(QString::fromStdString(d.name));
  }
  for (devices::DType t : devices::kAllDTypes)
    precision_->addItem(QString::fromStdString(devices::dtype_name(t)));
  device_->setToolTip(tr("Another device type on the same fabric and network"));
  fabric_->setToolTip(tr("The node fabric's bandwidth (NVLink, xGMI, ...), times this"));
  network_->setToolTip(tr("The NICs' bandwidth, times this"));
  auto* form = new QFormLayout(this);
  form->addRow(tr("Nodes"), nodes_);
  form->addRow(tr("Devices per node"), per_node_);
  form->addRow(tr("Device"), device_);
  form->addRow(tr("Global batch"), batch_);
  form->addRow(tr("Sequence length"), seq_);
  form->addRow(tr("Precision"), precision_);
  form->addRow(tr("Fabric bandwidth"), fabric_);
  form->addRow(tr("Network bandwidth"), network_);
  auto* reset = new QPushButton(tr("Back to the files"), this);
  form->addRow(reset);
  auto emit_changed = [this] {
    emit changed();
  };
  connect(nodes_, &QSpinBox::valueChanged, this, emit_changed);
  connect(per_node_, &QSpinBox::valueChanged, this, emit_changed);
  connect(batch_, &QSpinBox::valueChanged, this, emit_changed);
  connect(seq_, &QSpinBox::valueChanged, this, emit_changed);
  connect(device_, &QComboBox::currentTextChanged, this, emit_changed);
  connect(precision_, &QComboBox::currentTextChanged, this, emit_changed);
  connect(fabric_, &QDoubleSpinBox::valueChanged, this, emit_changed);
  connect(network_, &QDoubleSpinBox::valueChanged, this, emit_changed);
  connect(reset, &QPushButton::clicked, this, [this] {
    std::vector<QWidget*> all = {nodes_, per_node_,  device_, batch_,
                                 seq_,   precision_, fabric_, network_};
    for (QWidget* w : all)
      w->blockSignals(true);
    nodes_->setValue(static_cast<int>(*base_.nodes));
    per_node_->setValue(static_cast<int>(*base_.devices_per_node));
    device_->setCurrentText(QString::fromStdString(*base_.device));
    batch_->setValue(static_cast<int>(*base_.global_batch));
    seq_->setValue(static_cast<int>(*base_.sequence_length));
    precision_->setCurrentText(QString::fromStdString(devices::dtype_name(*base_.precision)));
    fabric_->setValue(1);
    network_->setValue(1);
    for (QWidget* w : all)
      w->blockSignals(false);
    emit changed();
  });
}

void WhatIfPanel::set_base(const devices::ClusterSpec& cluster, const devices::TaskSpec& task) {
  const devices::NodeGroup& g = cluster.groups.front();
  base_.nodes = g.nodes;
  base_.devices_per_node = g.devices_per_node;
  base_.device = g.device;
  base_.global_batch = task.global_batch;
  base_.sequence_length = task.sequence_length;
  base_.precision = task.precision;
  std::vector<QWidget*> all = {nodes_, per_node_,  device_, batch_,
                               seq_,   precision_, fabric_, network_};
  for (QWidget* w : all)
    w->blockSignals(true);
  nodes_->setValue(static_cast<int>(g.nodes));
  per_node_->setValue(static_cast<int>(g.devices_per_node));
  // A device defined in the cluster file itself is not in the registry's list: without its
  // own entry the box would show (and the what-if apply) the list's first device instead.
  QString device = QString::fromStdString(g.device);
  if (device_->findText(device) < 0)
    device_->addItem(device);
  device_->setCurrentText(device);
  batch_->setValue(static_cast<int>(task.global_batch));
  seq_->setValue(static_cast<int>(task.sequence_length));
  precision_->setCurrentText(QString::fromStdString(devices::dtype_name(task.precision)));
  fabric_->setValue(1);
  network_->setValue(1);
  for (QWidget* w : all)
    w->blockSignals(false);
}

WhatIf WhatIfPanel::what_if() const {
  WhatIf w;
  auto changed = [](std::int64_t v, const std::optional<std::int64_t>& base) {
    return base && v != *base ? std::optional<std::int64_t>(v) : std::nullopt;
  };
  w.nodes = changed(nodes_->value(), base_.nodes);
  w.devices_per_node = changed(per_node_->value(), base_.devices_per_node);
  w.global_batch = changed(batch_->value(), base_.global_batch);
  w.sequence_length = changed(seq_->value(), base_.sequence_length);
  std::string device = device_->currentText().toStdString();
  if (base_.device && device != *base_.device)
    w.device = device;
  for (devices::DType t : devices::kAllDTypes) {
    if (devices::dtype_name(t) == precision_->currentText().toStdString() && base_.precision &&
        t != *base_.precision) {
      w.precision = t;
    }
  }
  w.fabric_scale = fabric_->value();
  w.network_scale = network_->value();
  return w;
}

}  // namespace yirage::gui
