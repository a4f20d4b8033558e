#include "gui/timeline_view.h"

#include "devices/support/units.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace yirage::gui {
namespace {

constexpr int kLabelWidth = 230;
constexpr int kRowHeight = 22;
constexpr int kAxis = 30;  // the time axis, above the lanes
constexpr int kTop = kAxis + 4;
constexpr int kLegend = 30;
constexpr double kMinSpan = 1e-9;     // seconds: the deepest zoom
constexpr double kTickSpacing = 100;  // pixels between ticks, about

QColor colour(const QString& category) {
  if (category == "forward")
    return QColor(31, 119, 180);
  if (category == "backward")
    return QColor(44, 160, 44);
  if (category == "collective")
    return QColor(255, 127, 14);
  if (category == "send")
    return QColor(148, 103, 189);
  return QColor(127, 127, 127);
}

// The round step (1, 2 or 5 times a power of ten) nearest above `raw`.
double round_step(double raw) {
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw)
      return m * power;
  }
  return 10 * power;
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(120);
  setMouseTracking(true);
}

QString TimelineView::category(const std::string& name) {
  auto starts = [&](const char* p) {
    return name.rfind(p, 0) == 0;
  };
  if (starts("fwd") || starts("layer") || starts("head"))
    return "forward";
  if (starts("bwd"))
    return "backward";
  if (starts("act") || starts("grad mb"))
    return "send";
  return "collective";
}

void TimelineView::show_step(const costmodel::SimProgram& program,
                             const costmodel::SimResult& result,
                             const std::vector<Lane>& lanes) {
  rows_.clear();
  makespan_ = result.makespan.value;
  for (const Lane& lane : lanes) {
    Row row;
    row.label = lane.label;
    for (const costmodel::SimInterval& iv :
         result.devices.at(static_cast<std::size_t>(lane.rank)).intervals) {
      const std::string& name = program.tasks[iv.task].name;
      if (name == "step end" || iv.end.value <= iv.start.value)
        continue;
      row.bars.push_back({iv.start.value, iv.end.value, name});
    }
    rows_.push_back(std::move(row));
  }
  setMinimumHeight(kTop + kRowHeight * static_cast<int>(rows_.size()) + kLegend);
  fit_all();
}

void TimelineView::clear() {
  rows_.clear();
  makespan_ = 0;
  lo_ = hi_ = 0;
  update();
}

std::size_t TimelineView::bars() const {
  std::size_t n = 0;
  for (const Row& r : rows_)
    n += r.bars.size();
  return n;
}

void TimelineView::set_visible_range(double from, double to) {
  double span = std::clamp(to - from, std::min(kMinSpan, makespan_), makespan_);
  lo_ = std::clamp(from, 0.0, std::max(0.0, makespan_ - span));
  hi_ = lo_ + span;
  update();
  emit range_changed();
}

void TimelineView::fit_all() {
  set_visible_range(0, makespan_);
}

void TimelineView::zoom_in() {
  zoom(0.5, (lo_ + hi_) / 2);
}

void TimelineView::zoom_out() {
  zoom(2, (lo_ + hi_) / 2);
}

// Scales the span in view by `factor`, keeping the time `anchor` where it is on screen.
void TimelineView::zoom(double factor, double anchor) {
  if (makespan_ <= 0 || hi_ <= lo_)
    return;
  double share = (anchor - lo_) / (hi_ - lo_);
  double span = (hi_ - lo_) * factor;
  set_visible_range(anchor - share * span, anchor + (1 - share) * span);
}

double TimelineView::plot_width() const {
  return std::max(1, width() - kLabelWidth - 10);
}

double TimelineView::x_of(double t) const {
  return kLabelWidth + (t - lo_) / (hi_ - lo_) * plot_width();
}

double TimelineView::time_at(double x) const {
  return lo_ + (x - kLabelWidth) / plot_width() * (hi_ - lo_);
}

std::vector<double> TimelineView::ticks() const {
  std::vector<double> out;
  if (hi_ <= lo_)
    return out;
  double step = round_step((hi_ - lo_) * kTickSpacing / plot_width());
  for (double t = std::ceil(lo_ / step) * step; t <= hi_ + step * 1e-9; t += step)
    out.push_back(t);
  return out;
}

QRectF TimelineView::bar_rect(std::size_t row, const Bar& b) const {
  double x0 = std::max<double>(kLabelWidth, x_of(b.start));
  double x1 = std::min(kLabelWidth + plot_width(), x_of(b.end));
  double y = kTop + static_cast<double>(row) * kRowHeight;
  // Collectives and sends run beside the compute: a thinner bar in the lower half.
  bool compute = category(b.name) == "forward" || category(b.name) == "backward";
  return compute ? QRectF(x0, y + 2, std::max(1.0, x1 - x0), kRowHeight - 8)
                 : QRectF(x0, y + kRowHeight - 8, std::max(1.0, x1 - x0), 5);
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (rows_.empty() || makespan_ <= 0) {
    p.drawText(rect(), Qt::AlignCenter,
               tr("Replay the selected plan to see its step, device by device"));
    return;
  }
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    double y = kTop + static_cast<double>(r) * kRowHeight;
    p.setPen(palette().text().color());
    p.drawText(QRectF(4, y, kLabelWidth - 8, kRowHeight), Qt::AlignVCenter | Qt::AlignLeft,
               rows_[r].label);
    p.fillRect(QRectF(kLabelWidth, y + 2, plot_width(), kRowHeight - 6),
               QColor(235, 235, 235));  // idle: what no bar covers
    for (const Bar& b : rows_[r].bars) {
      if (b.end >= lo_ && b.start <= hi_)
        p.fillRect(bar_rect(r, b), colour(category(b.name)));
    }
  }
  paint_axis(p);
  paint_legend(p, kTop + static_cast<double>(rows_.size()) * kRowHeight + 8);
}

// Ticks above the lanes, each labelled with its time, and a faint line down the lanes.
void TimelineView::paint_axis(QPainter& p) const {
  double bottom = kTop + static_cast<double>(rows_.size()) * kRowHeight;
  QFontMetrics fm(font());
  for (double t : ticks()) {
    double x = x_of(t);
    p.setPen(QColor(200, 200, 200));
    p.drawLine(QPointF(x, kTop), QPointF(x, bottom));
    p.setPen(palette().text().color());
    p.drawLine(QPointF(x, kAxis - 6), QPointF(x, kAxis));
    QString label = QString::fromStdString(devices::format(devices::Seconds{t}));
    double w = fm.horizontalAdvance(label);
    double left = std::clamp(x - w / 2, double{kLabelWidth}, kLabelWidth + plot_width() - w);
    p.drawText(QPointF(left, kAxis - 10), label);
  }
  p.drawText(QRectF(4, 0, kLabelWidth - 8, kAxis), Qt::AlignVCenter | Qt::AlignLeft,
             tr("device (rank)"));
}

void TimelineView::paint_legend(QPainter& p, double y) const {
  QFontMetrics fm(font());
  double x = kLabelWidth;
  for (const char* c : {"forward", "backward", "collective", "send"}) {
    p.fillRect(QRectF(x, y, 10, 10), colour(c));
    p.drawText(QPointF(x + 14, y + 9), c);
    x += 14 + fm.horizontalAdvance(c) + 20;
  }
  p.fillRect(QRectF(x, y, 10, 10), QColor(235, 235, 235));
  p.drawText(QPointF(x + 14, y + 9),
             tr("idle (bubble); wheel: zoom at the cursor, drag: pan, double-click: fit all"));
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  if (rows_.empty() || e->angleDelta().y() == 0) {
    e->ignore();
    return;
  }
  double notches = e->angleDelta().y() / 120.0;
  double at = e->position().x() >= kLabelWidth ? time_at(e->position().x()) : (lo_ + hi_) / 2;
  zoom(std::pow(0.8, notches), at);
  e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  drag_x_ = e->button() == Qt::LeftButton ? e->position().x() : -1;
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  if (drag_x_ < 0 || !(e->buttons() & Qt::LeftButton))
    return;
  double dt = (e->position().x() - drag_x_) / plot_width() * (hi_ - lo_);
  drag_x_ = e->position().x();
  set_visible_range(lo_ - dt, hi_ - dt);
}

bool TimelineView::event(QEvent* e) {
  if (e->type() == QEvent::MouseButtonDblClick) {
    fit_all();
    return true;
  }
  if (e->type() != QEvent::ToolTip)
    return QWidget::event(e);
  auto* help = static_cast<QHelpEvent*>(e);
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    for (const Bar& b : rows_[r].bars) {
      if (b.end >= lo_ && b.start <= hi_ && bar_rect(r, b).contains(help->pos())) {
        QToolTip::showText(help->globalPos(),
                           QString::fromStdString(
                               b.name + ": " + devices::format(devices::Seconds{b.end - b.start}) +
                               " from " + devices::format(devices::Seconds{b.start})));
        return true;
      }
    }
  }
  QToolTip::hideText();
  e->ignore();
  return true;
}

}  // namespace yirage::gui
