#include "gui/timeline_tab.h"

#include "report/atomic_write.h"
#include "report/summary.h"

#include "costmodel/sim/chrome_trace.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QThreadPool>
#include <QVBoxLayout>

#include <sstream>

namespace yirage::gui {
namespace {

report::SimulatedPlan run(const ReplayJob& job, const costmodel::CalibrationSet& calibrations) {
  if (job.train) {
    planner::TrainContext tc{job.cluster, job.task, calibrations};
    return report::simulate_plan(tc, *job.train);
  }
  planner::InferContext ic{job.cluster, job.task, calibrations};
  return report::simulate_plan(ic, *job.infer);
}

}  // namespace

TimelineTab::TimelineTab(const costmodel::CalibrationSet& calibrations, QWidget* parent)
    : QWidget(parent),
      calibrations_(calibrations),
      timeline_(new TimelineView(this)),
      status_(new QLabel(this)) {
  auto* replay_button = new QPushButton(tr("Replay in SimGrid"), this);
  replay_button->setObjectName("replay");
  auto* trace_button = new QPushButton(tr("Export trace..."), this);
  auto* zoom_in = new QPushButton(tr("Zoom in"), this);
  auto* zoom_out = new QPushButton(tr("Zoom out"), this);
  auto* fit = new QPushButton(tr("Fit all"), this);
  auto* bar = new QHBoxLayout();
  for (QPushButton* b : {replay_button, trace_button, zoom_in, zoom_out, fit})
    bar->addWidget(b);
  bar->addWidget(status_, 1);
  status_->setWordWrap(true);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(timeline_);
  scroll->setWidgetResizable(true);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(scroll, 1);
  connect(replay_button, &QPushButton::clicked, this, &TimelineTab::replay);
  connect(zoom_in, &QPushButton::clicked, timeline_, &TimelineView::zoom_in);
  connect(zoom_out, &QPushButton::clicked, timeline_, &TimelineView::zoom_out);
  connect(fit, &QPushButton::clicked, timeline_, &TimelineView::fit_all);
  connect(trace_button, &QPushButton::clicked, this, [this] {
    QString path = QFileDialog::getSaveFileName(this, tr("Export trace"), QString(),
                                                tr("Chrome trace JSON (*.json)"));
    if (path.isEmpty())
      return;
    if (QString err = export_trace(path); !err.isEmpty())
      QMessageBox::warning(this, tr("Export trace"), err);
  });
}

void TimelineTab::set_job(std::optional<ReplayJob> job) {
  ++generation_;  // a replay in flight was of another plan
  job_ = std::move(job);
  replay_.reset();
  timeline_->clear();
  status_->setText(job_ ? tr("Replay the selected plan's step in SimGrid: device by device, "
                             "with its collectives, sends and bubbles")
                        : tr("Select a plan of a homogeneous cluster to replay it"));
}

void TimelineTab::replay() {
  if (!job_) {
    status_->setText(tr("Select a plan of a homogeneous cluster to replay it"));
    return;
  }
  std::uint64_t gen = ++generation_;
  status_->setText(tr("replaying %1 in SimGrid...")
                       .arg(QString::fromStdString(job_->train ? job_->train->layout.str()
                                                               : job_->infer->layout.str())));
  QThreadPool::globalInstance()->start([this, gen, job = *job_] {
    report::SimulatedPlan s = run(job, calibrations_);
    QMetaObject::invokeMethod(
        this,
        [this, gen, s = std::move(s), stages = job.stages, per = job.stage_ranks] {
          if (gen == generation_)
            show_replay(s, stages, per);
        },
        Qt::QueuedConnection);
  });
}

void TimelineTab::replay_now() {
  if (!job_)
    return;
  ++generation_;
  show_replay(run(*job_, calibrations_), job_->stages, job_->stage_ranks);
}

void TimelineTab::show_replay(const report::SimulatedPlan& s,
                              std::int64_t stages,
                              std::int64_t per_stage) {
  replay_ = s;
  if (!s.step) {
    timeline_->clear();
    status_->setText(tr("not simulated: %1").arg(QString::fromStdString(s.why)));
    emit replayed();
    return;
  }
  // A lane per device the replay gave work, by rank, named by its SimGrid host.
  std::vector<TimelineView::Lane> lanes;
  std::size_t busy = 0;
  for (const costmodel::SimDeviceTimeline& d : s.result.devices) {
    if (d.intervals.empty())
      continue;
    ++busy;
    if (lanes.size() == kMaxLanes)
      continue;
    QString label = tr("%1 (rank %2").arg(QString::fromStdString(d.host)).arg(d.rank);
    if (stages > 1)
      label +=
          tr(", stage %1").arg(std::min(stages - 1, d.rank / std::max<std::int64_t>(1, per_stage)));
    lanes.push_back({d.rank, label + ")"});
  }
  timeline_->show_step(s.step->program, s.result, lanes);
  QString shown = lanes.size() < busy
                      ? tr("; the first %1 of its %2 devices shown").arg(lanes.size()).arg(busy)
                      : tr("; %1 devices").arg(busy);
  status_->setText(tr("%1: simulated %2, estimate %3 (%4 transfers%5)%6")
                       .arg(QString::fromStdString(s.layout))
                       .arg(QString::fromStdString(report::secs(s.simulated)))
                       .arg(QString::fromStdString(report::secs(s.estimate)))
                       .arg(s.result.transfers)
                       .arg(s.result.aggregation.empty() ? QString() : tr(", aggregated"))
                       .arg(shown));
  emit replayed();
}

QString TimelineTab::export_trace(const QString& path) const {
  if (!replay_ || !replay_->step)
    return tr("replay a plan first (Timeline tab)");
  std::ostringstream out;
  costmodel::write_chrome_trace(replay_->step->program, replay_->result, out);
  return QString::fromStdString(report::atomic_write(path.toStdString(), out.str()));
}

}  // namespace yirage::gui
