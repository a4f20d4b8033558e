#include "gui/ops_view.h"

#include "devices/support/units.h"
#include "gui/chart_legend.h"

#include <QCursor>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QSignalBlocker>
#include <QSplitter>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>

#include <algorithm>
#include <map>
#include <utility>

namespace yirage::gui {
namespace {

constexpr double kTera = 1e12;  // the chart's FLOP/s are in TFLOP/s

QString shape_text(const std::vector<std::int64_t>& dims) {
  QStringList parts;
  for (std::int64_t d : dims)
    parts << QString::number(d);
  return parts.join("x");
}

QString quantity(double v, devices::Dim d) {
  return QString::fromStdString(devices::format_quantity(v, d));
}

// The legend's name for what an operation is (short: the legend sits under a small chart).
QString category(const planner::LayerOp& o) {
  if (o.compound)
    return o.estimate.fused ? QObject::tr("fused compound") : QObject::tr("unfused compound");
  if (o.op == "gemm")
    return QObject::tr("GEMM");
  if (o.op == "attention")
    return QObject::tr("attention");
  return QObject::tr("norm, element-wise");
}

QString decision(const planner::LayerOp& o) {
  if (o.estimate.fused)
    return QObject::tr("fused");
  if (!o.fused)
    return QObject::tr("unfused: %1").arg(QString::fromStdString(o.why));
  return QObject::tr("unfused (fused is not faster)");
}

// Cells `numbers` (first, last) are figures, aligned right.
void set_row(QTableWidget* t, int row, const QStringList& cells, std::pair<int, int> numbers) {
  for (int c = 0; c < cells.size(); ++c) {
    auto* item = new QTableWidgetItem(cells[c]);
    if (c >= numbers.first && c <= numbers.second)
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    t->setItem(row, c, item);
  }
}

// Log axes over every series of `chart`: FLOP/byte across, TFLOP/s up.
void add_log_axes(QChart* chart, std::pair<double, double> across, std::pair<double, double> up) {
  auto* x = new QLogValueAxis();
  x->setTitleText(QObject::tr("FLOP per byte"));
  x->setLabelFormat("%g");
  x->setRange(across.first, across.second);
  auto* y = new QLogValueAxis();
  y->setTitleText(QObject::tr("TFLOP/s (modelled)"));
  y->setLabelFormat("%g");
  y->setRange(up.first, up.second);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (QAbstractSeries* s : chart->series()) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
}

// Hovering point i of `s` shows text[i].
void add_tooltips(QScatterSeries* s, const QStringList& text) {
  QObject::connect(s, &QScatterSeries::hovered, s, [s, text](const QPointF& p, bool on) {
    auto i = s->points().indexOf(p);
    if (on && i >= 0)
      QToolTip::showText(QCursor::pos(), text[i]);
    else
      QToolTip::hideText();
  });
}

void replace(QChartView* view, QChart* chart) {
  QChart* old = view->chart();
  view->setChart(chart);
  delete old;
}

}  // namespace

OpsView::OpsView(const devices::DeviceRegistry& registry,
                 const costmodel::CalibrationSet& calibrations,
                 QWidget* parent)
    : QWidget(parent),
      registry_(registry),
      calibrations_(calibrations),
      title_(new QLabel(this)),
      device_(new QComboBox(this)),
      chart_(new QChartView(this)),
      ops_(new QTableWidget(this)),
      compounds_(new QTableWidget(this)) {
  device_->setObjectName("ops_device");
  device_->setToolTip(tr("The device whose roofline the operations are placed on"));
  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->setMinimumHeight(220);
  ops_->setColumnCount(9);
  ops_->setHorizontalHeaderLabels({tr("operation"), tr("kernel"), tr("shape"), tr("time"),
                                   tr("FLOPs"), tr("HBM bytes"), tr("FLOP/byte"), tr("achieved"),
                                   tr("of roof")});
  compounds_->setColumnCount(7);
  compounds_->setHorizontalHeaderLabels({tr("device"), tr("compound"), tr("decision"),
                                         tr("unfused"), tr("fused"), tr("speed-up"),
                                         tr("kernel and shape")});
  for (QTableWidget* t : {ops_, compounds_}) {
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->setVisible(false);
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  }
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout();
  bar->addWidget(title_, 1);
  bar->addWidget(new QLabel(tr("Roofline of"), this));
  bar->addWidget(device_);
  layout->addLayout(bar);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(chart_);
  auto* tables = new QSplitter(Qt::Vertical, this);
  tables->addWidget(ops_);
  tables->addWidget(compounds_);
  split->addWidget(tables);
  // The roofline gets the room its six decades of intensity and its legend need to be read
  // whole; the tables scroll.
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setSizes({700, 500});
  layout->addWidget(split, 1);
  connect(device_, &QComboBox::currentTextChanged, this, [this] { refresh(); });
  clear();
}

void OpsView::clear() {
  selection_.reset();
  title_->setText(tr("Select a plan: its layer's operations on the device's roofline"));
  ops_->setRowCount(0);
  compounds_->setRowCount(0);
  auto* chart = new QChart();
  chart->setTitle(tr("Roofline"));
  replace(chart_, chart);
}

void OpsView::show_plan(const OpsSelection& s) {
  selection_ = s;
  QSignalBlocker block(device_);
  device_->clear();
  for (const devices::DeviceSpec& d : registry_.devices()) {
    if (d.kind != devices::DeviceKind::kCpu && d.peak_rate(s.task.precision))
      device_->addItem(QString::fromStdString(d.name));
  }
  device_->setCurrentText(QString::fromStdString(s.device));
  refresh();
}

void OpsView::refresh() {
  if (!selection_)
    return;
  const OpsSelection& s = *selection_;
  const devices::DeviceSpec* d = registry_.find(device_->currentText().toStdString());
  if (!d || !d->peak_rate(s.task.precision)) {
    title_->setText(tr("%1 has no %2 peak")
                        .arg(device_->currentText())
                        .arg(QString::fromStdString(devices::dtype_name(s.task.precision))));
    return;
  }
  std::vector<planner::LayerOp> ops = planner::layer_ops(
      s.task.model, s.shape, planner::op_context(*d, s.task, calibrations_, s.shape));
  title_->setText(tr("%1: the forward pass of one layer, %2 tokens per device, on %3")
                      .arg(QString::fromStdString(s.layout))
                      .arg(s.shape.micro_batch * s.shape.seq)
                      .arg(QString::fromStdString(d->name)));
  plot(*d, ops);
  fill_operations(ops);
  fill_compounds();
}

void OpsView::plot(const devices::DeviceSpec& d, const std::vector<planner::LayerOp>& ops) {
  devices::DType t = selection_->task.precision;
  double peak = d.peak_rate(t)->value;
  double bw = d.memory_bandwidth.value.value;
  double ridge = peak / bw;  // FLOP/byte where the roofs meet
  double lo = ridge;
  double hi = ridge;
  double bottom = peak;
  std::map<QString, QScatterSeries*> series;
  std::map<QScatterSeries*, QStringList> tips;
  auto* chart = new QChart();
  for (const planner::LayerOp& o : ops) {
    double x = planner::arithmetic_intensity(o.estimate);
    double y = planner::achieved_rate(o.estimate);
    if (x <= 0 || y <= 0)
      continue;  // no FLOPs or no bytes: not on a log-log chart
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    bottom = std::min(bottom, y);
    QScatterSeries*& s = series[category(o)];
    if (!s) {
      s = new QScatterSeries();
      s->setName(category(o));
      // Compounds as larger squares under the other points, so that neither hides the other.
      s->setMarkerShape(o.compound ? QScatterSeries::MarkerShapeRectangle
                                   : QScatterSeries::MarkerShapeCircle);
      s->setMarkerSize(o.compound ? 14 : 9);
    }
    s->append(x, y / kTera);
    tips[s] << tr("%1 (%2 %3)\n%4, %5 FLOP/byte, %6 (%7 of the roof)")
                   .arg(QString::fromStdString(o.name))
                   .arg(QString::fromStdString(o.op))
                   .arg(shape_text(o.dims))
                   .arg(quantity(o.estimate.time.value, devices::Dim::kSeconds))
                   .arg(x, 0, 'g', 3)
                   .arg(quantity(y, devices::Dim::kFlopsPerSec))
                   .arg(QString::number(100 * y / planner::roofline_bound(d, t, x), 'f', 0) + "%");
  }
  lo /= 4;
  hi *= 4;
  auto* roof = new QLineSeries();
  roof->setName(tr("roof"));
  for (double x : {lo, ridge, hi})
    roof->append(x, planner::roofline_bound(d, t, x) / kTera);
  chart->addSeries(roof);
  std::vector<QScatterSeries*> order;  // compounds first (drawn below)
  order.reserve(series.size());
  for (auto& [name, s] : series)
    order.push_back(s);
  std::stable_sort(order.begin(), order.end(), [](QScatterSeries* a, QScatterSeries* b) {
    return a->markerSize() > b->markerSize();
  });
  for (QScatterSeries* s : order) {
    chart->addSeries(s);
    add_tooltips(s, tips[s]);
  }
  add_log_axes(chart, {lo, hi}, {std::min(bottom, lo * bw) / kTera / 2, peak / kTera * 2});
  chart->setTitle(tr("Roofline of %1: %2 %3, %4")
                      .arg(QString::fromStdString(d.name))
                      .arg(quantity(peak, devices::Dim::kFlopsPerSec))
                      .arg(QString::fromStdString(devices::dtype_name(t)))
                      .arg(quantity(bw, devices::Dim::kBytesPerSec)));
  place_legend(chart);
  QFont small = chart->legend()->font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  chart->legend()->setFont(small);
  replace(chart_, chart);
}

void OpsView::fill_operations(const std::vector<planner::LayerOp>& ops) {
  const devices::DeviceSpec* d = registry_.find(device_->currentText().toStdString());
  ops_->setRowCount(static_cast<int>(ops.size()));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const planner::LayerOp& o = ops[i];
    double x = planner::arithmetic_intensity(o.estimate);
    double y = planner::achieved_rate(o.estimate);
    double roof = planner::roofline_bound(*d, selection_->task.precision, x);
    set_row(ops_, static_cast<int>(i),
            {QString::fromStdString(o.name),
             QString::fromStdString(o.op) + (o.estimate.fused ? tr(" (fused)") : QString()),
             shape_text(o.dims), quantity(o.estimate.time.value, devices::Dim::kSeconds),
             quantity(o.estimate.flops, devices::Dim::kFlops),
             quantity(o.estimate.hbm_bytes, devices::Dim::kBytes), QString::number(x, 'g', 3),
             quantity(y, devices::Dim::kFlopsPerSec),
             roof > 0 ? QString::number(100 * y / roof, 'f', 0) + "%" : QString("-")},
            {3, 8});
  }
}

// Every compound operation of the layer on each device type of the cluster, and on the
// device chosen for the roofline.
void OpsView::fill_compounds() {
  const OpsSelection& s = *selection_;
  std::vector<std::string> types = s.device_types;
  std::string chosen = device_->currentText().toStdString();
  if (std::find(types.begin(), types.end(), chosen) == types.end())
    types.push_back(chosen);
  compounds_->setRowCount(0);
  for (const std::string& name : types) {
    const devices::DeviceSpec* d = registry_.find(name);
    if (!d || !d->peak_rate(s.task.precision))
      continue;
    for (const planner::LayerOp& o : planner::layer_ops(
             s.task.model, s.shape, planner::op_context(*d, s.task, calibrations_, s.shape))) {
      if (!o.compound)
        continue;
      int row = compounds_->rowCount();
      compounds_->setRowCount(row + 1);
      double unfused = o.unfused->time.value;
      set_row(
          compounds_, row,
          {QString::fromStdString(d->name), QString::fromStdString(o.name), decision(o),
           quantity(unfused, devices::Dim::kSeconds),
           o.fused ? quantity(o.fused->time.value, devices::Dim::kSeconds) : QString("-"),
           o.fused ? QString::number(unfused / o.fused->time.value, 'f', 2) + "x" : QString("-"),
           QString::fromStdString(o.op) + " " + shape_text(o.dims)},
          {3, 5});
    }
  }
}

std::vector<QPointF> OpsView::points() const {
  std::vector<QPointF> out;
  for (QAbstractSeries* s : chart_->chart()->series()) {
    if (auto* scatter = qobject_cast<QScatterSeries*>(s)) {
      for (const QPointF& p : scatter->points())
        out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end(), [](const QPointF& a, const QPointF& b) {
    return a.x() != b.x() ? a.x() < b.x() : a.y() < b.y();
  });
  return out;
}

}  // namespace yirage::gui
