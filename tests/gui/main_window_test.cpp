// The first view of yirage-gui: opening a cluster file shows its node groups; a broken file
// shows the same `file:line:col` message as the CLI.
#include "gui/main_window.h"

#include <QTest>

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:

  void opens_a_cluster_and_lists_its_devices() {
    yirage::gui::MainWindow w;
    QVERIFY(w.open_cluster(YIRAGE_SOURCE_DATA_DIR "/clusters/mixed-h100-mi300x-910b.yaml"));
    const QTableWidget* t = w.cluster_view();
    QCOMPARE(t->rowCount(), 3);
    QStringList devices;
    for (int r = 0; r < t->rowCount(); ++r)
      devices << t->item(r, 1)->text();
    QVERIFY(devices.contains("H100-SXM"));
    QVERIFY(devices.contains("MI300X"));
    QVERIFY(devices.contains("Ascend-910B"));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QImage shot = w.grab().toImage();
    QVERIFY(!shot.isNull());
  }

  void a_broken_file_shows_the_cli_message() {
    yirage::gui::MainWindow w;
    QString path = YIRAGE_TEST_DATA_DIR "/bad_unit_cluster.yaml";
    QVERIFY(!w.open_cluster(path));
    QCOMPARE(w.cluster_view()->rowCount(), 0);
    QVERIFY(w.message().contains("bad_unit_cluster.yaml:8:18: error: bad 'bandwidth'"));
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
