#include "gui/cluster_view.h"

#include <QHeaderView>

namespace yirage::gui {
namespace {

QString q(const std::string& s) {
  return QString::fromStdString(s);
}

QString peak(const devices::DeviceSpec& d, devices::DType t) {
  auto r = d.peak_rate(t);
  return r ? q(devices::format(*r)) : QStringLiteral("-");
}

}  // namespace

ClusterView::ClusterView(QWidget* parent) : QTableWidget(parent) {
  setColumnCount(9);
  setHorizontalHeaderLabels({tr("Group"), tr("Device"), tr("Vendor"), tr("Nodes"), tr("Per node"),
                             tr("Memory"), tr("Bandwidth"), tr("BF16 peak"), tr("TDP")});
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  verticalHeader()->setVisible(false);
}

void ClusterView::show_cluster(const devices::ClusterSpec& cluster) {
  setRowCount(static_cast<int>(cluster.groups.size()));
  for (int row = 0; row < rowCount(); ++row) {
    const devices::NodeGroup& g = cluster.groups[static_cast<std::size_t>(row)];
    const devices::DeviceSpec& d = cluster.device(g);
    QStringList cells = {q(g.name),
                         q(d.name),
                         q(d.vendor),
                         QString::number(g.nodes),
                         QString::number(g.devices_per_node),
                         q(devices::format(d.memory_capacity.value)),
                         q(devices::format(d.memory_bandwidth.value)),
                         peak(d, devices::DType::kBf16),
                         d.tdp ? q(devices::format(d.tdp->value)) : QStringLiteral("-")};
    for (int col = 0; col < cells.size(); ++col) {
      setItem(row, col, new QTableWidgetItem(cells[col]));
    }
  }
}

}  // namespace yirage::gui
