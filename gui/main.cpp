// yirage-gui: interactive what-if analysis.
//   yirage-gui [CLUSTER [TASK]]                      opens the files
//   yirage-gui --screenshot FILE [--tab T] [--layout L] [CLUSTER TASK]
//                                                    renders the window with the best plan
//                                                    (or layout L) selected and tab T in
//                                                    front (step, report, timeline, pareto,
//                                                    cluster, files) to a PNG
//   yirage-gui --bench [CLUSTER TASK]                times what-if changes (gui/bench_whatif.h)
#include "devices/registry.h"
#include "devices/support/diagnostics.h"
#include "gui/bench_whatif.h"
#include "gui/main_window.h"

#include <QApplication>
#include <QMessageBox>

#include <cstdio>
#include <iostream>

namespace {

constexpr const char* kUsage =
    "usage: yirage-gui [CLUSTER [TASK]]\n"
    "       yirage-gui --screenshot FILE [--tab T] [--layout L] [CLUSTER TASK]\n"
    "       yirage-gui --bench [CLUSTER TASK]\n"
    "Interactive what-if analysis of cluster and task files (yirage-plan's libraries).\n"
    "  --screenshot FILE  render the window with the best plan (or --layout L) selected and\n"
    "                     tab T in front (step, report, timeline, pareto, cluster,\n"
    "                     files) to a PNG\n"
    "  --bench            time what-if changes\n"
    "  --help, --version  print this or the version, and open no window\n";

}  // namespace

int main(int argc, char** argv) {
  // Answered before Qt starts: no window opens for --help, --version or a wrong option.
  bool screenshot = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--version") {
      std::printf("yirage-gui %s\n", YIRAGE_VERSION);
      return 0;
    }
    bool takes_value = a == "--screenshot" || a == "--tab" || a == "--layout";
    if (!a.empty() && a.front() == '-' && !takes_value && a != "--bench") {
      std::fprintf(stderr, "error: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
    if (takes_value)
      ++i;  // its value may start with '-'
    screenshot = screenshot || a == "--screenshot" || a == "--bench";
  }
  if (screenshot && qEnvironmentVariableIsEmpty("DISPLAY") &&
      qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");  // no display needed to render a PNG
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName("yirage-gui");
  QApplication::setOrganizationName("yirage");
  QStringList args = QApplication::arguments();
  args.removeFirst();
  QString data = QString::fromStdString(yirage::devices::data_dir().string());
  if (int at = static_cast<int>(args.indexOf("--bench")); at >= 0) {
    args.remove(at);
    if (args.isEmpty())
      args = {data + "/clusters/h100-128x8.yaml", data + "/tasks/llama3-70b-train.yaml"};
    if (args.size() != 2) {
      std::fprintf(stderr, "error: --bench takes a cluster and a task file, or none\n");
      return 2;
    }
    return yirage::gui::bench_whatif(args[0], args[1], std::cout);
  }
  QString shot;
  QString tab;
  QString layout;
  if (int at = static_cast<int>(args.indexOf("--screenshot")); at >= 0) {
    if (at + 1 >= args.size()) {
      std::fprintf(stderr, "error: --screenshot needs a FILE\n");
      return 2;
    }
    shot = args[at + 1];
    args.remove(at, 2);
    for (auto [option, value] : {std::pair{"--tab", &tab}, std::pair{"--layout", &layout}}) {
      if (int t = static_cast<int>(args.indexOf(option)); t >= 0) {
        if (t + 1 >= args.size()) {
          std::fprintf(stderr, "error: %s needs a value\n", option);
          return 2;
        }
        *value = args[t + 1];
        args.remove(t, 2);
      }
    }
    if (args.isEmpty()) {
      args = {data + "/clusters/h100-4x8-rail.yaml", data + "/tasks/llama3-70b-train.yaml"};
    }
  }
  try {
    yirage::gui::MainWindow window;
    window.set_auto_recompute(shot.isEmpty());
    bool ok = true;
    if (!args.isEmpty())
      ok = window.open_cluster(args[0]) && ok;
    if (args.size() > 1)
      ok = window.open_task(args[1]) && ok;
    if (shot.isEmpty()) {
      window.show();
      return QApplication::exec();
    }
    if (!ok) {
      std::fprintf(stderr, "%s\n", window.message().toStdString().c_str());
      return 2;
    }
    window.recompute_now();
    if (!layout.isEmpty() && !window.select_layout(layout)) {
      std::fprintf(stderr, "error: --layout: no plan '%s'\n", layout.toStdString().c_str());
      return 2;
    }
    window.replay_selected_now();  // the timeline tab shows the best plan's step
    window.sweep_now();            // and the Pareto tab the node counts' plans
    if (!tab.isEmpty() && !window.show_tab(tab)) {
      std::fprintf(stderr, "error: --tab: no tab '%s'\n", tab.toStdString().c_str());
      return 2;
    }
    window.show();
    QApplication::processEvents();
    if (!window.grab().save(shot, "PNG")) {
      std::fprintf(stderr, "error: --screenshot: cannot write %s\n", shot.toStdString().c_str());
      return 2;
    }
    std::printf("%s\n", window.message().toStdString().c_str());
    return 0;
  } catch (const yirage::devices::InputError& e) {
    // The bundled device registry itself is broken: nothing can be shown.
    std::fprintf(stderr, "%s\n", e.what());
    if (shot.isEmpty())
      QMessageBox::critical(nullptr, "yirage-gui", QString::fromStdString(e.what()));
    return 2;
  }
}
