#include "gui/pareto_view.h"

#include "report/summary.h"

#include "devices/support/units.h"
#include "gui/chart_legend.h"

#include <QCursor>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPen>
#include <QSplitter>
#include <QToolTip>
#include <QVBoxLayout>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>
#include <map>

namespace yirage::gui {
namespace {

QString cost_name(SweepCost c) {
  return c == SweepCost::kPerHour ? QObject::tr("USD per hour")
                                  : QObject::tr("USD per million tokens");
}

QString number(double v) {
  return QString::fromStdString(devices::format_number(v, 4));
}

// An axis over [lo, hi]: logarithmic where the values span more than a factor of ten, as
// report/pareto.cpp draws `sweep --svg`.
QAbstractAxis* axis(double lo, double hi, const QString& title) {
  if (hi > 10 * lo) {
    auto* a = new QLogValueAxis();
    a->setLabelFormat("%g");
    a->setRange(lo / 1.5, hi * 1.5);
    a->setTitleText(title);
    return a;
  }
  auto* a = new QValueAxis();
  double pad = hi > lo ? (hi - lo) * 0.1 : std::max(lo * 0.1, 1e-9);
  a->setRange(std::max(0.0, lo - pad), hi + pad);
  a->setLabelFormat("%.4g");
  a->setTitleText(title);
  return a;
}

// Hovering a point of `s` names its scenario.
void add_tooltips(QXYSeries* s, const std::map<std::pair<double, double>, QString>& tips) {
  QObject::connect(s, &QXYSeries::hovered, s, [tips](const QPointF& p, bool on) {
    auto it = tips.find({p.x(), p.y()});
    if (on && it != tips.end())
      QToolTip::showText(QCursor::pos(), it->second);
    else
      QToolTip::hideText();
  });
}

QChart* front_chart(const SweepResult& r, const QString& title) {
  auto* chart = new QChart();
  chart->setTitle(title);
  std::map<std::string, QScatterSeries*> by_device;
  std::map<std::pair<double, double>, QString> tips;
  std::vector<std::pair<double, double>> front;
  double x_lo = 0, x_hi = 0, y_lo = 0, y_hi = 0;
  bool any = false;
  for (const SweepPoint& p : r.points) {
    std::optional<double> c = cost_of(p, r.cost);
    if (!c)
      continue;
    QScatterSeries*& s = by_device[p.device];
    if (s == nullptr) {
      s = new QScatterSeries();
      s->setName(QString::fromStdString(p.device));
      s->setMarkerSize(11);
    }
    s->append(*c, p.tokens_per_s);
    tips[{*c, p.tokens_per_s}] =
        QObject::tr("%1 x %2 nodes: %3\n%4 tokens/s, %5 %6%7")
            .arg(QString::fromStdString(p.device))
            .arg(p.nodes)
            .arg(QString::fromStdString(p.layout))
            .arg(QString::fromStdString(report::format_count(p.tokens_per_s)))
            .arg(number(*c))
            .arg(cost_name(r.cost))
            .arg(p.front ? QObject::tr(" (on the front)") : QString());
    if (p.front)
      front.emplace_back(*c, p.tokens_per_s);
    x_lo = any ? std::min(x_lo, *c) : *c;
    x_hi = any ? std::max(x_hi, *c) : *c;
    y_lo = any ? std::min(y_lo, p.tokens_per_s) : p.tokens_per_s;
    y_hi = any ? std::max(y_hi, p.tokens_per_s) : p.tokens_per_s;
    any = true;
  }
  if (!any)
    return chart;
  std::sort(front.begin(), front.end());
  auto* line = new QLineSeries();
  line->setName(QObject::tr("Pareto front"));
  line->setPointsVisible(true);
  line->setPen(QPen(QColor(214, 39, 40), 2));  // red: apart from the devices' colours
  line->setMarkerSize(15);
  for (auto [x, y] : front)
    line->append(x, y);
  chart->addSeries(line);
  add_tooltips(line, tips);
  for (auto& [name, s] : by_device) {
    chart->addSeries(s);
    add_tooltips(s, tips);
  }
  QAbstractAxis* x = axis(x_lo, x_hi, cost_name(r.cost));
  QAbstractAxis* y = axis(y_lo, y_hi, QObject::tr("tokens/s"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (QAbstractSeries* s : chart->series()) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
  place_legend(chart);
  return chart;
}

}  // namespace

ParetoView::ParetoView(QWidget* parent)
    : QWidget(parent),
      up_to_(new QSpinBox(this)),
      cost_(new QComboBox(this)),
      status_(new QLabel(this)),
      chart_(new QChartView(this)),
      table_(new QTableWidget(this)) {
  up_to_->setRange(1, 1'000'000);
  up_to_->setValue(16);
  up_to_->setPrefix(tr("1 to "));
  up_to_->setSuffix(tr(" nodes"));
  up_to_->setKeyboardTracking(false);
  up_to_->setToolTip(tr("The node counts swept: 1, 2, 4, ... and this one"));
  cost_->addItem(cost_name(SweepCost::kPerMillionTokens));
  cost_->addItem(cost_name(SweepCost::kPerHour));
  status_->setWordWrap(true);
  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->setMinimumHeight(220);
  table_->setColumnCount(8);
  table_->setHorizontalHeaderLabels({tr("device"), tr("nodes"), tr("devices"), tr("best layout"),
                                     tr("tokens/s"), tr("USD/h"), tr("USD/Mtok"), tr("front")});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  auto* bar = new QHBoxLayout();
  bar->addWidget(new QLabel(tr("Node counts"), this));
  bar->addWidget(up_to_);
  bar->addWidget(new QLabel(tr("cost"), this));
  bar->addWidget(cost_);
  bar->addWidget(status_, 1);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(chart_);
  split->addWidget(table_);
  split->setSizes({300, 200});
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(split, 1);
  connect(up_to_, &QSpinBox::valueChanged, this, [this] {
    user_range_ = true;
    emit changed();
  });
  connect(cost_, &QComboBox::currentIndexChanged, this, &ParetoView::changed);
  clear(tr("Open a cluster and a task file to sweep their node counts"));
}

std::vector<std::int64_t> ParetoView::counts() const {
  return node_counts(1, up_to_->value());
}

SweepCost ParetoView::cost() const {
  return cost_->currentIndex() == 1 ? SweepCost::kPerHour : SweepCost::kPerMillionTokens;
}

void ParetoView::suggest_range(std::int64_t nodes) {
  if (user_range_)
    return;
  QSignalBlocker block(up_to_);
  up_to_->setValue(static_cast<int>(std::clamp<std::int64_t>(4 * nodes, 16, 1'000'000)));
}

void ParetoView::show_busy(const QString& what) {
  status_->setText(tr("sweeping %1...").arg(what));
}

void ParetoView::clear(const QString& why) {
  result_ = {};
  QChart* old = chart_->chart();
  chart_->setChart(new QChart());
  delete old;
  table_->setRowCount(0);
  status_->setText(why);
}

void ParetoView::show_sweep(const SweepResult& r, const QString& title) {
  result_ = r;
  QChart* old = chart_->chart();
  chart_->setChart(front_chart(r, title));
  delete old;
  fill_table();
  std::size_t priced = 0;
  std::size_t front = 0;
  for (const SweepPoint& p : r.points) {
    priced += cost_of(p, r.cost) ? 1 : 0;
    front += p.front ? 1 : 0;
  }
  QString text = tr("%1 scenarios, %2 with an answer and a price, %3 on the front (*): no "
                    "other has more tokens/s for less")
                     .arg(r.points.size())
                     .arg(priced)
                     .arg(front);
  if (priced == 0)
    text = tr("%1 scenarios, none with both an answer and a price: give the devices or the "
              "node groups a price to place them")
               .arg(r.points.size());
  if (!r.note.empty())
    text += "; " + QString::fromStdString(r.note);
  status_->setText(text);
}

void ParetoView::fill_table() {
  table_->setRowCount(static_cast<int>(result_.points.size()));
  for (std::size_t i = 0; i < result_.points.size(); ++i) {
    const SweepPoint& p = result_.points[i];
    auto opt = [](const std::optional<double>& v) {
      return v ? number(*v) : QString("-");
    };
    QStringList cells = {
        QString::fromStdString(p.device),
        QString::number(p.nodes),
        QString::number(p.devices),
        QString::fromStdString(p.layout.empty() ? p.why : p.layout),
        p.layout.empty() ? "-" : QString::fromStdString(report::format_count(p.tokens_per_s)),
        opt(p.usd_per_hour),
        opt(p.usd_per_mtok),
        p.front ? "*" : ""};
    for (int c = 0; c < cells.size(); ++c) {
      auto* item = new QTableWidgetItem(cells[c]);
      if (c == 1 || c == 2 || (c >= 4 && c <= 6))
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(static_cast<int>(i), c, item);
    }
  }
}

}  // namespace yirage::gui
