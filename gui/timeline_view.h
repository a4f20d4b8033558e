// The replayed step of a plan, one lane per device that SimGrid simulated (costmodel/sim):
// forward and backward micro-batches, the collectives and sends, and the idle time between
// them (the bubbles). Hovering a bar names its task. The time axis zooms (mouse wheel at
// the cursor, zoom_in/zoom_out, fit_all) and pans (drag); its ticks stay round numbers
// about 100 pixels apart whatever the zoom.
#pragma once

#include "costmodel/sim/simulate.h"

#include <QString>
#include <QWidget>

#include <cstdint>
#include <utility>
#include <vector>

namespace yirage::gui {

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  /// One device's lane: its rank in the replayed cluster and its name.
  struct Lane {
    std::int64_t rank = 0;
    QString label;
  };

  explicit TimelineView(QWidget* parent = nullptr);

  /// Shows the timelines of `lanes` of a replayed step, the whole step in view.
  void show_step(const costmodel::SimProgram& program,
                 const costmodel::SimResult& result,
                 const std::vector<Lane>& lanes);
  void clear();

  std::size_t rows() const { return rows_.size(); }

  QString row_label(std::size_t row) const { return rows_.at(row).label; }

  std::size_t bars() const;

  /// The seconds of the step in view, from and to.
  std::pair<double, double> visible_range() const { return {lo_, hi_}; }

  /// Shows [from, to] (clamped to the step; at least a nanosecond wide).
  void set_visible_range(double from, double to);
  void zoom_in();
  void zoom_out();
  void fit_all();

  /// The time axis' ticks in view: round steps (1, 2 or 5 times a power of ten).
  std::vector<double> ticks() const;

  /// The colour of a task by what it is: "forward", "backward", "collective", "send",
  /// "optimizer" (from its name).
  static QString category(const std::string& task_name);

 signals:
  void range_changed();

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;  // tooltips
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;

 private:
  struct Bar {
    double start = 0;
    double end = 0;
    std::string name;
  };

  struct Row {
    QString label;
    std::vector<Bar> bars;
  };

  double plot_width() const;
  double x_of(double t) const;
  double time_at(double x) const;
  void zoom(double factor, double anchor);
  QRectF bar_rect(std::size_t row, const Bar& b) const;
  void paint_axis(QPainter& p) const;
  void paint_legend(QPainter& p, double y) const;

  std::vector<Row> rows_;
  double makespan_ = 0;
  double lo_ = 0;  // the seconds in view
  double hi_ = 0;
  double drag_x_ = -1;  // where a pan started, in pixels
};

}  // namespace yirage::gui
