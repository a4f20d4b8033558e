// A form over a cluster or task file: its main fields (a cluster's node groups with their
// device, node count, devices per node and link bandwidths and latencies, the network; a
// task's model, mode, precision, sequence length and batch) beside the text view. An edit
// is checked by the same loader as the CLI on the text with the new value in place; a
// value that does not check shows the loader's `file:line:col` message next to its field
// and changes nothing, one that checks is written into the text (the rest of the file,
// comments and layout included, kept as it was), where the text view checks and applies it.
// Edits of the text rebuild the form.
#pragma once

#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace yirage::devices {
enum class Dim;  // devices/support/units.h, which moc cannot read
}  // namespace yirage::devices

namespace yirage::gui {

class FileEditor;

class FileForm : public QWidget {
  Q_OBJECT

 public:
  enum class Kind { kCluster, kTask };

  /// `validate` parses a text as the contents of the file at `path` (throws
  /// devices::InputError); it applies nothing.
  using Validate = std::function<void(const std::string& path, const std::string& text)>;

  FileForm(Kind kind, FileEditor* editor, Validate validate, QWidget* parent = nullptr);

  /// The field at `key` ("node_groups.0.fabric.bandwidth", "global_batch"), or nullptr.
  QLineEdit* field(const QString& key) const;
  /// The message shown next to that field (empty when it checks).
  QString problem(const QString& key) const;

  /// Offers `values` in a list on every field whose key ends in `name` ("device", "mode");
  /// any value may still be typed.
  void set_choices(const std::string& name, const QStringList& values);

  /// Rebuilds the fields from the editor's text.
  void sync();

 private:
  struct Field {
    QString key;
    std::vector<std::string> path;  // map keys, or sequence indices as digits
    std::optional<devices::Dim> unit;
    QLineEdit* edit = nullptr;
    QLabel* problem = nullptr;
  };

  struct Spec {
    QString label;
    std::vector<std::string> path;
    std::optional<devices::Dim> unit;
  };

  std::vector<Spec> specs(const std::string& text) const;
  void rebuild(const std::vector<Spec>& want);
  void commit(std::size_t i);

  Kind kind_;
  FileEditor* editor_;
  Validate validate_;
  QScrollArea* scroll_;
  QGridLayout* grid_;
  QLabel* status_;
  std::vector<Field> fields_;
  std::map<std::string, QStringList> choices_;  // by the last key of a field's path
};

}  // namespace yirage::gui
