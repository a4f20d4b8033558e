#include "gui/bench_whatif.h"

#include "devices/support/units.h"
#include "gui/main_window.h"

#include <QEventLoop>
#include <QTimer>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace yirage::gui {
namespace {

constexpr double kTargetSeconds = 1;

// Seconds from `change` until the window shows the new plans (or 60 s).
double timed(MainWindow& w, const std::function<void()>& change) {
  QEventLoop loop;
  QObject::connect(&w, &MainWindow::plans_updated, &loop, &QEventLoop::quit);
  QTimer::singleShot(60000, &loop, &QEventLoop::quit);
  auto start = std::chrono::steady_clock::now();
  change();
  loop.exec();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int bench_whatif(const QString& cluster, const QString& task, std::ostream& out) {
  MainWindow w;
  double first = timed(w, [&] {
    if (w.open_cluster(cluster))
      w.open_task(task);
  });
  if (w.plans()->rowCount() == 0) {
    out << w.message().toStdString() << "\n";
    return 2;
  }
  WhatIfPanel* c = w.what_if();
  int nodes = c->nodes()->value();
  int batch = c->global_batch()->value();

  struct Change {
    std::string what;
    std::function<void()> apply;
  };

  std::vector<Change> changes = {
      {"half the nodes",
       [&] {
         c->nodes()->setValue(std::max(1, nodes / 2));
       }},
      {"back to all nodes",
       [&] {
         c->nodes()->setValue(nodes);
       }},
      {"twice the global batch",
       [&] {
         c->global_batch()->setValue(2 * batch);
       }},
      {"the file's batch",
       [&] {
         c->global_batch()->setValue(batch);
       }},
      {"another device type",
       [&] {
         c->device()->setCurrentText("H200");
       }},
      {"twice the network bandwidth",
       [&] {
         c->network()->setValue(2);
       }},
      {"half the fabric bandwidth",
       [&] {
         c->fabric()->setValue(0.5);
       }},
  };
  out << "what-if changes on " << cluster.toStdString() << " with " << task.toStdString()
      << ": from the change to the updated plans table, one run each\n";
  out << "  opening the files: " << devices::format(devices::Seconds{first}) << "\n";
  std::vector<double> times;
  for (const Change& ch : changes) {
    double s = timed(w, ch.apply);
    times.push_back(s);
    out << "  " << ch.what << ": " << devices::format(devices::Seconds{s}) << ", "
        << w.plans()->rowCount() << " plans (" << w.message().toStdString() << ")\n";
  }
  std::sort(times.begin(), times.end());
  double median = times[times.size() / 2];
  out << "median " << devices::format(devices::Seconds{median}) << ", slowest "
      << devices::format(devices::Seconds{times.back()}) << "; target "
      << devices::format(devices::Seconds{kTargetSeconds}) << " (ratio "
      << devices::format_number(times.back() / kTargetSeconds, 3) << " for the slowest)\n";
  return 0;
}

}  // namespace yirage::gui
