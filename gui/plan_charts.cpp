#include "gui/plan_charts.h"

#include "gui/chart_legend.h"

#include <QFileInfo>
#include <QPainter>
#include <QSvgGenerator>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalStackedBarSeries>
#include <QtCharts/QValueAxis>

#include <vector>

namespace yirage::gui {
namespace {

struct Part {
  const char* name;
  double value;
};

// One horizontal stacked bar per category; `parts[c]` are category c's parts (by name,
// the same names in every category, zero where absent).
QChart* stacked(const QString& title,
                const QStringList& categories,
                const std::vector<std::vector<Part>>& parts,
                const QString& unit,
                double scale) {
  auto* series = new QHorizontalStackedBarSeries();
  for (std::size_t k = 0; !parts.empty() && k < parts.front().size(); ++k) {
    auto* set = new QBarSet(parts.front()[k].name);
    for (const std::vector<Part>& c : parts)
      *set << c[k].value * scale;
    series->append(set);
  }
  auto* chart = new QChart();
  chart->setTitle(title);
  chart->addSeries(series);
  auto* y = new QBarCategoryAxis();
  y->append(categories);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(y);
  auto* x = new QValueAxis();
  x->setTitleText(unit);
  x->setLabelFormat("%.3g");
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
  place_legend(chart);
  return chart;
}

void replace(QChartView* view, QChart* chart) {
  QChart* old = view->chart();
  view->setChart(chart);
  delete old;
}

}  // namespace

PlanCharts::PlanCharts(QWidget* parent)
    : QObject(parent), breakdown_(new QChartView(parent)), memory_(new QChartView(parent)) {
  breakdown_->setRenderHint(QPainter::Antialiasing);
  memory_->setRenderHint(QPainter::Antialiasing);
  breakdown_->setMinimumHeight(180);
  memory_->setMinimumHeight(180);
  clear();
}

void PlanCharts::clear() {
  replace(breakdown_, stacked(tr("Step time"), {}, {}, "s", 1));
  replace(memory_, stacked(tr("Memory per device"), {}, {}, "GB", 1));
}

QString PlanCharts::save(const QString& path) const {
  QFileInfo info(path);
  QString ext = info.suffix().toLower();
  if (ext != "png" && ext != "svg")
    return tr("%1: charts are saved as .png or .svg").arg(path);
  for (auto [view, part] : {std::pair{breakdown_, "step"}, std::pair{memory_, "memory"}}) {
    QString out = info.path() + "/" + info.completeBaseName() + "-" + part + "." + ext;
    if (ext == "png") {
      if (!view->grab().save(out, "PNG"))
        return tr("%1: cannot be written").arg(out);
      continue;
    }
    QSvgGenerator svg;
    svg.setFileName(out);
    svg.setSize(view->size());
    svg.setViewBox(QRect(QPoint(0, 0), view->size()));
    svg.setTitle(view->chart()->title());
    QPainter painter;
    if (!painter.begin(&svg))
      return tr("%1: cannot be written").arg(out);
    view->render(&painter);
    painter.end();
  }
  return {};
}

namespace {

std::vector<Part> step_parts(const planner::StepBreakdown& b) {
  return {{"compute", b.compute},         {"TP/CP/EP collectives", b.tp_comm},
          {"pipeline sends", b.pp_comm},  {"bubble", b.bubble},
          {"exposed DP sync", b.dp_comm}, {"optimizer", b.optimizer}};
}

// A capacity bar and a used bar per category.
std::vector<std::vector<Part>> memory_parts(const std::vector<planner::MemoryUse>& uses) {
  std::vector<std::vector<Part>> parts;
  for (const planner::MemoryUse& m : uses) {
    parts.push_back({{"weights", 0},
                     {"gradients", 0},
                     {"optimizer", 0},
                     {"activations", 0},
                     {"usable capacity", m.capacity}});
    parts.push_back({{"weights", m.weights},
                     {"gradients", m.gradients},
                     {"optimizer", m.optimizer},
                     {"activations", m.activations},
                     {"usable capacity", 0}});
  }
  return parts;
}

}  // namespace

void PlanCharts::show(const planner::PlanEstimate& p, const std::string& device) {
  replace(breakdown_, stacked(tr("Step time of<br>%1").arg(QString::fromStdString(p.layout.str())),
                              {"step"}, {step_parts(p.step)}, "seconds", 1));
  replace(memory_, stacked(tr("Memory per %1 device").arg(QString::fromStdString(device)),
                           {"capacity", "used"}, memory_parts({p.memory}), "GB", 1e-9));
}

void PlanCharts::show_groups(
    const QString& title,
    const std::vector<std::pair<std::string, planner::StepBreakdown>>& steps,
    const std::vector<std::pair<std::string, planner::MemoryUse>>& groups) {
  QStringList names;
  std::vector<std::vector<Part>> parts;
  for (const auto& [name, step] : steps) {
    names << QString::fromStdString(name);
    parts.push_back(step_parts(step));
  }
  replace(breakdown_, stacked(title, names, parts, "seconds", 1));
  QStringList categories;
  std::vector<planner::MemoryUse> uses;
  for (const auto& [name, m] : groups) {
    categories << QString::fromStdString(name + ": capacity")
               << QString::fromStdString(name + ": used");
    uses.push_back(m);
  }
  replace(memory_, stacked(tr("Memory per device of each node group"), categories,
                           memory_parts(uses), "GB", 1e-9));
}

void PlanCharts::show(const planner::InferEstimate& p, const std::string& device) {
  QString layout = QString::fromStdString(p.layout.str());
  if (p.mode == devices::Mode::kServe) {
    // Serving has both: a prompt's first token (with its queueing) and each next token.
    replace(breakdown_, stacked(tr("TTFT and TPOT of %1 at the offered rate").arg(layout),
                                {"time to first token", "time per output token"},
                                {{{"latency", p.ttft}}, {{"latency", p.tpot}}}, "seconds", 1));
  } else {
    double step = p.tpot > 0 ? p.tpot : p.ttft;
    replace(breakdown_,
            stacked(tr("%1 of %2")
                        .arg(p.tpot > 0 ? "Time per output token" : "Time to first token")
                        .arg(layout),
                    {"step"}, {{{"forward pass", step}}}, "seconds", 1));
  }
  replace(
      memory_,
      stacked(tr("Memory per %1 device").arg(QString::fromStdString(device)), {"capacity", "used"},
              {{{"weights", 0}, {"KV cache", 0}, {"workspace", 0}, {"usable capacity", p.capacity}},
               {{"weights", p.weights},
                {"KV cache", p.kv_cache},
                {"workspace", p.workspace},
                {"usable capacity", 0}}},
              "GB", 1e-9));
}

}  // namespace yirage::gui
