// The Timeline tab: replays the selected plan's step in SimGrid on a worker thread and shows
// it one lane per simulated device (TimelineView), with zoom buttons and the Chrome trace
// export. The plan comes from the window as a ReplayJob.
#pragma once

#include "report/simulate_report.h"

#include "costmodel/calibration.h"
#include "devices/cluster_spec.h"
#include "devices/task_spec.h"
#include "gui/timeline_view.h"
#include "planner/infer_estimate.h"
#include "planner/plan.h"

#include <QLabel>
#include <QWidget>

#include <cstdint>
#include <optional>

namespace yirage::gui {

/// A plan to replay: training or inference, and how its ranks form pipeline stages.
struct ReplayJob {
  devices::ClusterSpec cluster;
  devices::TaskSpec task;
  std::optional<planner::PlanEstimate> train;
  std::optional<planner::InferEstimate> infer;
  std::int64_t stages = 1;
  std::int64_t stage_ranks = 1;  // consecutive ranks in one stage (the layout's rank order)
};

class TimelineTab : public QWidget {
  Q_OBJECT

 public:
  /// The lanes shown at most; a larger replay shows its first devices by rank.
  static constexpr std::size_t kMaxLanes = 64;

  TimelineTab(const costmodel::CalibrationSet& calibrations, QWidget* parent = nullptr);

  /// The selected plan changed: `job` is what the next replay runs (none: nothing to replay).
  void set_job(std::optional<ReplayJob> job);
  /// Replays the job on a worker thread (replayed() when done), or on this thread.
  void replay();
  void replay_now();

  const TimelineView* timeline() const { return timeline_; }

  TimelineView* timeline() { return timeline_; }

  QString status() const { return status_->text(); }

  /// Writes the replayed step as Chrome trace JSON; returns the error, or empty.
  QString export_trace(const QString& path) const;

 signals:
  void replayed();

 private:
  void show_replay(const report::SimulatedPlan& s, std::int64_t stages, std::int64_t per_stage);

  const costmodel::CalibrationSet& calibrations_;
  std::optional<ReplayJob> job_;
  std::optional<report::SimulatedPlan> replay_;
  std::uint64_t generation_ = 0;  // of the latest replay; older ones are dropped
  TimelineView* timeline_;
  QLabel* status_;
};

}  // namespace yirage::gui
