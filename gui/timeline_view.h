// The replayed step of a plan, one row per pipeline stage (its first device): forward and
// backward micro-batches, the collectives and sends, and the idle time between them (the
// bubbles), as SimGrid replayed them (costmodel/sim). Hovering a bar names its task.
#pragma once

#include "costmodel/sim/simulate.h"

#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

namespace yirage::gui {

class TimelineView : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);

  /// Shows the timelines of `ranks` (labelled `labels`) of a replayed step.
  void show_step(const costmodel::SimProgram& program,
                 const costmodel::SimResult& result,
                 const std::vector<std::int64_t>& ranks,
                 const QStringList& labels);
  void clear();

  std::size_t rows() const { return rows_.size(); }

  std::size_t bars() const;

  /// The colour of a task by what it is: "forward", "backward", "collective", "send",
  /// "optimizer" (from its name).
  static QString category(const std::string& task_name);

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent* e) override;  // tooltips

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

  QRectF bar_rect(std::size_t row, const Bar& b) const;

  std::vector<Row> rows_;
  double makespan_ = 0;
};

}  // namespace yirage::gui
