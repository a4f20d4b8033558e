#include "gui/mixed_view.h"

#include "report/hetero_report.h"
#include "report/summary.h"

#include <QHeaderView>

namespace yirage::gui {
namespace {

QString q(const std::string& s) {
  return QString::fromStdString(s);
}

// "57.52 GB / 76 GB" and the share of the capacity, as the CLI prints memory.
QStringList memory_cells(double used, double capacity) {
  return {q(report::bytes(used) + " / " + report::bytes(capacity)),
          capacity > 0 ? q(report::pct(used / capacity)) : QString("-")};
}

}  // namespace

MixedView::MixedView(QWidget* parent) : QTableWidget(parent) {
  setColumnCount(10);
  setHorizontalHeaderLabels({tr("plan"), tr("group"), tr("device"), tr("devices"), tr("share"),
                             tr("layout"), tr("time"), tr("tokens/s"), tr("memory/device"),
                             tr("of capacity")});
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setSelectionMode(QAbstractItemView::SingleSelection);
  verticalHeader()->setVisible(false);
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

void MixedView::clear_plans() {
  setRowCount(0);
  plans_.clear();
  best_memory_.clear();
}

const MixedView::GroupPlan* MixedView::group_plan(int row) const {
  if (row < 0 || row >= static_cast<int>(plans_.size()) || !plans_[row])
    return nullptr;
  return &*plans_[static_cast<std::size_t>(row)];
}

void MixedView::add_row(const QStringList& cells, bool plan_row, std::optional<GroupPlan> g) {
  int row = rowCount();
  setRowCount(row + 1);
  for (int c = 0; c < cells.size(); ++c) {
    auto* item = new QTableWidgetItem(cells[c]);
    if (plan_row) {
      QFont f = item->font();
      f.setBold(true);
      item->setFont(f);
    }
    if (c == 3 || c == 4 || c >= 6)
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    setItem(row, c, item);
  }
  plans_.push_back(std::move(g));
}

void MixedView::add_pipeline(const planner::HeteroPipelinePlan& h, bool best) {
  // The pipeline's own part of the layout; the groups' parts are on their rows.
  std::string layout = h.str();
  add_row({best ? tr("pipeline across the groups (best)") : tr("pipeline across the groups"),
           tr("all"), QString(), QString(), QString::number(h.dp) + tr(" replicas"),
           q(layout.substr(0, layout.find(" | "))), q(report::secs(h.step.total)),
           q(report::format_count(h.tokens_per_s)), QString(), QString()},
          true);
  for (const planner::PipelinePart& p : h.parts) {
    QStringList cells{
        QString(),
        q(p.group),
        q(p.device),
        QString::number(p.devices),
        tr("%1 layers").arg(p.layers),
        tr("tp=%1, %2 %3").arg(p.tp).arg(p.stages).arg(p.stages == 1 ? tr("stage") : tr("stages")),
        q(report::secs(p.stage_time)) + tr(" per micro-batch"),
        QString()};
    planner::Layout stage;
    stage.dp = h.dp;
    stage.tp = p.tp;
    stage.pp = p.stages;
    stage.micro_batch = h.micro_batch;
    add_row(cells + memory_cells(p.memory.total(), p.memory.capacity), false,
            GroupPlan{p.device, std::nullopt, std::nullopt, stage});
    if (best)
      best_memory_.emplace_back(p.group, p.memory);
  }
}

void MixedView::add_data_parallel(const planner::HeteroPlan& h, bool best) {
  add_row(
      {best ? tr("data parallel across the groups (best)") : tr("data parallel across the groups"),
       tr("all"), QString(), QString(), QString(), QString(), q(report::secs(h.step)),
       q(report::format_count(h.tokens_per_s)), QString(), QString()},
      true);
  for (const planner::GroupShare& g : h.groups) {
    const planner::MemoryUse& m = g.plan.memory;
    QStringList cells{QString(),
                      q(g.group),
                      q(g.device),
                      QString::number(g.devices),
                      tr("batch %1").arg(g.batch),
                      q(g.plan.layout.str()),
                      q(report::secs(g.plan.step.total)),
                      q(report::format_count(g.plan.tokens_per_s))};
    add_row(cells + memory_cells(m.total(), m.capacity), false,
            GroupPlan{g.device, g.plan, std::nullopt, std::nullopt});
    if (best)
      best_memory_.emplace_back(g.group, m);
  }
}

void MixedView::show_training(const planner::HeteroResult& r) {
  clear_plans();
  bool pipe = report::pipeline_is_best(r);
  if (pipe)
    add_pipeline(*r.pipeline, true);
  if (r.plan)
    add_data_parallel(*r.plan, !pipe);
  if (!pipe && r.pipeline)
    add_pipeline(*r.pipeline, false);
}

void MixedView::show_inference(const devices::TaskSpec& t, const planner::HeteroInferPlan& p) {
  clear_plans();
  bool decode = t.mode != devices::Mode::kPrefill;
  add_row({tr("replicas per group (best)"), tr("all"), QString(), QString(), QString(), QString(),
           q(report::secs(decode ? p.tpot : p.ttft)) + (decode ? tr(" TPOT") : tr(" TTFT")),
           q(report::format_count(p.tokens_per_s)), QString(), QString()},
          true);
  for (const planner::InferShare& g : p.groups) {
    const planner::InferEstimate& e = g.plan;
    QString share =
        t.mode == devices::Mode::kServe
            ? tr("%1 req/s").arg(QString::fromStdString(devices::format_number(g.share, 3)))
            : tr("%1 sequences").arg(QString::fromStdString(devices::format_number(g.share, 4)));
    QStringList cells{QString(),
                      q(g.group),
                      q(g.device),
                      QString::number(g.devices),
                      share,
                      q(e.layout.str()),
                      q(report::secs(decode ? e.tpot : e.ttft)),
                      q(report::format_count(e.tokens_per_s))};
    add_row(cells + memory_cells(e.weights + e.kv_cache + e.workspace, e.capacity), false,
            GroupPlan{g.device, std::nullopt, e, std::nullopt});
  }
}

}  // namespace yirage::gui
