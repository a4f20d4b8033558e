#include "gui/compare_view.h"

#include "report/summary.h"

#include "devices/support/units.h"

#include <QHeaderView>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace yirage::gui {
namespace {

// One compared figure: how to read it from a scenario, how to print it, and whether lower
// is better (for the sign of the difference's wording).
struct Measure {
  QString name;
  std::function<std::optional<double>(const ScenarioResult&)> value;
  std::function<std::string(double)> format;
};

std::optional<double> best_train(const ScenarioResult& r,
                                 const std::function<double(const planner::PlanEstimate&)>& f) {
  if (r.train.empty())
    return std::nullopt;
  return f(r.train.front());
}

std::optional<double> best_infer(const ScenarioResult& r,
                                 const std::function<double(const planner::InferEstimate&)>& f) {
  if (r.infer.empty())
    return std::nullopt;
  return f(r.infer.front());
}

std::string count(double v) {
  return std::to_string(std::llround(v));
}

std::vector<Measure> measures(bool inference) {
  std::vector<Measure> m = {
      {"devices", [](const ScenarioResult& r) { return double(r.cluster.total_devices()); }, count},
      {"global batch", [](const ScenarioResult& r) { return double(r.task.global_batch); }, count},
      {"sequence length", [](const ScenarioResult& r) { return double(r.task.sequence_length); },
       count}};
  if (!inference) {
    m.push_back({"step",
                 [](const ScenarioResult& r) {
                   return best_train(r, [](const auto& p) { return p.step.total; });
                 },
                 report::secs});
    m.push_back({"tokens/s",
                 [](const ScenarioResult& r) {
                   return best_train(r, [](const auto& p) { return p.tokens_per_s; });
                 },
                 count});
    m.push_back(
        {"MFU",
         [](const ScenarioResult& r) { return best_train(r, [](const auto& p) { return p.mfu; }); },
         report::pct});
    m.push_back({"memory/device",
                 [](const ScenarioResult& r) {
                   return best_train(r, [](const auto& p) { return p.memory.total(); });
                 },
                 report::bytes});
    m.push_back({"energy/step",
                 [](const ScenarioResult& r) {
                   return best_train(r, [](const auto& p) { return p.energy.value; });
                 },
                 [](double v) {
                   return devices::format(devices::Joules{v});
                 }});
  } else {
    m.push_back({"TTFT",
                 [](const ScenarioResult& r) {
                   return best_infer(r, [](const auto& p) { return p.ttft; });
                 },
                 report::secs});
    m.push_back({"TPOT",
                 [](const ScenarioResult& r) {
                   return best_infer(r, [](const auto& p) { return p.tpot; });
                 },
                 report::secs});
    m.push_back({"tokens/s",
                 [](const ScenarioResult& r) {
                   return best_infer(r, [](const auto& p) { return p.tokens_per_s; });
                 },
                 count});
    m.push_back({"memory/device",
                 [](const ScenarioResult& r) {
                   return best_infer(
                       r, [](const auto& p) { return p.weights + p.kv_cache + p.workspace; });
                 },
                 report::bytes});
  }
  return m;
}

QString best_layout(const ScenarioResult& r) {
  if (!r.train.empty())
    return QString::fromStdString(r.train.front().layout.str());
  if (!r.infer.empty())
    return QString::fromStdString(r.infer.front().layout.str());
  return r.error.empty() ? QStringLiteral("-")
                         : QString::fromStdString(r.error).section('\n', 0, 0);
}

}  // namespace

CompareView::CompareView(QWidget* parent) : QTableWidget(parent) {
  setColumnCount(4);
  setHorizontalHeaderLabels({tr("best plan"), tr("A (kept)"), tr("B (now)"), tr("B vs A")});
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  verticalHeader()->setVisible(false);
}

void CompareView::keep(const ScenarioResult& r, const QString& label) {
  kept_ = r;
  kept_label_ = label;
  refresh();
}

void CompareView::set_current(const ScenarioResult& r, const QString& label) {
  current_ = r;
  current_label_ = label;
  refresh();
}

void CompareView::refresh() {
  setRowCount(0);
  if (!current_)
    return;
  bool inference = current_->task.mode != devices::Mode::kTrain;
  auto add = [this](const QStringList& cells) {
    int row = rowCount();
    insertRow(row);
    for (int c = 0; c < cells.size(); ++c)
      setItem(row, c, new QTableWidgetItem(cells[c]));
  };
  add({tr("scenario"), kept_ ? kept_label_ : tr("(keep one to compare)"), current_label_, ""});
  add({tr("layout"), kept_ ? best_layout(*kept_) : "", best_layout(*current_), ""});
  for (const Measure& m : measures(inference)) {
    std::optional<double> b = m.value(*current_);
    std::optional<double> a = kept_ ? m.value(*kept_) : std::nullopt;
    QString diff;
    if (a && b && *a != 0)
      diff = QString::fromStdString(devices::format_number(100 * (*b / *a - 1), 3)) + "%";
    add({m.name, a ? QString::fromStdString(m.format(*a)) : "-",
         b ? QString::fromStdString(m.format(*b)) : "-", diff});
  }
}

}  // namespace yirage::gui
