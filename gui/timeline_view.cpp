#include "gui/timeline_view.h"

#include "devices/support/units.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

namespace yirage::gui {
namespace {

constexpr int kLabelWidth = 150;
constexpr int kRowHeight = 26;
constexpr int kTop = 10;
constexpr int kAxis = 40;

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
                             const std::vector<std::int64_t>& ranks,
                             const QStringList& labels) {
  rows_.clear();
  makespan_ = result.makespan.value;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    Row row;
    row.label = labels.value(static_cast<int>(i));
    for (const costmodel::SimInterval& iv :
         result.devices.at(static_cast<std::size_t>(ranks[i])).intervals) {
      const std::string& name = program.tasks[iv.task].name;
      if (name == "step end" || iv.end.value <= iv.start.value)
        continue;
      row.bars.push_back({iv.start.value, iv.end.value, name});
    }
    rows_.push_back(std::move(row));
  }
  setMinimumHeight(kTop + kAxis + kRowHeight * static_cast<int>(rows_.size()));
  update();
}

void TimelineView::clear() {
  rows_.clear();
  makespan_ = 0;
  update();
}

std::size_t TimelineView::bars() const {
  std::size_t n = 0;
  for (const Row& r : rows_)
    n += r.bars.size();
  return n;
}

QRectF TimelineView::bar_rect(std::size_t row, const Bar& b) const {
  double w = std::max(1, width() - kLabelWidth - 10);
  double x0 = kLabelWidth + b.start / makespan_ * w;
  double x1 = kLabelWidth + b.end / makespan_ * w;
  double y = kTop + static_cast<double>(row) * kRowHeight;
  // Collectives and sends run beside the compute: a thinner bar in the lower half.
  bool compute = category(b.name) == "forward" || category(b.name) == "backward";
  return compute ? QRectF(x0, y + 2, std::max(1.0, x1 - x0), kRowHeight - 10)
                 : QRectF(x0, y + kRowHeight - 10, std::max(1.0, x1 - x0), 6);
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (rows_.empty() || makespan_ <= 0) {
    p.drawText(rect(), Qt::AlignCenter,
               tr("Replay the selected plan to see its step, stage by stage"));
    return;
  }
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    double y = kTop + static_cast<double>(r) * kRowHeight;
    p.setPen(palette().text().color());
    p.drawText(QRectF(4, y, kLabelWidth - 8, kRowHeight), Qt::AlignVCenter | Qt::AlignLeft,
               rows_[r].label);
    p.fillRect(QRectF(kLabelWidth, y + 2, width() - kLabelWidth - 10, kRowHeight - 10),
               QColor(235, 235, 235));  // idle: what no bar covers
    for (const Bar& b : rows_[r].bars)
      p.fillRect(bar_rect(r, b), colour(category(b.name)));
  }
  // The time axis and the legend.
  double axis_y = kTop + static_cast<double>(rows_.size()) * kRowHeight + 4;
  p.setPen(palette().text().color());
  for (int k = 0; k <= 4; ++k) {
    double x = kLabelWidth + (width() - kLabelWidth - 10) * k / 4.0;
    p.drawLine(QPointF(x, axis_y), QPointF(x, axis_y + 4));
    p.drawText(QPointF(k == 4   ? x - 60
                       : k == 0 ? x
                                : x - 20,
                       axis_y + 16),
               QString::fromStdString(devices::format(devices::Seconds{makespan_ * k / 4})));
  }
  double lx = kLabelWidth;
  for (const char* c : {"forward", "backward", "collective", "send"}) {
    p.fillRect(QRectF(lx, axis_y + 22, 10, 10), colour(c));
    p.drawText(QPointF(lx + 14, axis_y + 31), c);
    lx += 110;
  }
  p.fillRect(QRectF(lx, axis_y + 22, 10, 10), QColor(235, 235, 235));
  p.drawText(QPointF(lx + 14, axis_y + 31), tr("idle (bubble)"));
}

bool TimelineView::event(QEvent* e) {
  if (e->type() != QEvent::ToolTip)
    return QWidget::event(e);
  auto* help = static_cast<QHelpEvent*>(e);
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    for (const Bar& b : rows_[r].bars) {
      if (bar_rect(r, b).contains(help->pos())) {
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
