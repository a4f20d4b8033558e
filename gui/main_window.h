// The main window of yirage-gui: a cluster and a task file, the what-if controls, the
// ranked plans of the scenario, and for the selected plan its step breakdown, its memory
// against capacity, its layer's operations on the roofline and the CLI's report. Plans are
// recomputed on a worker thread after every change; a newer change or Cancel discards the result in
// flight.
#pragma once

#include "costmodel/calibration.h"
#include "devices/registry.h"
#include "gui/cluster_view.h"
#include "gui/compare_view.h"
#include "gui/file_editor.h"
#include "gui/file_form.h"
#include "gui/mixed_view.h"
#include "gui/ops_view.h"
#include "gui/pareto_view.h"
#include "gui/plan_charts.h"
#include "gui/plans_model.h"
#include "gui/timeline_tab.h"
#include "gui/whatif_panel.h"

#include <QLabel>
#include <QMainWindow>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>

#include <cstdint>
#include <functional>
#include <optional>

namespace yirage::gui {

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Loads a cluster file into its editor (Files tab); problems are shown in the window as
  /// `file:line:col` messages. Returns whether it loaded.
  bool open_cluster(const QString& path);
  /// Loads a task file, likewise.
  bool open_task(const QString& path);

  FileEditor* cluster_editor() const { return cluster_editor_; }

  FileEditor* task_editor() const { return task_editor_; }

  /// The forms over the two files (Files tab, above their text).
  FileForm* cluster_form() const { return cluster_form_; }

  FileForm* task_form() const { return task_form_; }

  /// What closing with unsaved edits asks (a dialog by default; tests replace it).
  void set_unsaved_prompt(std::function<QMessageBox::StandardButton()> ask) {
    ask_ = std::move(ask);
  }

  /// The recently opened files, newest first.
  QStringList recent_files() const;

  /// Whether opening a file or changing a control recomputes (default: yes).
  void set_auto_recompute(bool on) { auto_ = on; }

  /// Plans the current scenario on a worker thread (plans_updated() when done).
  void recompute();
  /// Plans the current scenario on this thread (for --screenshot).
  void recompute_now();
  /// Selects a row of the plans table (its charts and report follow).
  void select_plan(int row);
  /// Selects the plan with this layout (as the table shows it); false if none.
  bool select_layout(const QString& layout);
  /// Replays the selected plan's step in SimGrid on a worker thread (replayed() when done),
  /// or on this thread.
  void replay_selected();
  void replay_selected_now();

  const TimelineView* timeline() const { return timeline_tab_->timeline(); }

  TimelineTab* timeline_tab() const { return timeline_tab_; }

  /// The Pareto tab; its sweep runs on a worker thread (swept() when done) while the tab is
  /// in front, after every replan, or on this thread.
  ParetoView* pareto() const { return pareto_; }

  void sweep();
  void sweep_now();

  /// Keeps the current scenario as A on the Compare tab.
  void keep_scenario();

  const CompareView* compare() const { return compare_; }

  /// A line naming the scenario: the files and what the controls changed.
  QString scenario_label() const;

  /// Brings the tab whose title starts with `title` (any case) to the front; false if none.
  bool show_tab(const QString& title);

  /// Writes the replayed step as Chrome trace JSON; returns the error, or empty.
  QString export_trace(const QString& path) const;
  /// Writes plan `row` of the table to `path`: YAML when it ends in .yaml or .yml, else JSON
  /// (the CLI's --yaml and --json forms). Returns an error message or empty.
  QString export_plan_to(const QString& path, std::size_t row) const;

  const ClusterView* cluster_view() const { return view_; }

  const PlansModel* plans() const { return model_; }

  QTableView* table() const { return table_; }

  WhatIfPanel* what_if() const { return what_if_; }

  const PlanCharts* charts() const { return charts_; }

  OpsView* ops() const { return ops_; }

  /// The plans of a cluster with several device types (shown instead of the plans table).
  const MixedView* mixed() const { return mixed_; }

  QString message() const { return status_->text(); }

  const QLabel* status_label() const { return status_; }

  bool busy() const { return !progress_->isHidden(); }

 signals:
  void plans_updated();
  void replayed();
  void swept();

 protected:
  void closeEvent(QCloseEvent* e) override;

 private:
  void apply_cluster(const std::string& path, const std::string& text);
  void apply_task(const std::string& path, const std::string& text);
  void drop_in_flight();
  void show_files_status();
  void remember(const QString& path);
  void update_recent_menu();
  void choose_cluster();
  void choose_task();
  void export_plan();
  void show_result(const ScenarioResult& r);
  void show_selected();
  void show_mixed_selected();
  QWidget* files_tab();
  void show_mixed_groups(const ScenarioResult& r);
  std::optional<ReplayJob> replay_job() const;
  QString sweep_title() const;

  devices::DeviceRegistry registry_;
  costmodel::CalibrationSet calibrations_;
  std::optional<devices::ClusterSpec> cluster_;
  std::optional<devices::TaskSpec> task_;
  std::uint64_t generation_ = 0;  // of the latest request; older results are dropped
  bool auto_ = true;

  ClusterView* view_;
  WhatIfPanel* what_if_;
  PlansModel* model_;
  QTableView* table_;
  MixedView* mixed_;
  PlanCharts* charts_;
  OpsView* ops_;
  QPlainTextEdit* report_;
  FileEditor* cluster_editor_;
  FileEditor* task_editor_;
  FileForm* cluster_form_ = nullptr;
  FileForm* task_form_ = nullptr;
  CompareView* compare_;
  QMenu* recent_menu_ = nullptr;
  std::function<QMessageBox::StandardButton()> ask_;
  TimelineTab* timeline_tab_;
  ParetoView* pareto_;
  std::uint64_t sweep_generation_ = 0;  // of the latest sweep; older results are dropped
  bool sweep_stale_ = true;             // the plans changed since the last sweep
  QTabWidget* tabs_;
  QLabel* status_;
  QProgressBar* progress_;
  QPushButton* cancel_;
};

}  // namespace yirage::gui
