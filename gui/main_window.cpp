#include "gui/main_window.h"

#include "cli/atomic_write.h"
#include "cli/plan_report.h"
#include "devices/cluster_loader.h"
#include "devices/model_loader.h"
#include "devices/task_loader.h"

#include <QFileDialog>
#include <QFontDatabase>
#include <QHeaderView>
#include <QMenuBar>
#include <QMessageBox>
#include <QSplitter>
#include <QStatusBar>
#include <QThreadPool>
#include <QVBoxLayout>

#include <sstream>

namespace yirage::gui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      registry_(devices::DeviceRegistry::load_bundled()),
      calibrations_(costmodel::CalibrationSet::load_dir(devices::data_dir() / "calibration")),
      view_(new ClusterView(this)),
      what_if_(new WhatIfPanel(registry_, this)),
      model_(new PlansModel(this)),
      table_(new QTableView(this)),
      charts_(new PlanCharts(this)),
      report_(new QPlainTextEdit(this)),
      tabs_(new QTabWidget(this)),
      status_(new QLabel(this)),
      progress_(new QProgressBar(this)),
      cancel_(new QPushButton(tr("Cancel"), this)) {
  cancel_->setObjectName("cancel");
  setWindowTitle(tr("yirage"));
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  report_->setReadOnly(true);
  report_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  report_->setLineWrapMode(QPlainTextEdit::NoWrap);
  auto* charts = new QSplitter(Qt::Horizontal, this);
  charts->addWidget(charts_->breakdown());
  charts->addWidget(charts_->memory());
  tabs_->addTab(charts, tr("Step and memory"));
  tabs_->addTab(report_, tr("Report"));
  tabs_->addTab(view_, tr("Cluster"));

  auto* right = new QSplitter(Qt::Vertical, this);
  right->addWidget(table_);
  right->addWidget(tabs_);
  right->setStretchFactor(0, 1);
  right->setStretchFactor(1, 1);
  auto* main = new QSplitter(Qt::Horizontal, this);
  main->addWidget(what_if_);
  main->addWidget(right);
  main->setStretchFactor(1, 1);
  setCentralWidget(main);

  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setText(tr("Open a cluster and a task file (File menu)"));
  progress_->setRange(0, 0);  // busy: the search reports no fraction
  progress_->setMaximumWidth(120);
  progress_->setVisible(false);
  cancel_->setVisible(false);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("Open &cluster..."), QKeySequence::Open, this, &MainWindow::choose_cluster);
  file->addAction(tr("Open &task..."), this, &MainWindow::choose_task);
  file->addAction(tr("&Export the selected plan (JSON)..."), this, &MainWindow::export_plan);
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  connect(what_if_, &WhatIfPanel::changed, this, &MainWindow::recompute);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &MainWindow::show_selected);
  connect(cancel_, &QPushButton::clicked, this, [this] {
    ++generation_;  // the result in flight is dropped when it arrives
    progress_->setVisible(false);
    cancel_->setVisible(false);
    status_->setText(tr("cancelled: the plans shown are the previous scenario's"));
  });
  resize(1280, 800);
}

MainWindow::~MainWindow() {
  ++generation_;
  QThreadPool::globalInstance()->waitForDone();
}

bool MainWindow::open_cluster(const QString& path) {
  try {
    cluster_ = devices::load_cluster(path.toStdString(), registry_);
  } catch (const devices::InputError& e) {
    cluster_.reset();
    view_->setRowCount(0);
    status_->setText(QString::fromStdString(e.what()));
    return false;
  }
  view_->show_cluster(*cluster_);
  status_->setText(tr("%1: %2 devices in %3 nodes")
                       .arg(QString::fromStdString(cluster_->name))
                       .arg(cluster_->total_devices())
                       .arg(cluster_->total_nodes()));
  setWindowTitle(tr("yirage - %1").arg(path));
  if (task_) {
    what_if_->set_base(*cluster_, *task_);
    recompute();
  }
  return true;
}

bool MainWindow::open_task(const QString& path) {
  try {
    task_ = devices::load_task(path.toStdString(), devices::ModelRegistry::load_bundled());
  } catch (const devices::InputError& e) {
    task_.reset();
    status_->setText(QString::fromStdString(e.what()));
    return false;
  }
  if (cluster_) {
    what_if_->set_base(*cluster_, *task_);
    recompute();
  }
  return true;
}

void MainWindow::recompute() {
  if (!cluster_ || !task_ || !auto_)
    return;
  devices::ClusterSpec c = *cluster_;
  devices::TaskSpec t = *task_;
  try {
    apply(what_if_->what_if(), registry_, c, t);
  } catch (const devices::InputError& e) {
    status_->setText(QString::fromStdString(e.what()));
    return;
  }
  std::uint64_t gen = ++generation_;
  progress_->setVisible(true);
  cancel_->setVisible(true);
  status_->setText(tr("planning..."));
  QThreadPool::globalInstance()->start([this, gen, c = std::move(c), t = std::move(t)] {
    ScenarioResult r = evaluate(c, t, calibrations_);
    QMetaObject::invokeMethod(
        this,
        [this, gen, r = std::move(r)] {
          if (gen != generation_)
            return;  // a newer scenario, or Cancel
          progress_->setVisible(false);
          cancel_->setVisible(false);
          show_result(r);
        },
        Qt::QueuedConnection);
  });
}

void MainWindow::recompute_now() {
  if (!cluster_ || !task_)
    return;
  devices::ClusterSpec c = *cluster_;
  devices::TaskSpec t = *task_;
  apply(what_if_->what_if(), registry_, c, t);
  ++generation_;
  show_result(evaluate(c, t, calibrations_));
}

void MainWindow::show_result(const ScenarioResult& r) {
  model_->show(r);
  view_->show_cluster(r.cluster);
  if (!r.error.empty()) {
    status_->setText(QString::fromStdString(r.error));
    report_->setPlainText(QString::fromStdString(r.error));
    charts_->clear();
  } else {
    std::size_t n = r.train.empty() ? r.infer.size() : r.train.size();
    status_->setText(tr("%1 on %2: %3 plans of %4 candidates in %5 ms")
                         .arg(QString::fromStdString(r.task.name))
                         .arg(QString::fromStdString(r.cluster.name))
                         .arg(n)
                         .arg(r.candidates)
                         .arg(r.seconds * 1e3, 0, 'f', 0));
    report_->setPlainText(QString::fromStdString(r.report));
    if (n > 0)
      select_plan(0);
    else
      charts_->clear();  // a mixed cluster: the report says it all
  }
  emit plans_updated();
}

void MainWindow::select_plan(int row) {
  if (row < 0 || row >= model_->rowCount())
    return;
  table_->selectRow(row);
  show_selected();
}

void MainWindow::show_selected() {
  QModelIndexList rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty())
    return;
  auto i = static_cast<std::size_t>(rows.front().row());
  const ScenarioResult& r = model_->result();
  const std::string& device = r.cluster.groups.front().device;
  if (i < r.train.size()) {
    charts_->show(r.train[i], device);
    std::ostringstream detail;
    cli::print_plan_detail(detail, r.train[i], r.task, cli::model_note(r.cluster, calibrations_));
    report_->setPlainText(QString::fromStdString(detail.str()));
  } else if (i < r.infer.size()) {
    charts_->show(r.infer[i], device);
  }
}

void MainWindow::choose_cluster() {
  QString path = QFileDialog::getOpenFileName(this, tr("Open cluster"), QString(),
                                              tr("Cluster files (*.yaml *.yml)"));
  if (!path.isEmpty())
    open_cluster(path);
}

void MainWindow::choose_task() {
  QString path = QFileDialog::getOpenFileName(this, tr("Open task"), QString(),
                                              tr("Task files (*.yaml *.yml)"));
  if (!path.isEmpty())
    open_task(path);
}

void MainWindow::export_plan() {
  QModelIndexList rows = table_->selectionModel()->selectedRows();
  const ScenarioResult& r = model_->result();
  if (rows.isEmpty() || (r.train.empty() && r.infer.empty()))
    return;
  QString path =
      QFileDialog::getSaveFileName(this, tr("Export plan"), QString(), tr("JSON (*.json)"));
  if (path.isEmpty())
    return;
  auto i = static_cast<std::size_t>(rows.front().row());
  nlohmann::ordered_json j =
      r.train.empty() ? cli::infer_json(r.infer[i]) : cli::plan_json(r.train[i]);
  if (std::string err = cli::atomic_write(path.toStdString(), j.dump(2) + "\n"); !err.empty())
    QMessageBox::warning(this, tr("Export plan"), QString::fromStdString(err));
}

}  // namespace yirage::gui
