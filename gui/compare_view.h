// Two scenarios side by side: one kept (A) and the current one (B), their best plans'
// figures and the difference, so that "what if" reads as "how much".
#pragma once

#include "gui/scenario.h"

#include <QTableWidget>

#include <optional>

namespace yirage::gui {

class CompareView : public QTableWidget {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);

  /// Keeps `r` (described by `label`) as scenario A.
  void keep(const ScenarioResult& r, const QString& label);
  /// Shows `r` as scenario B against A.
  void set_current(const ScenarioResult& r, const QString& label);

  bool has_kept() const { return kept_.has_value(); }

 private:
  void refresh();

  std::optional<ScenarioResult> kept_;
  QString kept_label_;
  std::optional<ScenarioResult> current_;
  QString current_label_;
};

}  // namespace yirage::gui
