// The plans of a cluster with several device types, as a table: training as data
// parallelism across the node groups (each group's own layout on its share of the batch)
// and as one pipeline spanning them, the faster first; inference as each group's replicas
// on its share of the work. One row per plan, then one per node group with its memory per
// device against the device's capacity.
#pragma once

#include "planner/hetero.h"

#include <QTableWidget>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace yirage::gui {

class MixedView : public QTableWidget {
  Q_OBJECT

 public:
  explicit MixedView(QWidget* parent = nullptr);

  void show_training(const planner::HeteroResult& r);
  void show_inference(const devices::TaskSpec& t, const planner::HeteroInferPlan& p);
  void clear_plans();

  /// A group row's plan: its own homogeneous plan (data parallelism across groups,
  /// inference), or its stages' layout in the pipeline spanning the groups.
  struct GroupPlan {
    std::string device;
    std::optional<planner::PlanEstimate> train;
    std::optional<planner::InferEstimate> infer;
    std::optional<planner::Layout> stage;  // tp and micro-batch of a pipeline part
  };

  const GroupPlan* group_plan(int row) const;

  /// The groups' memory per device in the best plan: (group label, memory), for the chart.
  const std::vector<std::pair<std::string, planner::MemoryUse>>& best_memory() const {
    return best_memory_;
  }

 private:
  void add_row(const QStringList& cells, bool plan_row, std::optional<GroupPlan> g = {});
  void add_pipeline(const planner::HeteroPipelinePlan& h, bool best);
  void add_data_parallel(const planner::HeteroPlan& h, bool best);

  std::vector<std::optional<GroupPlan>> plans_;  // per row
  std::vector<std::pair<std::string, planner::MemoryUse>> best_memory_;
};

}  // namespace yirage::gui
