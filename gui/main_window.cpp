#include "gui/main_window.h"

#include "devices/cluster_loader.h"

#include <QFileDialog>
#include <QFontDatabase>
#include <QMenuBar>
#include <QVBoxLayout>

namespace yirage::gui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      registry_(devices::DeviceRegistry::load_bundled()),
      view_(new ClusterView(this)),
      status_(new QLabel(this)) {
  setWindowTitle(tr("yirage"));
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->addWidget(view_);
  status_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setText(tr("Open a cluster file (File > Open cluster...)"));
  layout->addWidget(status_);
  setCentralWidget(central);
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open cluster..."), QKeySequence::Open, this, &MainWindow::choose_cluster);
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  resize(1000, 420);
}

bool MainWindow::open_cluster(const QString& path) {
  try {
    devices::ClusterSpec c = devices::load_cluster(path.toStdString(), registry_);
    view_->show_cluster(c);
    status_->setText(tr("%1: %2 devices in %3 nodes")
                         .arg(QString::fromStdString(c.name))
                         .arg(c.total_devices())
                         .arg(c.total_nodes()));
    setWindowTitle(tr("yirage - %1").arg(path));
    return true;
  } catch (const devices::InputError& e) {
    view_->setRowCount(0);
    status_->setText(QString::fromStdString(e.what()));
    return false;
  }
}

void MainWindow::choose_cluster() {
  QString path = QFileDialog::getOpenFileName(this, tr("Open cluster"), QString(),
                                              tr("Cluster files (*.yaml *.yml)"));
  if (!path.isEmpty())
    open_cluster(path);
}

}  // namespace yirage::gui
