#include "gui/main_window.h"

#include "report/atomic_write.h"
#include "report/hetero_report.h"
#include "report/plan_report.h"
#include "report/structured_output.h"
#include "report/summary.h"

#include "devices/cluster_loader.h"
#include "devices/model_loader.h"
#include "devices/task_loader.h"

#include <QCloseEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
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
      mixed_(new MixedView(this)),
      charts_(new PlanCharts(this)),
      ops_(new OpsView(registry_, calibrations_, this)),
      report_(new QPlainTextEdit(this)),
      cluster_editor_(new FileEditor(
          tr("cluster"),
          [this](const std::string& path, const std::string& text) { apply_cluster(path, text); },
          this)),
      task_editor_(new FileEditor(
          tr("task"),
          [this](const std::string& path, const std::string& text) { apply_task(path, text); },
          this)),
      compare_(new CompareView(this)),
      timeline_tab_(new TimelineTab(calibrations_, this)),
      pareto_(new ParetoView(this)),
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
  auto* charts_tab = new QWidget(this);
  auto* charts_layout = new QVBoxLayout(charts_tab);
  auto* charts = new QSplitter(Qt::Horizontal, this);
  charts->addWidget(charts_->breakdown());
  charts->addWidget(charts_->memory());
  charts_layout->addWidget(charts, 1);
  auto* export_charts = new QPushButton(tr("Export charts (PNG or SVG)..."), this);
  charts_layout->addWidget(export_charts, 0, Qt::AlignLeft);
  tabs_->addTab(charts_tab, tr("Step and memory"));
  connect(export_charts, &QPushButton::clicked, this, [this] {
    QString path = QFileDialog::getSaveFileName(this, tr("Export charts"), QString(),
                                                tr("PNG (*.png);;SVG (*.svg)"));
    if (path.isEmpty())
      return;
    if (QString err = charts_->save(path); !err.isEmpty())
      QMessageBox::warning(this, tr("Export charts"), err);
  });
  tabs_->addTab(ops_, tr("Operations"));
  tabs_->addTab(report_, tr("Report"));
  tabs_->addTab(timeline_tab_, tr("Timeline"));
  connect(timeline_tab_, &TimelineTab::replayed, this, &MainWindow::replayed);
  tabs_->addTab(pareto_, tr("Pareto"));
  connect(pareto_, &ParetoView::changed, this, [this] {
    sweep_stale_ = true;
    sweep();
  });
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if (sweep_stale_)
      sweep();
  });
  auto* compare_tab = new QWidget(this);
  auto* compare_layout = new QVBoxLayout(compare_tab);
  auto* keep = new QPushButton(tr("Keep this scenario as A"), this);
  compare_layout->addWidget(keep, 0, Qt::AlignLeft);
  compare_layout->addWidget(compare_, 1);
  tabs_->addTab(compare_tab, tr("Compare"));
  connect(keep, &QPushButton::clicked, this, &MainWindow::keep_scenario);
  tabs_->addTab(view_, tr("Cluster"));
  tabs_->addTab(files_tab(), tr("Files"));
  ask_ = [this] {
    return QMessageBox::question(this, tr("Unsaved edits"),
                                 tr("The cluster or task file has edits that are not saved. "
                                    "Save them?"),
                                 QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
  };

  auto* right = new QSplitter(Qt::Vertical, this);
  auto* plans = new QWidget(this);
  auto* plans_layout = new QVBoxLayout(plans);
  plans_layout->setContentsMargins(0, 0, 0, 0);
  plans_layout->addWidget(table_);
  plans_layout->addWidget(mixed_);
  mixed_->setVisible(false);
  right->addWidget(plans);
  right->addWidget(tabs_);
  right->setStretchFactor(0, 1);
  right->setStretchFactor(1, 1);
  auto* main = new QSplitter(Qt::Horizontal, this);
  main->addWidget(what_if_);
  main->addWidget(right);
  main->setStretchFactor(1, 1);
  setCentralWidget(main);

  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // A loader's message is several lines (file:line:col, the source line, a caret) and often
  // longer than the bar is wide: wrapped and plain, it shows whole instead of its first
  // characters; never read as rich text.
  status_->setTextFormat(Qt::PlainText);
  status_->setWordWrap(true);
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
  recent_menu_ = file->addMenu(tr("Open &recent"));
  update_recent_menu();
  file->addAction(tr("&Save the edited files"), QKeySequence::Save, this, [this] {
    if (cluster_editor_->modified())
      cluster_editor_->save();
    if (task_editor_->modified())
      task_editor_->save();
  });
  file->addAction(tr("&Export the selected plan (JSON or YAML)..."), this,
                  &MainWindow::export_plan);
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  connect(what_if_, &WhatIfPanel::changed, this, &MainWindow::recompute);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &MainWindow::show_selected);
  connect(mixed_, &QTableWidget::itemSelectionChanged, this, &MainWindow::show_mixed_selected);
  connect(cancel_, &QPushButton::clicked, this, [this] {
    ++generation_;  // the result in flight is dropped when it arrives
    progress_->setVisible(false);
    cancel_->setVisible(false);
    status_->setText(tr("cancelled: the plans shown are the previous scenario's"));
  });
  resize(1280, 800);
}

// The Files tab: each file's form above its text.
QWidget* MainWindow::files_tab() {
  cluster_form_ = new FileForm(
      FileForm::Kind::kCluster, cluster_editor_,
      [this](const std::string& path, const std::string& text) {
        devices::parse_cluster(path, text, registry_);
      },
      this);
  task_form_ = new FileForm(
      FileForm::Kind::kTask, task_editor_,
      [](const std::string& path, const std::string& text) {
        devices::parse_task(path, text, devices::ModelRegistry::load_bundled());
      },
      this);
  QStringList devices;
  for (const devices::DeviceSpec& d : registry_.devices()) {
    if (d.kind != devices::DeviceKind::kCpu)
      devices << QString::fromStdString(d.name);
  }
  cluster_form_->set_choices("device", devices);
  QStringList models;
  for (const std::string& name : devices::ModelRegistry::load_bundled().names())
    models << QString::fromStdString(name);
  task_form_->set_choices("model", models);
  task_form_->set_choices("mode", {"train", "prefill", "decode", "serve", "generate"});
  QStringList precisions;
  for (devices::DType t : devices::kAllDTypes)
    precisions << QString::fromStdString(devices::dtype_name(t));
  task_form_->set_choices("precision", precisions);
  auto* files = new QSplitter(Qt::Horizontal, this);
  for (auto [form, editor] : {std::pair<QWidget*, QWidget*>{cluster_form_, cluster_editor_},
                              std::pair<QWidget*, QWidget*>{task_form_, task_editor_}}) {
    auto* column = new QSplitter(Qt::Vertical, this);
    column->addWidget(form);
    column->addWidget(editor);
    files->addWidget(column);
  }
  return files;
}

MainWindow::~MainWindow() {
  ++generation_;
  QThreadPool::globalInstance()->waitForDone();
}

bool MainWindow::open_cluster(const QString& path) {
  bool ok = cluster_editor_->open(path);
  if (ok) {
    remember(path);
    setWindowTitle(tr("yirage - %1").arg(path));
  } else if (cluster_editor_->path() != path) {
    status_->setText(cluster_editor_->problems());  // not even read
  }
  return ok;
}

bool MainWindow::open_task(const QString& path) {
  bool ok = task_editor_->open(path);
  if (ok)
    remember(path);
  else if (task_editor_->path() != path)
    status_->setText(task_editor_->problems());
  return ok;
}

void MainWindow::apply_cluster(const std::string& path, const std::string& text) {
  drop_in_flight();  // its plans are of the files as they were
  try {
    cluster_ = devices::parse_cluster(path, text, registry_);
    calibrations_.inherit_derived(cluster_->device_types);
  } catch (const devices::InputError& e) {
    cluster_.reset();
    view_->setRowCount(0);
    status_->setText(QString::fromStdString(e.what()));
    throw;
  }
  view_->show_cluster(*cluster_);
  what_if_->set_cluster(*cluster_);
  if (task_)
    what_if_->set_task(*task_);  // "back to the files" for every control, not only the cluster's
  show_files_status();
  recompute();
}

void MainWindow::apply_task(const std::string& path, const std::string& text) {
  drop_in_flight();
  try {
    task_ = devices::parse_task(path, text, devices::ModelRegistry::load_bundled());
  } catch (const devices::InputError& e) {
    task_.reset();
    status_->setText(QString::fromStdString(e.what()));
    throw;
  }
  if (cluster_)
    what_if_->set_cluster(*cluster_);
  what_if_->set_task(*task_);
  show_files_status();
  recompute();
}

void MainWindow::drop_in_flight() {
  ++generation_;
  progress_->setVisible(false);
  cancel_->setVisible(false);
}

// What the files loaded now describe, until their plans arrive.
void MainWindow::show_files_status() {
  QStringList parts;
  if (cluster_) {
    parts << tr("%1: %2 devices in %3 nodes")
                 .arg(QString::fromStdString(cluster_->name))
                 .arg(cluster_->total_devices())
                 .arg(cluster_->total_nodes());
  }
  if (task_) {
    parts << tr("task %1 (%2)")
                 .arg(QString::fromStdString(task_->name))
                 .arg(QString::fromStdString(devices::mode_name(task_->mode)));
  }
  if (!cluster_ || !task_)
    parts << tr("open a %1 file to plan").arg(cluster_ ? tr("task") : tr("cluster"));
  status_->setText(parts.join("; "));
}

QStringList MainWindow::recent_files() const {
  return QSettings().value("recent").toStringList();
}

void MainWindow::remember(const QString& path) {
  QStringList recent = recent_files();
  QString absolute = QFileInfo(path).absoluteFilePath();
  recent.removeAll(absolute);
  recent.prepend(absolute);
  while (recent.size() > 10)
    recent.removeLast();
  QSettings().setValue("recent", recent);
  update_recent_menu();
}

void MainWindow::update_recent_menu() {
  recent_menu_->clear();
  for (const QString& path : recent_files()) {
    recent_menu_->addAction(path, this, [this, path] {
      // A task file names a model; a cluster file, node groups.
      bool ok = false;
      QFile f(path);
      if (f.open(QIODevice::ReadOnly))
        ok = f.readAll().contains("model:");
      if (ok)
        open_task(path);
      else
        open_cluster(path);
    });
  }
  recent_menu_->setEnabled(!recent_menu_->isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* e) {
  if (!cluster_editor_->modified() && !task_editor_->modified()) {
    e->accept();
    return;
  }
  QMessageBox::StandardButton b = ask_();
  if (b == QMessageBox::Cancel) {
    e->ignore();
    return;
  }
  if (b == QMessageBox::Save) {
    bool saved = (!cluster_editor_->modified() || cluster_editor_->save()) &&
                 (!task_editor_->modified() || task_editor_->save());
    if (!saved) {
      e->ignore();  // the editor shows why
      return;
    }
  }
  e->accept();  // Discard: the autosave keeps the edits until the file is opened again
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
  status_->setText(tr("planning %1 on %2...")
                       .arg(QString::fromStdString(t.name))
                       .arg(QString::fromStdString(c.name)));
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
  timeline_tab_->set_job(std::nullopt);  // until a plan of these is selected
  sweep_stale_ = true;
  if (!r.cluster.groups.empty())
    pareto_->suggest_range(r.cluster.groups.front().nodes);
  sweep();
  bool mixed = r.mixed_train || r.mixed_infer;
  table_->setVisible(!mixed);
  mixed_->setVisible(mixed);
  if (!mixed)
    mixed_->clear_plans();
  view_->show_cluster(r.cluster);
  if (!r.error.empty()) {
    status_->setText(QString::fromStdString(r.error));
    report_->setPlainText(QString::fromStdString(r.error));
    charts_->clear();
    ops_->clear();
  } else {
    std::size_t n = r.train.empty() ? r.infer.size() : r.train.size();
    if (r.mixed_train || r.mixed_infer) {
      status_->setText(tr("%1 on %2 (%3 node groups, the controls change the first): the "
                          "plans in %4 ms, the whole report in the Report tab")
                           .arg(QString::fromStdString(r.task.name))
                           .arg(QString::fromStdString(r.cluster.name))
                           .arg(r.cluster.groups.size())
                           .arg(r.seconds * 1e3, 0, 'f', 0));
      report_->setPlainText(QString::fromStdString(r.report));
      if (r.mixed_train)
        mixed_->show_training(*r.mixed_train);
      else
        mixed_->show_inference(r.task, *r.mixed_infer);
      show_mixed_groups(r);
      emit plans_updated();
      return;
    }
    status_->setText(tr("%1 on %2: %3 plans of %4 candidates in %5 ms")
                         .arg(QString::fromStdString(r.task.name))
                         .arg(QString::fromStdString(r.cluster.name))
                         .arg(n)
                         .arg(r.candidates)
                         .arg(r.seconds * 1e3, 0, 'f', 0));
    report_->setPlainText(QString::fromStdString(r.report));
    compare_->set_current(r, scenario_label());
    if (n > 0) {
      select_plan(0);
    } else {
      charts_->clear();
      ops_->clear();
    }
  }
  emit plans_updated();
}

void MainWindow::select_plan(int row) {
  if (row < 0 || row >= model_->rowCount())
    return;
  table_->selectRow(row);
  show_selected();
}

void MainWindow::keep_scenario() {
  compare_->keep(model_->result(), scenario_label());
}

QString MainWindow::scenario_label() const {
  const ScenarioResult& r = model_->result();
  QString label = QString::fromStdString(r.task.name + " on " + r.cluster.name);
  WhatIf w = what_if_->what_if();
  QStringList changes;
  if (w.nodes)
    changes << tr("%1 nodes").arg(*w.nodes);
  if (w.devices_per_node)
    changes << tr("%1 per node").arg(*w.devices_per_node);
  if (w.device)
    changes << QString::fromStdString(*w.device);
  if (w.global_batch)
    changes << tr("batch %1").arg(*w.global_batch);
  if (w.sequence_length)
    changes << tr("sequence %1").arg(*w.sequence_length);
  if (w.precision)
    changes << QString::fromStdString(devices::dtype_name(*w.precision));
  if (w.fabric_scale != 1)
    changes << tr("fabric x%1").arg(w.fabric_scale);
  if (w.network_scale != 1)
    changes << tr("network x%1").arg(w.network_scale);
  return changes.isEmpty() ? label : label + " (" + changes.join(", ") + ")";
}

bool MainWindow::select_layout(const QString& layout) {
  for (int row = 0; row < model_->rowCount(); ++row) {
    if (model_->data(model_->index(row, 0), Qt::DisplayRole).toString() == layout) {
      select_plan(row);
      return true;
    }
  }
  return false;
}

void MainWindow::show_selected() {
  QModelIndexList rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty())
    return;
  timeline_tab_->set_job(replay_job());
  auto i = static_cast<std::size_t>(rows.front().row());
  const ScenarioResult& r = model_->result();
  const std::string& device = r.cluster.groups.front().device;
  OpsSelection ops{r.task, {}, {}, device, {}};
  for (const devices::DeviceSpec& d : r.cluster.device_types)
    ops.device_types.push_back(d.name);
  if (i < r.train.size()) {
    ops.shape = planner::training_layer_shape(r.task, r.train[i].layout);
    ops.layout = r.train[i].layout.str();
    ops_->show_plan(ops);
    charts_->show(r.train[i], device);
    std::ostringstream detail;
    report::print_plan_detail(detail, r.train[i], r.task,
                              report::model_note(r.cluster, calibrations_, devices::Mode::kTrain));
    report_->setPlainText(QString::fromStdString(detail.str()));
  } else if (i < r.infer.size()) {
    ops.shape = planner::inference_layer_shape(r.task, r.infer[i].layout);
    ops.layout = r.infer[i].layout.str();
    ops_->show_plan(ops);
    charts_->show(r.infer[i], device);
  }
}

// The groups' memory of the best mixed plan (and the pipeline's step when it is the best).
void MainWindow::show_mixed_groups(const ScenarioResult& r) {
  ops_->clear();
  if (!r.mixed_train) {
    charts_->clear();
    return;
  }
  const planner::HeteroResult& h = *r.mixed_train;
  if (report::pipeline_is_best(h)) {
    charts_->show_groups(tr("Step time of %1").arg(QString::fromStdString(h.pipeline->str())),
                         {{"step", h.pipeline->step}}, mixed_->best_memory());
    return;
  }
  // Data parallelism across the groups: each group's step on its share of the batch.
  std::vector<std::pair<std::string, planner::StepBreakdown>> steps;
  for (const planner::GroupShare& g : h.plan->groups)
    steps.emplace_back(g.group, g.plan.step);
  charts_->show_groups(tr("Step time of each node group<br>(data parallelism across them)"), steps,
                       mixed_->best_memory());
}

// A node group's own plan (data parallelism across groups, inference): its charts and
// operations; a pipeline part: its stages' operations; a plan's row: the groups again.
void MainWindow::show_mixed_selected() {
  const ScenarioResult& r = model_->result();
  const MixedView::GroupPlan* g = mixed_->group_plan(mixed_->currentRow());
  if (g == nullptr) {
    show_mixed_groups(r);
    return;
  }
  OpsSelection ops{r.task, {}, {}, g->device, {}};
  for (const devices::DeviceSpec& d : r.cluster.device_types)
    ops.device_types.push_back(d.name);
  if (g->stage) {
    ops.shape = planner::training_layer_shape(r.task, *g->stage);
    ops.layout = mixed_->item(mixed_->currentRow(), 1)->text().toStdString() +
                 ": tp=" + std::to_string(g->stage->tp) +
                 ", mb=" + std::to_string(g->stage->micro_batch);
  } else if (g->train) {
    charts_->show(*g->train, g->device);
    ops.shape = planner::training_layer_shape(r.task, g->train->layout);
    ops.layout = g->train->layout.str();
  } else {
    charts_->show(*g->infer, g->device);
    ops.shape = planner::inference_layer_shape(r.task, g->infer->layout);
    ops.layout = g->infer->layout.str();
  }
  ops_->show_plan(ops);
}

std::optional<ReplayJob> MainWindow::replay_job() const {
  QModelIndexList rows = table_->selectionModel()->selectedRows();
  const ScenarioResult& r = model_->result();
  if (rows.isEmpty() || r.cluster.groups.size() != 1)
    return std::nullopt;
  auto i = static_cast<std::size_t>(rows.front().row());
  ReplayJob job{r.cluster, r.task, std::nullopt, std::nullopt, 1, 1};
  if (i < r.train.size()) {
    const planner::Layout& l = r.train[i].layout;
    job.train = r.train[i];
    job.stages = l.pp;
    job.stage_ranks = l.tp * l.cp * l.dp;
  } else if (i < r.infer.size()) {
    job.infer = r.infer[i];
    job.stages = r.infer[i].layout.pp;
    job.stage_ranks = r.infer[i].layout.tp;
  } else {
    return std::nullopt;
  }
  return job;
}

void MainWindow::replay_selected() {
  timeline_tab_->replay();
}

void MainWindow::replay_selected_now() {
  timeline_tab_->replay_now();
}

QString MainWindow::sweep_title() const {
  const ScenarioResult& r = model_->result();
  return tr("%1 on %2's node types: best plan per node count")
      .arg(QString::fromStdString(r.task.name))
      .arg(QString::fromStdString(r.cluster.name));
}

// The scenario's node types over the Pareto tab's node counts, as `yirage-plan sweep` runs
// them, on a worker thread; only while the tab is in front (a sweep is one search per point).
void MainWindow::sweep() {
  const ScenarioResult& r = model_->result();
  if (tabs_->currentWidget() != pareto_ || !sweep_stale_ || r.cluster.groups.empty())
    return;
  sweep_stale_ = false;
  std::uint64_t gen = ++sweep_generation_;
  pareto_->show_busy(scenario_label());
  QThreadPool::globalInstance()->start(
      [this, gen, c = r.cluster, t = r.task, counts = pareto_->counts(), cost = pareto_->cost()] {
        SweepResult s = sweep_nodes(c, t, calibrations_, counts, cost);
        QMetaObject::invokeMethod(
            this,
            [this, gen, s = std::move(s)] {
              if (gen != sweep_generation_)
                return;  // the scenario or the range changed since
              pareto_->show_sweep(s, sweep_title());
              emit swept();
            },
            Qt::QueuedConnection);
      });
}

void MainWindow::sweep_now() {
  const ScenarioResult& r = model_->result();
  if (r.cluster.groups.empty())
    return;
  ++sweep_generation_;
  sweep_stale_ = false;
  pareto_->show_sweep(
      sweep_nodes(r.cluster, r.task, calibrations_, pareto_->counts(), pareto_->cost()),
      sweep_title());
  emit swept();
}

bool MainWindow::show_tab(const QString& title) {
  for (int i = 0; i < tabs_->count(); ++i) {
    if (tabs_->tabText(i).startsWith(title, Qt::CaseInsensitive)) {
      tabs_->setCurrentIndex(i);
      return true;
    }
  }
  return false;
}

QString MainWindow::export_trace(const QString& path) const {
  return timeline_tab_->export_trace(path);
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
  QString path = QFileDialog::getSaveFileName(this, tr("Export plan"), QString(),
                                              tr("JSON (*.json);;YAML (*.yaml *.yml)"));
  if (path.isEmpty())
    return;
  auto i = static_cast<std::size_t>(rows.front().row());
  if (QString err = export_plan_to(path, i); !err.isEmpty())
    QMessageBox::warning(this, tr("Export plan"), err);
}

QString MainWindow::export_plan_to(const QString& path, std::size_t row) const {
  const ScenarioResult& r = model_->result();
  if (row >= (r.train.empty() ? r.infer.size() : r.train.size()))
    return tr("no plan %1 to export").arg(row + 1);
  // The CLI's --json and --yaml document for that one plan.
  nlohmann::ordered_json j = {{"cluster", r.cluster.name}, {"task", r.task.name}};
  j["plans"] = nlohmann::ordered_json::array(
      {r.train.empty() ? report::infer_json(r.infer[row]) : report::plan_json(r.train[row])});
  std::ostringstream text;
  bool yaml =
      path.endsWith(".yaml", Qt::CaseInsensitive) || path.endsWith(".yml", Qt::CaseInsensitive);
  report::write_structured(text, yaml, r.train.empty() ? "inference" : "training", j);
  return QString::fromStdString(report::atomic_write(path.toStdString(), text.str()));
}

}  // namespace yirage::gui
