#include "gui/file_editor.h"

#include "report/atomic_write.h"

#include "devices/support/diagnostics.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QStandardPaths>
#include <QTextBlock>
#include <QVBoxLayout>

namespace yirage::gui {
namespace {

QString read_all(const QString& path, bool* ok) {
  QFile f(path);
  *ok = f.open(QIODevice::ReadOnly);
  return *ok ? QString::fromUtf8(f.readAll()) : QString();
}

}  // namespace

FileEditor::FileEditor(const QString& kind, Check check, QWidget* parent)
    : QWidget(parent),
      kind_(kind),
      check_(std::move(check)),
      title_(new QLabel(this)),
      text_(new QPlainTextEdit(this)),
      problems_(new QLabel(this)),
      save_(new QPushButton(tr("Save"), this)),
      restore_(new QPushButton(tr("Restore the autosaved edits"), this)) {
  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  problems_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  problems_->setStyleSheet("color: #b00020");
  problems_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  problems_->setWordWrap(true);
  restore_->setVisible(false);
  save_->setEnabled(false);
  auto* bar = new QHBoxLayout();
  bar->addWidget(title_, 1);
  bar->addWidget(restore_);
  bar->addWidget(save_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(text_, 1);
  layout->addWidget(problems_);
  title_->setText(tr("No %1 file").arg(kind_));
  debounce_.setSingleShot(true);
  debounce_.setInterval(300);
  connect(&debounce_, &QTimer::timeout, this, &FileEditor::check_now);
  connect(text_, &QPlainTextEdit::textChanged, this, [this] {
    if (loading_)
      return;
    set_modified(true);
    debounce_.start();
  });
  connect(save_, &QPushButton::clicked, this, &FileEditor::save);
  connect(restore_, &QPushButton::clicked, this, &FileEditor::restore_autosave);
}

QString FileEditor::autosave_path(const QString& path) {
  QString dir =
      QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + "/autosave";
  QByteArray key = QCryptographicHash::hash(QFileInfo(path).absoluteFilePath().toUtf8(),
                                            QCryptographicHash::Sha1)
                       .toHex()
                       .left(16);
  return dir + "/" + QFileInfo(path).completeBaseName() + "-" + QString::fromLatin1(key) + ".yaml";
}

bool FileEditor::open(const QString& path) {
  bool ok = false;
  QString text = read_all(path, &ok);
  if (!ok) {
    problems_->setText(tr("%1: cannot be read").arg(path));
    return false;
  }
  path_ = path;
  title_->setText(tr("%1 file %2").arg(kind_, path));
  loading_ = true;
  text_->setPlainText(text);
  loading_ = false;
  set_modified(false);
  // An autosave that differs from the file is an edit that was never saved.
  bool saved = false;
  QString autosaved = read_all(autosave_path(path), &saved);
  restore_->setVisible(saved && autosaved != text);
  check_now();
  return problems_->text().isEmpty();
}

void FileEditor::restore_autosave() {
  bool ok = false;
  QString autosaved = read_all(autosave_path(path_), &ok);
  if (ok)
    set_text(autosaved);
  restore_->setVisible(false);
}

void FileEditor::set_text(const QString& text) {
  text_->setPlainText(text);  // textChanged: modified, debounced check
  debounce_.stop();
  check_now();
}

void FileEditor::check_now() {
  std::string text = text_->toPlainText().toStdString();
  QList<QTextEdit::ExtraSelection> marks;
  try {
    check_(path_.toStdString(), text);
    problems_->clear();
  } catch (const devices::InputError& e) {
    problems_->setText(QString::fromStdString(e.what()).trimmed());
    for (const devices::Diagnostic& d : e.items()) {
      if (d.loc.line < 1)
        continue;
      QTextEdit::ExtraSelection mark;
      mark.format.setBackground(QColor(255, 224, 224));
      mark.format.setProperty(QTextFormat::FullWidthSelection, true);
      mark.cursor = QTextCursor(text_->document()->findBlockByNumber(d.loc.line - 1));
      marks.append(mark);
    }
  }
  text_->setExtraSelections(marks);
  if (modified_ && !path_.isEmpty()) {
    QDir().mkpath(QFileInfo(autosave_path(path_)).path());
    report::atomic_write(autosave_path(path_).toStdString(), text);
  }
}

bool FileEditor::save() {
  if (path_.isEmpty())
    return false;
  std::string err = report::atomic_write(path_.toStdString(), text_->toPlainText().toStdString());
  if (!err.empty()) {
    problems_->setText(QString::fromStdString(err));
    return false;
  }
  QFile::remove(autosave_path(path_));
  restore_->setVisible(false);
  set_modified(false);
  return true;
}

void FileEditor::set_modified(bool m) {
  if (m == modified_)
    return;
  modified_ = m;
  save_->setEnabled(m);
  title_->setText(tr("%1 file %2%3").arg(kind_, path_, m ? tr(" (modified)") : QString()));
  emit modified_changed(m);
}

}  // namespace yirage::gui
