// A cluster or task file as text: edits are checked as they are typed (the CLI's
// `file:line:col` messages shown under the text, the lines they name marked), applied to the
// scenario when they check, autosaved beside the user's data and saved atomically. An
// autosave newer than the file is offered back when the file is opened.
#pragma once

#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <string>

namespace yirage::gui {

class FileEditor : public QWidget {
  Q_OBJECT

 public:
  /// `check` parses the text as the contents of the file (throws devices::InputError) and,
  /// when it parses, applies it.
  using Check = std::function<void(const std::string& path, const std::string& text)>;

  FileEditor(const QString& kind, Check check, QWidget* parent = nullptr);

  /// Reads and checks the file; false (with the message shown) if it cannot be read or
  /// does not check.
  bool open(const QString& path);
  /// Writes the text to the file (temporary file, then rename); false with the message shown.
  bool save();
  /// Replaces the text (as typing would) and checks it at once.
  void set_text(const QString& text);

  bool modified() const { return modified_; }

  bool has_autosave() const { return !restore_->isHidden(); }

  void restore_autosave();

  QString path() const { return path_; }

  QString problems() const { return problems_->text(); }

  QPlainTextEdit* text() const { return text_; }

  /// Where the edits of `path` are autosaved.
  static QString autosave_path(const QString& path);

 signals:
  void modified_changed(bool modified);

 private:
  void check_now();
  void set_modified(bool m);

  QString kind_;
  Check check_;
  QString path_;
  bool modified_ = false;
  bool loading_ = false;
  QLabel* title_;
  QPlainTextEdit* text_;
  QLabel* problems_;
  QPushButton* save_;
  QPushButton* restore_;
  QTimer debounce_;
};

}  // namespace yirage::gui
