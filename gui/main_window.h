// The main window of yirage-gui: opens a cluster file and shows its devices.
#pragma once

#include "devices/registry.h"
#include "gui/cluster_view.h"

#include <QLabel>
#include <QMainWindow>

namespace yirage::gui {

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  /// Loads a cluster file; problems are shown in the window as `file:line:col` messages.
  /// Returns whether it loaded.
  bool open_cluster(const QString& path);

  const ClusterView* cluster_view() const { return view_; }

  QString message() const { return status_->text(); }

 private:
  void choose_cluster();

  devices::DeviceRegistry registry_;
  ClusterView* view_;
  QLabel* status_;
};

}  // namespace yirage::gui
