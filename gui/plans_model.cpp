#include "gui/plans_model.h"

#include "report/summary.h"

#include "devices/support/units.h"

#include <cmath>

namespace yirage::gui {
namespace {

const QStringList kTrainColumns = {"layout",        "step",        "tokens/s", "MFU",
                                   "memory/device", "energy/step", "USD/step"};
const QStringList kInferColumns = {"layout",   "TTFT",          "TPOT",
                                   "tokens/s", "memory/device", "objective"};

QString q(const std::string& s) {
  return QString::fromStdString(s);
}

}  // namespace

PlansModel::PlansModel(QObject* parent) : QAbstractTableModel(parent) {}

void PlansModel::show(const ScenarioResult& r) {
  beginResetModel();
  result_ = r;
  endResetModel();
}

int PlansModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid())
    return 0;
  return static_cast<int>(result_.train.empty() ? result_.infer.size() : result_.train.size());
}

int PlansModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid())
    return 0;
  return static_cast<int>((result_.infer.empty() ? kTrainColumns : kInferColumns).size());
}

QStringList PlansModel::row(int r) const {
  auto i = static_cast<std::size_t>(r);
  if (!result_.train.empty()) {
    const planner::PlanEstimate& p = result_.train[i];
    return {q(p.layout.str()),
            q(report::secs(p.step.total)),
            QString::number(std::llround(p.tokens_per_s)),
            q(report::pct(p.mfu)),
            q(report::bytes(p.memory.total()) + " / " + report::bytes(p.memory.capacity)),
            p.energy.value > 0 ? q(devices::format(p.energy)) : "-",
            p.usd_per_step ? q("$" + devices::format_number(*p.usd_per_step, 4)) : "-"};
  }
  const planner::InferEstimate& p = result_.infer[i];
  return {
      q(p.layout.str()),
      p.ttft > 0 ? q(report::secs(p.ttft)) : "-",
      p.tpot > 0 ? q(report::secs(p.tpot)) : "-",
      q(devices::format_number(p.tokens_per_s, 4)),
      q(report::bytes(p.weights + p.kv_cache + p.workspace) + " / " + report::bytes(p.capacity)),
      p.meets_objective ? "met" : "missed"};
}

QVariant PlansModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid())
    return {};
  if (role == Qt::DisplayRole)
    return row(index.row()).value(index.column());
  if (role == Qt::TextAlignmentRole && index.column() > 0)
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant PlansModel::headerData(int section, Qt::Orientation o, int role) const {
  if (role != Qt::DisplayRole)
    return {};
  if (o == Qt::Vertical)
    return section + 1;
  return (result_.infer.empty() ? kTrainColumns : kInferColumns).value(section);
}

}  // namespace yirage::gui
