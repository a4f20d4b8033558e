#include "gui/whatif_panel.h"

#include <QPushButton>

#include <cmath>

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

QDoubleSpinBox* rate(QWidget* parent) {
  auto* s = new QDoubleSpinBox(parent);
  s->setRange(0.01, 1e7);
  s->setDecimals(2);
  s->setSuffix(" req/s");
  s->setKeyboardTracking(false);
  return s;
}

}  // namespace

WhatIfPanel::WhatIfPanel(const devices::DeviceRegistry& registry, QWidget* parent)
    : QWidget(parent),
      form_(new QFormLayout(this)),
      nodes_(spin(this, 1'000'000)),
      per_node_(spin(this, 1024)),
      device_(new QComboBox(this)),
      batch_(spin(this, 100'000'000)),
      seq_(spin(this, 100'000'000)),
      rate_(rate(this)),
      prompt_(spin(this, 100'000'000)),
      output_(spin(this, 100'000'000)),
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
  rate_->setToolTip(
      tr("Requests per second offered to the whole cluster; each plan's batch "
         "is the search's choice for this rate"));
  fabric_->setToolTip(tr("The node fabric's bandwidth (NVLink, xGMI, ...), times this"));
  network_->setToolTip(tr("The NICs' bandwidth, times this"));
  form_->addRow(tr("Nodes"), nodes_);
  form_->addRow(tr("Devices per node"), per_node_);
  form_->addRow(tr("Device"), device_);
  form_->addRow(tr("Global batch"), batch_);
  form_->addRow(tr("Sequence length"), seq_);
  form_->addRow(tr("Request rate"), rate_);
  form_->addRow(tr("Prompt length"), prompt_);
  form_->addRow(tr("Output length"), output_);
  form_->addRow(tr("Precision"), precision_);
  form_->addRow(tr("Fabric bandwidth"), fabric_);
  form_->addRow(tr("Network bandwidth"), network_);
  auto* reset = new QPushButton(tr("Back to the files"), this);
  form_->addRow(reset);
  show_base();
  auto emit_changed = [this] {
    emit changed();
  };
  for (QSpinBox* s : {nodes_, per_node_, batch_, seq_, prompt_, output_})
    connect(s, &QSpinBox::valueChanged, this, emit_changed);
  for (QDoubleSpinBox* s : {rate_, fabric_, network_})
    connect(s, &QDoubleSpinBox::valueChanged, this, emit_changed);
  connect(device_, &QComboBox::currentTextChanged, this, emit_changed);
  connect(precision_, &QComboBox::currentTextChanged, this, emit_changed);
  connect(reset, &QPushButton::clicked, this, [this] {
    show_base();
    emit changed();
  });
}

void WhatIfPanel::set_cluster(const devices::ClusterSpec& cluster) {
  const devices::NodeGroup& g = cluster.groups.front();
  base_.nodes = g.nodes;
  base_.devices_per_node = g.devices_per_node;
  base_.device = g.device;
  // A device defined in the cluster file itself is not in the registry's list: without its
  // own entry the box would show (and the what-if apply) the list's first device instead.
  QString device = QString::fromStdString(g.device);
  if (device_->findText(device) < 0)
    device_->addItem(device);
  show_base();
}

void WhatIfPanel::set_task(const devices::TaskSpec& task) {
  serve_ = task.mode == devices::Mode::kServe && task.serve;
  // A serve task has no batch or sequence length of its own: the search picks each plan's
  // batch for the request rate, and the lengths are the requests'.
  base_.global_batch = serve_ ? std::nullopt : std::optional(task.global_batch);
  base_.sequence_length = serve_ ? std::nullopt : std::optional(task.sequence_length);
  base_.request_rate = serve_ ? std::optional(task.serve->request_rate.value) : std::nullopt;
  base_.prompt_length = serve_ ? std::optional(task.serve->prompt_length) : std::nullopt;
  base_.output_length = serve_ ? std::optional(task.serve->output_length) : std::nullopt;
  base_.precision = task.precision;
  show_base();
}

// The files' values in every control, with no changed() signal.
void WhatIfPanel::show_base() {
  std::vector<QWidget*> all = {nodes_,  per_node_, device_,    batch_,  seq_,    rate_,
                               prompt_, output_,   precision_, fabric_, network_};
  for (QWidget* w : all)
    w->blockSignals(true);
  auto show = [](QSpinBox* s, const std::optional<std::int64_t>& v) {
    s->setEnabled(v.has_value());
    if (v)
      s->setValue(static_cast<int>(*v));
  };
  show(nodes_, base_.nodes);
  show(per_node_, base_.devices_per_node);
  device_->setEnabled(base_.device.has_value());
  if (base_.device)
    device_->setCurrentText(QString::fromStdString(*base_.device));
  show(batch_, base_.global_batch);
  show(seq_, base_.sequence_length);
  show(prompt_, base_.prompt_length);
  show(output_, base_.output_length);
  rate_->setEnabled(base_.request_rate.has_value());
  if (base_.request_rate)
    rate_->setValue(*base_.request_rate);
  precision_->setEnabled(base_.precision.has_value());
  if (base_.precision)
    precision_->setCurrentText(QString::fromStdString(devices::dtype_name(*base_.precision)));
  fabric_->setValue(1);
  network_->setValue(1);
  for (QWidget* w : {batch_, seq_})
    form_->setRowVisible(w, !serve_);
  for (QWidget* w : std::initializer_list<QWidget*>{rate_, prompt_, output_})
    form_->setRowVisible(w, serve_);
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
  w.prompt_length = changed(prompt_->value(), base_.prompt_length);
  w.output_length = changed(output_->value(), base_.output_length);
  // The box rounds to two decimals: a rate changes when its shown value does.
  if (base_.request_rate && std::abs(rate_->value() - *base_.request_rate) > 0.005)
    w.request_rate = rate_->value();
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
