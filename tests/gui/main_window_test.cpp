// yirage-gui, offscreen: opening files shows the cluster and the ranked plans; a what-if
// change replans on the worker thread and updates the table; Cancel drops the result in
// flight; a broken file shows the CLI's `file:line:col` message; the window with a plan
// selected renders a screenshot that is not blank and shows the table and the charts.
#include "gui/main_window.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>
#include <QWheelEvent>
#include <QtCharts/QAbstractBarSeries>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QScatterSeries>

#include <memory>
#include <set>

namespace {

const QString kData = YIRAGE_SOURCE_DATA_DIR;

// Opens an example and waits for its plans.
bool open_example(yirage::gui::MainWindow& w, const QString& cluster, const QString& task) {
  QSignalSpy updated(&w, &yirage::gui::MainWindow::plans_updated);
  if (!w.open_cluster(kData + "/clusters/" + cluster + ".yaml") ||
      !w.open_task(kData + "/tasks/" + task + ".yaml")) {
    return false;
  }
  return updated.wait(20000);
}

QString cell(const yirage::gui::MainWindow& w, int row, int col) {
  return w.plans()->data(w.plans()->index(row, col), Qt::DisplayRole).toString();
}

int bar_sets(const QChartView* v) {
  int n = 0;
  for (QAbstractSeries* s : v->chart()->series()) {
    if (auto* bars = qobject_cast<QAbstractBarSeries*>(s))
      n += bars->count();
  }
  return n;
}

// Every text `v` draws, as drawn (a cut label reads "comp...").
QStringList shown_texts(const QChartView* v) {
  QStringList shown;
  for (QGraphicsItem* item : v->scene()->items()) {
    if (auto* text = qgraphicsitem_cast<QGraphicsTextItem*>(item); text && text->isVisible())
      shown << text->toPlainText();
  }
  return shown;
}

// The legend labels of `v` that the chart does not show whole (cut to "comp..." or missing).
QStringList cut_legend_labels(const QChartView* v) {
  QStringList shown = shown_texts(v);
  QStringList cut;
  for (QLegendMarker* m : v->chart()->legend()->markers()) {
    if (m->isVisible() && !shown.contains(m->label()))
      cut << m->label();
  }
  return cut;
}

// The category labels of `v`'s bar axes, and the titles of its axes, that the chart does not
// show whole.
QStringList cut_category_labels(const QChartView* v) {
  QStringList shown = shown_texts(v);
  QStringList cut;
  for (QAbstractAxis* a : v->chart()->axes()) {
    if (auto* c = qobject_cast<QBarCategoryAxis*>(a)) {
      for (const QString& label : c->categories()) {
        if (!shown.contains(label))
          cut << label;
      }
    }
    if (!a->titleText().isEmpty() && !shown.contains(a->titleText()))
      cut << a->titleText();
  }
  return cut;
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:

  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // autosaves and settings under ~/.qttest
    QCoreApplication::setOrganizationName("yirage-tests");
  }

  void edits_are_checked_applied_autosaved_and_asked_about_on_close() {
    QTemporaryDir dir;
    QString task = dir.filePath("task.yaml");
    QVERIFY(QFile::copy(kData + "/tasks/llama3-8b-train.yaml", task));
    QFile::setPermissions(task, QFile::ReadOwner | QFile::WriteOwner);
    QString original;
    {
      auto w = std::make_unique<yirage::gui::MainWindow>();
      QSignalSpy updated(w.get(), &yirage::gui::MainWindow::plans_updated);
      QVERIFY(w->open_cluster(kData + "/clusters/dgx-h100.yaml"));
      QVERIFY(w->open_task(task));
      QVERIFY(updated.wait(20000));
      original = w->task_editor()->text()->toPlainText();
      // A bad value: the CLI's message, naming the line, and no new plans.
      QString bad = original;
      bad.replace(QRegularExpression("global_batch: \\d+"), "global_batch: -4");
      w->task_editor()->set_text(bad);
      QVERIFY2(w->task_editor()->problems().contains("task.yaml:"),
               qPrintable(w->task_editor()->problems()));
      QVERIFY(w->task_editor()->modified());
      // A good edit replans.
      QString good = original;
      good.replace(QRegularExpression("global_batch: \\d+"), "global_batch: 64");
      w->task_editor()->set_text(good);
      QVERIFY(w->task_editor()->problems().isEmpty());
      QVERIFY(updated.wait(20000));
      QCOMPARE(w->plans()->result().task.global_batch, std::int64_t{64});
      QVERIFY(QFile::exists(yirage::gui::FileEditor::autosave_path(task)));
      // Closing asks; Cancel keeps the window, Discard closes and keeps the autosave.
      int asked = 0;
      QMessageBox::StandardButton answer = QMessageBox::Cancel;
      w->set_unsaved_prompt([&] {
        ++asked;
        return answer;
      });
      QVERIFY(!w->close());
      QCOMPARE(asked, 1);
      answer = QMessageBox::Discard;
      QVERIFY(w->close());
      QCOMPARE(asked, 2);
    }
    // Reopened, the file is unchanged and the autosaved edit is offered back.
    yirage::gui::MainWindow w;
    QVERIFY(w.open_task(task));
    QCOMPARE(w.task_editor()->text()->toPlainText(), original);
    QVERIFY(w.task_editor()->has_autosave());
    w.task_editor()->restore_autosave();
    QVERIFY(w.task_editor()->text()->toPlainText().contains("global_batch: 64"));
    // Saved, the file holds the edit and the autosave is gone.
    QVERIFY(w.task_editor()->save());
    QFile f(task);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(QString::fromUtf8(f.readAll()).contains("global_batch: 64"));
    QVERIFY(!QFile::exists(yirage::gui::FileEditor::autosave_path(task)));
    QVERIFY(!w.task_editor()->modified());
    QVERIFY(w.recent_files().contains(QFileInfo(task).absoluteFilePath()));
  }

  void opens_a_cluster_and_lists_its_devices() {
    yirage::gui::MainWindow w;
    QVERIFY(w.open_cluster(kData + "/clusters/mixed-h100-mi300x-910b.yaml"));
    const QTableWidget* t = w.cluster_view();
    QCOMPARE(t->rowCount(), 3);
    QStringList devices;
    for (int r = 0; r < t->rowCount(); ++r)
      devices << t->item(r, 1)->text();
    QVERIFY(devices.contains("H100-SXM"));
    QVERIFY(devices.contains("MI300X"));
    QVERIFY(devices.contains("Ascend-910B"));
  }

  void a_broken_file_shows_the_cli_message() {
    yirage::gui::MainWindow w;
    QString path = YIRAGE_TEST_DATA_DIR "/bad_unit_cluster.yaml";
    QVERIFY(!w.open_cluster(path));
    QCOMPARE(w.cluster_view()->rowCount(), 0);
    QVERIFY(w.message().contains("bad_unit_cluster.yaml:8:18: error: bad 'bandwidth'"));
    // The whole message is laid out (the path, the source line, the caret), wrapped to the
    // bar's width, not cut after its first characters.
    const QLabel* status = w.status_label();
    QCOMPARE(status->textFormat(), Qt::PlainText);
    QVERIFY(status->heightForWidth(400) >= 3 * status->fontMetrics().lineSpacing());
  }

  void opening_an_example_lists_its_plans_best_first() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "h100-4x8-rail", "llama3-70b-train"));
    QVERIFY(w.plans()->rowCount() > 10);
    QCOMPARE(w.plans()->result().train.front().layout.str(),
             std::string("tp=4,pp=1,dp=8,mb=1,recompute=none,zero=3,offload=on"));
    QCOMPARE(cell(w, 0, 1), QString("107.5 s"));  // as the CLI prints it
    QVERIFY(bar_sets(w.charts()->breakdown()) >= 6);
    QVERIFY(bar_sets(w.charts()->memory()) >= 5);
  }

  // A device defined inline in the cluster file is the one planned on (the what-if box used to
  // fall back to the first device of its list, A100-40GB).
  void a_cluster_with_an_inline_device_plans_on_that_device() {
    yirage::gui::MainWindow w;
    QSignalSpy updated(&w, &yirage::gui::MainWindow::plans_updated);
    QVERIFY(w.open_cluster(YIRAGE_TEST_DATA_DIR "/inline_device_cluster.yaml"));
    QVERIFY(w.open_task(kData + "/tasks/llama3-8b-train.yaml"));
    QVERIFY(updated.wait(20000));
    QVERIFY(w.plans()->rowCount() > 0);
    QCOMPARE(w.plans()->result().cluster.groups.front().device, std::string("H100-Inline"));
    QVERIFY(!w.what_if()->what_if().device.has_value());
  }

  void a_what_if_change_replans_and_updates_the_table() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "h100-4x8-rail", "llama3-70b-train"));
    QString before = cell(w, 0, 1);
    QSignalSpy updated(&w, &yirage::gui::MainWindow::plans_updated);
    w.what_if()->global_batch()->setValue(256);  // half the batch: about half the step
    QVERIFY(w.busy());
    QVERIFY(updated.wait(20000));
    QCOMPARE(w.plans()->result().task.global_batch, std::int64_t{256});
    QVERIFY(cell(w, 0, 1) != before);
    double half = w.plans()->result().train.front().step.total;
    QVERIFY(half > 40 && half < 70);
    // More nodes: the same plans on a larger cluster.
    w.what_if()->nodes()->setValue(8);
    QVERIFY(updated.wait(20000));
    QCOMPARE(w.plans()->result().cluster.total_devices(), std::int64_t{64});
  }

  void cancel_drops_the_result_in_flight() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "h100-4x8-rail", "llama3-70b-train"));
    QString before = cell(w, 0, 1);
    w.what_if()->global_batch()->setValue(128);
    QVERIFY(w.busy());
    QTest::mouseClick(w.findChild<QPushButton*>("cancel"), Qt::LeftButton);
    QVERIFY(!w.busy());
    QSignalSpy updated(&w, &yirage::gui::MainWindow::plans_updated);
    QVERIFY(!updated.wait(1500));  // the worker finished, its result was dropped
    QCOMPARE(cell(w, 0, 1), before);
    QVERIFY(w.message().contains("cancelled"));
  }

  void the_timeline_replays_the_selected_plan_device_by_device() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "dgx-h100", "llama3-8b-train"));
    // A pipelined plan: pick the first with pp = 2.
    int row = -1;
    for (int r = 0; r < w.plans()->rowCount() && row < 0; ++r) {
      if (w.plans()->result().train[static_cast<std::size_t>(r)].layout.pp == 2)
        row = r;
    }
    QVERIFY(row >= 0);
    w.select_plan(row);
    w.replay_selected_now();
    // A lane per GPU of the DGX, named by its host, with its rank and stage.
    QCOMPARE(w.timeline()->rows(), std::size_t{8});
    QVERIFY2(w.timeline()->row_label(0).contains("rank 0, stage 0"),
             qPrintable(w.timeline()->row_label(0)));
    QVERIFY(w.timeline()->row_label(7).contains("rank 7, stage 1"));
    QVERIFY(w.timeline()->bars() > 10);
    QString path = QDir::temp().filePath("yirage_gui_trace.json");
    QFile::remove(path);
    QCOMPARE(w.export_trace(path), QString());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonParseError err;
    QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &err);
    QCOMPARE(err.error, QJsonParseError::NoError);
    QVERIFY(doc.object().value("traceEvents").toArray().size() > 10);
    QFile::remove(path);
  }

  void the_selected_plan_exports_as_json_and_yaml() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "h100-4x8-rail", "llama3-70b-train"));
    QString json = QDir::temp().filePath("yirage_gui_plan.json");
    QString yaml = QDir::temp().filePath("yirage_gui_plan.yaml");
    QCOMPARE(w.export_plan_to(json, 0), QString());
    QCOMPARE(w.export_plan_to(yaml, 0), QString());
    QFile jf(json), yf(yaml);
    QVERIFY(jf.open(QIODevice::ReadOnly) && yf.open(QIODevice::ReadOnly));
    QJsonParseError err;
    QJsonObject doc = QJsonDocument::fromJson(jf.readAll(), &err).object();
    QCOMPARE(err.error, QJsonParseError::NoError);
    QCOMPARE(doc.value("kind").toString(), QString("training"));  // the CLI's document
    QCOMPARE(doc.value("cluster").toString(), QString("h100-4x8-rail"));
    QJsonObject plan = doc.value("plans").toArray().at(0).toObject();
    QString layout = plan.value("layout").toObject().value("text").toString();
    QVERIFY(layout.startsWith("tp="));
    QString text = QString::fromUtf8(yf.readAll());
    QVERIFY2(text.contains("text: " + layout), qPrintable(text.left(400)));
    QVERIFY(!text.trimmed().startsWith("{"));
    QVERIFY(!w.export_plan_to(json, 100000).isEmpty());  // no such plan: said, nothing written
    QFile::remove(json);
    QFile::remove(yaml);
  }

  void two_scenarios_side_by_side_with_their_difference() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "h100-4x8-rail", "llama3-70b-train"));
    w.keep_scenario();
    QSignalSpy updated(&w, &yirage::gui::MainWindow::plans_updated);
    w.what_if()->nodes()->setValue(8);  // twice the devices
    QVERIFY(updated.wait(20000));
    const QTableWidget* t = w.compare();
    auto row_of = [&](const QString& name) {
      for (int r = 0; r < t->rowCount(); ++r) {
        if (t->item(r, 0)->text() == name)
          return r;
      }
      return -1;
    };
    QVERIFY(t->item(0, 2)->text().contains("8 nodes"));
    int devices = row_of("devices");
    QVERIFY(devices >= 0);
    QCOMPARE(t->item(devices, 1)->text(), QString("32"));
    QCOMPARE(t->item(devices, 2)->text(), QString("64"));
    QCOMPARE(t->item(devices, 3)->text(), QString("100%"));
    int step = row_of("step");
    QVERIFY(t->item(step, 3)->text().startsWith("-"));  // faster on twice the devices
  }

  void the_operations_tab_places_the_plans_layer_on_the_roofline() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "dgx-h100", "llama3-8b-train"));
    yirage::gui::OpsView* ops = w.ops();
    QCOMPARE(ops->device()->currentText(), QString("H100-SXM"));
    std::vector<QPointF> first = ops->points();
    QVERIFY2(first.size() >= 5, qPrintable(QString::number(first.size())));
    QVERIFY(ops->operations()->rowCount() >= static_cast<int>(first.size()));
    // Llama's two compound operations, with the plan's decisions.
    const yirage::planner::PlanEstimate& best = w.plans()->result().train.front();
    QCOMPARE(ops->compounds()->rowCount(), static_cast<int>(best.fusions.size()));
    for (int r = 0; r < ops->compounds()->rowCount(); ++r) {
      bool fused = best.fusions[static_cast<std::size_t>(r)].find(": fused") != std::string::npos;
      QCOMPARE(ops->compounds()->item(r, 2)->text().startsWith("fused"), fused);
    }
    // Another plan with another tensor parallelism or micro-batch: the points move.
    int other = -1;
    for (int r = 1; r < w.plans()->rowCount() && other < 0; ++r) {
      const yirage::planner::Layout& l =
          w.plans()->result().train[static_cast<std::size_t>(r)].layout;
      if (l.tp != best.layout.tp || l.micro_batch != best.layout.micro_batch)
        other = r;
    }
    QVERIFY(other > 0);
    w.select_plan(other);
    QVERIFY(ops->points() != first);
    // Another device: its roofline, and the compounds on both device types.
    std::vector<QPointF> h100 = ops->points();
    ops->device()->setCurrentText("MI300X");
    QVERIFY(ops->points() != h100);
    QCOMPARE(ops->compounds()->rowCount(), 2 * static_cast<int>(best.fusions.size()));
    QVERIFY(w.show_tab("operations"));
  }

  void an_inference_plans_operations_name_themselves_on_hover() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "dgx-h100", "llama3-70b-decode"));
    yirage::gui::OpsView* ops = w.ops();
    QVERIFY(ops->points().size() >= 4);
    QVERIFY(ops->operations()->rowCount() >= 8);
    QScatterSeries* gemms = nullptr;
    for (QAbstractSeries* s : ops->roofline()->chart()->series()) {
      if (s->name() == "GEMM")
        gemms = qobject_cast<QScatterSeries*>(s);
    }
    QVERIFY(gemms != nullptr && gemms->count() > 0);
    for (const QPointF& p : ops->points())
      QVERIFY(p.y() <= 989.5);  // below H100's bf16 peak, in TFLOP/s
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    emit gemms->hovered(gemms->points().front(), true);
    QVERIFY2(QToolTip::text().contains("gemm"), qPrintable(QToolTip::text()));
  }

  void a_mixed_cluster_lists_its_plans_with_each_groups_memory() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "mixed-h100-mi300x-910b", "llama3-8b-train"));
    const yirage::gui::MixedView* t = w.mixed();
    QVERIFY(!t->isHidden());
    QVERIFY(w.table()->isHidden());
    QVERIFY(w.plans()->result().mixed_train.has_value());
    // A row per plan and one per node group, each group with its memory against capacity.
    QStringList devices;
    int memory_rows = 0;
    for (int r = 0; r < t->rowCount(); ++r) {
      devices << t->item(r, 2)->text();
      if (t->item(r, 8)->text().contains(" / "))
        ++memory_rows;
    }
    QVERIFY2(memory_rows >= 3, qPrintable(QString::number(memory_rows)));
    QVERIFY(devices.contains("H100-SXM") && devices.contains("MI300X") &&
            devices.contains("Ascend-910B"));
    QVERIFY(t->item(0, 0)->text().contains("(best)"));
    QVERIFY(bar_sets(w.charts()->memory()) >= 5);
    // The best plan's step before any row is chosen (a bar per group where each runs its own),
    // and every chart label whole.
    QVERIFY(bar_sets(w.charts()->breakdown()) >= 3);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QApplication::processEvents();
    for (const QChartView* v : {w.charts()->breakdown(), w.charts()->memory()}) {
      QCOMPARE(cut_category_labels(v), QStringList());
      QCOMPARE(cut_legend_labels(v), QStringList());
    }
    // A node group's own plan: its operations on its device's roofline.
    auto* view = w.findChild<yirage::gui::MixedView*>();
    int row = -1;
    for (int r = 0; r < view->rowCount() && row < 0; ++r) {
      if (view->group_plan(r) != nullptr)
        row = r;
    }
    QVERIFY(row > 0);
    view->selectRow(row);
    QCOMPARE(w.ops()->device()->currentText(), t->item(row, 2)->text());
    QVERIFY(w.ops()->points().size() >= 5);
    // A part of the pipeline across the groups: its stages' layer.
    int part = -1;
    for (int r = 0; r < view->rowCount() && part < 0; ++r) {
      if (view->group_plan(r) != nullptr && view->group_plan(r)->stage)
        part = r;
    }
    QVERIFY(part > 0);
    view->selectRow(part);
    QCOMPARE(w.ops()->device()->currentText(), t->item(part, 2)->text());
    QVERIFY(w.ops()->points().size() >= 5);
    // The inference plan of the same cluster: a row per group.
    QSignalSpy updated(&w, &yirage::gui::MainWindow::plans_updated);
    QVERIFY(w.open_task(kData + "/tasks/llama3-70b-decode.yaml"));
    QVERIFY(updated.wait(20000));
    QVERIFY(w.plans()->result().mixed_infer.has_value());
    QCOMPARE(t->rowCount(), 1 + static_cast<int>(w.plans()->result().mixed_infer->groups.size()));
    QVERIFY(t->item(1, 8)->text().contains(" / "));
  }

  void a_form_field_with_a_bad_unit_shows_the_loader_message_and_writes_nothing() {
    QTemporaryDir dir;
    QString cluster = dir.filePath("cluster.yaml");
    QVERIFY(QFile::copy(kData + "/clusters/h100-4x8-rail.yaml", cluster));
    QFile::setPermissions(cluster, QFile::ReadOwner | QFile::WriteOwner);
    yirage::gui::MainWindow w;
    w.set_auto_recompute(false);
    QVERIFY(w.open_cluster(cluster));
    yirage::gui::FileForm* form = w.cluster_form();
    QLineEdit* nic = form->field("network.nic_bandwidth");
    QVERIFY(nic != nullptr);
    QString text = w.cluster_editor()->text()->toPlainText();
    // A bad unit: the loader's file:line:col message beside the field; text and file unchanged.
    nic->setText("400 Gbx");
    emit nic->editingFinished();
    QVERIFY2(form->problem("network.nic_bandwidth").contains("cluster.yaml:"),
             qPrintable(form->problem("network.nic_bandwidth")));
    QVERIFY(form->problem("network.nic_bandwidth").contains("error:"));
    QCOMPARE(w.cluster_editor()->text()->toPlainText(), text);
    QVERIFY(!w.cluster_editor()->modified());
    // A good value: written into the text at its place, the rest of the file kept.
    nic->setText("800 Gb/s");
    emit nic->editingFinished();
    QCOMPARE(form->problem("network.nic_bandwidth"), QString());
    QString edited = w.cluster_editor()->text()->toPlainText();
    QVERIFY(edited.contains("nic_bandwidth: 800 Gb/s"));
    QCOMPARE(edited.size(), text.size());  // "400" -> "800": only the value changed
    QVERIFY(w.cluster_editor()->modified());
    QFile f(cluster);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(!QString::fromUtf8(f.readAll()).contains("800 Gb/s"));  // saved only on Save
    // An edit of the text shows in the form.
    w.cluster_editor()->set_text(edited.replace("800 Gb/s", "200 Gb/s"));
    QCOMPARE(form->field("network.nic_bandwidth")->text(), QString("200 Gb/s"));
    // A task field.
    QString task = dir.filePath("task.yaml");
    QVERIFY(QFile::copy(kData + "/tasks/llama3-8b-train.yaml", task));
    QFile::setPermissions(task, QFile::ReadOwner | QFile::WriteOwner);
    QVERIFY(w.open_task(task));
    QLineEdit* batch = w.task_form()->field("global_batch");
    QVERIFY(batch != nullptr);
    batch->setText("-4");
    emit batch->editingFinished();
    QVERIFY(w.task_form()->problem("global_batch").contains("task.yaml:"));
    batch->setText("256");
    emit batch->editingFinished();
    QVERIFY(w.task_editor()->text()->toPlainText().contains("global_batch: 256"));
    // Listed values: the precision from its list.
    auto* precision = qobject_cast<QComboBox*>(w.task_form()->field("precision")->parent());
    QVERIFY(precision != nullptr && precision->findText("fp8") >= 0);
    precision->setCurrentIndex(precision->findText("fp8"));
    emit precision->activated(precision->currentIndex());
    QVERIFY(w.task_editor()->text()->toPlainText().contains("precision: fp8"));
  }

  void charts_export_as_png_and_svg() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "dgx-h100", "llama3-8b-train"));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTemporaryDir dir;
    QCOMPARE(w.charts()->save(dir.filePath("plan.svg")), QString());
    QCOMPARE(w.charts()->save(dir.filePath("plan.png")), QString());
    QFile svg(dir.filePath("plan-step.svg"));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    QVERIFY(svg.readAll().contains("<svg"));
    QVERIFY(QImage(dir.filePath("plan-memory.png")).width() > 100);
    QVERIFY(!w.charts()->save(dir.filePath("plan.gif")).isEmpty());
  }

  // The controls show the files loaded: a cluster opened alone, another cluster opened after a
  // what-if change, and an edit of the file (the Nodes box used to keep its own value), with
  // the status bar naming the cluster now loaded.
  void the_controls_and_the_status_follow_the_files() {
    QTemporaryDir dir;
    QString rail = dir.filePath("rail.yaml");
    QVERIFY(QFile::copy(kData + "/clusters/h100-4x8-rail.yaml", rail));
    QFile::setPermissions(rail, QFile::ReadOwner | QFile::WriteOwner);
    yirage::gui::MainWindow w;
    QVERIFY(w.open_cluster(rail));
    QCOMPARE(w.what_if()->nodes()->value(), 4);
    QCOMPARE(w.what_if()->devices_per_node()->value(), 8);
    QVERIFY2(w.message().contains("h100-4x8-rail"), qPrintable(w.message()));
    QSignalSpy updated(&w, &yirage::gui::MainWindow::plans_updated);
    QVERIFY(w.open_task(kData + "/tasks/llama3-8b-train.yaml"));
    QVERIFY(updated.wait(20000));
    QCOMPARE(w.what_if()->nodes()->value(), 4);
    QCOMPARE(w.what_if()->global_batch()->value(), 512);
    w.what_if()->nodes()->setValue(32);
    QVERIFY(updated.wait(20000));
    QCOMPARE(w.plans()->result().cluster.total_nodes(), std::int64_t{32});
    // Another cluster: its own values, and the status says which.
    QVERIFY(w.open_cluster(kData + "/clusters/dgx-h100.yaml"));
    QCOMPARE(w.what_if()->nodes()->value(), 1);
    QVERIFY2(w.message().contains("dgx-h100"), qPrintable(w.message()));
    QVERIFY(updated.wait(20000));
    QVERIFY2(w.message().contains("dgx-h100"), qPrintable(w.message()));
    QCOMPARE(w.plans()->result().cluster.total_nodes(), std::int64_t{1});
    // The first again, then an edit of its text that checks.
    QVERIFY(w.open_cluster(rail));
    QCOMPARE(w.what_if()->nodes()->value(), 4);
    QVERIFY(updated.wait(20000));
    QString text = w.cluster_editor()->text()->toPlainText();
    w.cluster_editor()->set_text(text.replace("nodes: 4", "nodes: 2"));
    QCOMPARE(w.what_if()->nodes()->value(), 2);
    QVERIFY(updated.wait(20000));
    QCOMPARE(w.plans()->result().cluster.total_nodes(), std::int64_t{2});
    QVERIFY(!w.what_if()->what_if().nodes.has_value());
  }

  // A serve task: its request rate and lengths in the controls (no batch of 1 applied), the
  // CLI's plans, and charts with series.
  void a_serve_task_shows_its_requests_and_the_clis_plans() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "dgx-h100", "llama3-8b-serve"));
    yirage::gui::WhatIfPanel* c = w.what_if();
    QCOMPARE(c->request_rate()->value(), 20.0);
    QCOMPARE(c->prompt_length()->value(), 2048);
    QCOMPARE(c->output_length()->value(), 256);
    QVERIFY(c->global_batch()->isHidden() && c->sequence_length()->isHidden());
    QVERIFY(!c->what_if().global_batch && !c->what_if().sequence_length);
    const yirage::gui::ScenarioResult& r = w.plans()->result();
    QCOMPARE(r.task.global_batch, std::int64_t{0});
    QCOMPARE(r.infer.size(), std::size_t{9});  // `yirage-plan`: 67 layouts, 9 can run
    QCOMPARE(r.infer.front().layout.str(), std::string("tp=1,pp=1,replicas=8,batch=8"));
    QVERIFY(r.infer.front().layout.batch != 1);
    QVERIFY(bar_sets(w.charts()->breakdown()) >= 1);
    QVERIFY(bar_sets(w.charts()->memory()) >= 4);
    // Twice the requests: replanned at that rate.
    QSignalSpy updated(&w, &yirage::gui::MainWindow::plans_updated);
    c->request_rate()->setValue(40);
    QVERIFY(updated.wait(20000));
    QCOMPARE(w.plans()->result().task.serve->request_rate.value, 40.0);
  }

  // At the window's default size, every legend shows its labels whole (under the charts they
  // were cut to "comp..." and "TP/CP...").
  void legends_show_their_labels_whole() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "h100-4x8-rail", "llama3-70b-train"));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QApplication::processEvents();
    for (const QChartView* v : {w.charts()->breakdown(), w.charts()->memory()}) {
      QVERIFY(!v->chart()->legend()->markers().isEmpty());
      QCOMPARE(cut_legend_labels(v), QStringList());
    }
    QVERIFY(w.show_tab("operations"));
    QApplication::processEvents();
    QCOMPARE(cut_legend_labels(w.ops()->roofline()), QStringList());
    QCOMPARE(cut_category_labels(w.ops()->roofline()), QStringList());
  }

  // A lane per device; the wheel and the buttons zoom the time axis, whose ticks stay round
  // and readable, and fit all shows the whole step again.
  void the_timeline_zooms() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "h100-4x8-rail", "llama3-70b-train"));
    w.replay_selected_now();
    yirage::gui::TimelineView* t = w.timeline_tab()->timeline();
    QCOMPARE(t->rows(), std::size_t{32});  // tp=4, dp=8 on 4 nodes of 8
    QVERIFY(t->row_label(31).contains("rank 31"));
    w.show_tab("timeline");
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto [lo, hi] = t->visible_range();
    QCOMPARE(lo, 0.0);
    QVERIFY(hi > 0);
    std::size_t ticks = t->ticks().size();
    QVERIFY2(ticks >= 3 && ticks <= 20, qPrintable(QString::number(ticks)));
    t->zoom_in();
    QCOMPARE(t->visible_range().second - t->visible_range().first, hi / 2);
    QPointF at(t->width() * 0.75, 20);
    QWheelEvent wheel(at, t->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(t, &wheel);
    auto [zlo, zhi] = t->visible_range();
    QVERIFY(zhi - zlo < hi / 2 * 0.9);
    std::vector<double> zoomed = t->ticks();
    QVERIFY(zoomed.size() >= 3 && zoomed.size() <= 20);
    QVERIFY(zoomed.front() >= zlo && zoomed.back() <= zhi * (1 + 1e-9));
    t->fit_all();
    QCOMPARE(t->visible_range().first, 0.0);
    QCOMPARE(t->visible_range().second, hi);
  }

  // The Pareto tab sweeps node counts on the worker thread: the CLI's `sweep --nodes 1:32`
  // answers, with every count from 2 nodes up on the front of tokens/s against USD per million
  // tokens (each doubling buys throughput at a higher price per token).
  void the_pareto_tab_shows_the_front_over_node_counts() {
    yirage::gui::MainWindow w;
    QVERIFY(open_example(w, "h100-4x8-rail", "llama3-70b-train"));
    yirage::gui::ParetoView* p = w.pareto();
    QCOMPARE(p->up_to()->value(), 16);  // four times the cluster's nodes, at least 16
    QSignalSpy swept(&w, &yirage::gui::MainWindow::swept);
    QVERIFY(w.show_tab("pareto"));
    QVERIFY(swept.wait(30000));
    p->up_to()->setValue(32);
    QVERIFY(swept.wait(30000));
    const yirage::gui::SweepResult& r = p->result();
    QCOMPARE(r.points.size(), std::size_t{6});  // 1, 2, 4, 8, 16, 32
    std::vector<std::int64_t> front;
    for (const yirage::gui::SweepPoint& s : r.points) {
      QVERIFY(s.usd_per_mtok.has_value());
      if (s.front)
        front.push_back(s.nodes);
    }
    QCOMPARE(front, (std::vector<std::int64_t>{2, 4, 8, 16, 32}));
    QCOMPARE(p->table()->rowCount(), 6);
    QCOMPARE(p->table()->item(3, 7)->text(), QString("*"));
    int points = 0;
    int on_front = 0;
    for (QAbstractSeries* s : p->chart()->chart()->series()) {
      auto* xy = qobject_cast<QXYSeries*>(s);
      QVERIFY(xy != nullptr);
      (s->name() == "Pareto front" ? on_front : points) += xy->count();
    }
    QCOMPARE(points, 6);
    QCOMPARE(on_front, 5);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QApplication::processEvents();
    QCOMPARE(cut_legend_labels(p->chart()), QStringList());
  }

  void the_screenshot_shows_the_table_and_the_charts() {
    for (const auto& [cluster, task] : std::vector<std::pair<QString, QString>>{
             {"h100-4x8-rail", "llama3-70b-train"}, {"dgx-h100", "llama3-70b-decode"}}) {
      yirage::gui::MainWindow w;
      QVERIFY(open_example(w, cluster, task));
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      QImage shot = w.grab().toImage();
      QVERIFY(!shot.isNull());
      std::set<QRgb> colours;
      for (int y = 0; y < shot.height(); y += 4) {
        for (int x = 0; x < shot.width(); x += 4)
          colours.insert(shot.pixel(x, y));
      }
      QVERIFY2(colours.size() > 50, qPrintable(QString::number(colours.size())));
      QVERIFY(w.table()->isVisible() && w.plans()->rowCount() > 0);
      QVERIFY(w.charts()->breakdown()->isVisible() && w.charts()->memory()->isVisible());
      QVERIFY(bar_sets(w.charts()->memory()) >= 4);
    }
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
