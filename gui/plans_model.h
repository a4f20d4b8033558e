// The ranked plans of a scenario as a table model: training plans (step, tokens/s, MFU,
// memory, energy, money) or inference plans (TTFT, TPOT, tokens/s, memory), formatted as
// the CLI formats them.
#pragma once

#include "gui/scenario.h"

#include <QAbstractTableModel>

namespace yirage::gui {

class PlansModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit PlansModel(QObject* parent = nullptr);

  void show(const ScenarioResult& r);

  const ScenarioResult& result() const { return result_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  QStringList row(int r) const;

  ScenarioResult result_;
};

}  // namespace yirage::gui
