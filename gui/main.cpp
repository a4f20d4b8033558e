// yirage-gui: interactive what-if analysis. `yirage-gui [CLUSTER]` opens a cluster file.
#include "devices/support/diagnostics.h"
#include "gui/main_window.h"

#include <QApplication>
#include <QMessageBox>

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("yirage-gui");
  try {
    yirage::gui::MainWindow window;
    QStringList args = QApplication::arguments();
    if (args.size() > 1)
      window.open_cluster(args[1]);
    window.show();
    return QApplication::exec();
  } catch (const yirage::devices::InputError& e) {
    // The bundled device registry itself is broken: nothing can be shown.
    QMessageBox::critical(nullptr, "yirage-gui", QString::fromStdString(e.what()));
    return 2;
  }
}
