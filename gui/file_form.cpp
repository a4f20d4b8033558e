#include "gui/file_form.h"

#include "devices/support/diagnostics.h"
#include "devices/support/units.h"
#include "gui/file_editor.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QScrollArea>
#include <QVBoxLayout>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <utility>

namespace yirage::gui {
namespace {

using devices::Dim;

// The node at `path` below `root`, or an undefined node. Read through const nodes (a
// missing key gives an invalid node, which only copying and IsDefined() accept) and moved
// with reset(): yaml-cpp's assignment would rewrite the tree.
YAML::Node node_at(const YAML::Node& root, const std::vector<std::string>& path) {
  YAML::Node n = root;
  for (const std::string& key : path) {
    const YAML::Node& c = n;
    bool index = !key.empty() && std::isdigit(static_cast<unsigned char>(key[0]));
    YAML::Node child = c.IsSequence() && index ? c[std::stoul(key)]
                       : c.IsMap()             ? c[key]
                                               : YAML::Node(YAML::NodeType::Undefined);
    if (!child.IsDefined() || child.IsNull())
      return YAML::Node(YAML::NodeType::Undefined);  // missing (an invalid node throws)
    n.reset(child);
  }
  return n;
}

// Where the scalar `n` is written in `text`: [begin, end) in bytes, quotes included; false
// when the text there is not the scalar as written on one line (edit it in the text view).
bool scalar_span(const std::string& text,
                 const YAML::Node& n,
                 std::size_t* begin,
                 std::size_t* end) {
  auto pos = static_cast<std::size_t>(n.Mark().pos);
  if (n.Mark().pos < 0 || pos >= text.size())
    return false;
  const std::string& s = n.Scalar();
  char q = text[pos];
  if (q == '"' || q == '\'') {
    std::size_t close = text.find(q, pos + 1);
    while (close != std::string::npos && q == '"' && text[close - 1] == '\\')
      close = text.find(q, close + 1);
    if (close == std::string::npos || text.find('\n', pos) < close)
      return false;
    *begin = pos;
    *end = close + 1;
    return true;
  }
  if (text.compare(pos, s.size(), s) != 0)
    return false;
  *begin = pos;
  *end = pos + s.size();
  return true;
}

// `value` as a YAML scalar: plain where that reads back the same, else double-quoted.
std::string scalar_text(const std::string& value) {
  bool plain = !value.empty() && value.front() != ' ' && value.back() != ' ' &&
               value.find_first_of(":#,[]{}&*!|>'\"%@`\n") == std::string::npos;
  if (plain)
    return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

FileForm::FileForm(Kind kind, FileEditor* editor, Validate validate, QWidget* parent)
    : QWidget(parent),
      kind_(kind),
      editor_(editor),
      validate_(std::move(validate)),
      scroll_(new QScrollArea(this)),
      grid_(nullptr),
      status_(new QLabel(this)) {
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(status_);
  scroll_->setWidgetResizable(true);
  outer->addWidget(scroll_, 1);
  status_->setWordWrap(true);
  connect(editor_->text(), &QPlainTextEdit::textChanged, this, &FileForm::sync);
  sync();
}

std::vector<FileForm::Spec> FileForm::specs(const std::string& text) const {
  std::vector<Spec> want;
  if (kind_ == Kind::kTask) {
    for (auto [label, key] :
         {std::pair{"name", "name"}, std::pair{"model", "model"}, std::pair{"mode", "mode"},
          std::pair{"precision", "precision"}, std::pair{"sequence length", "sequence_length"},
          std::pair{"global batch", "global_batch"}, std::pair{"optimizer", "optimizer"}})
      want.push_back({tr(label), {key}, std::nullopt});
  } else {
    want.push_back({tr("name"), {"name"}, std::nullopt});
    const YAML::Node root = YAML::Load(text);
    const YAML::Node groups = root["node_groups"];
    for (std::size_t i = 0; groups.IsSequence() && i < groups.size(); ++i) {
      std::string g = std::to_string(i);
      const YAML::Node name = node_at(groups, {g, "name"});
      QString label = name.IsDefined() && name.IsScalar() ? QString::fromStdString(name.Scalar())
                                                          : tr("group %1").arg(i);
      want.push_back({label + tr(": device"), {"node_groups", g, "device"}, std::nullopt});
      want.push_back({label + tr(": nodes"), {"node_groups", g, "nodes"}, std::nullopt});
      want.push_back(
          {label + tr(": devices per node"), {"node_groups", g, "devices_per_node"}, std::nullopt});
      want.push_back({label + tr(": fabric bandwidth"),
                      {"node_groups", g, "fabric", "bandwidth"},
                      Dim::kBytesPerSec});
      want.push_back(
          {label + tr(": fabric latency"), {"node_groups", g, "fabric", "latency"}, Dim::kSeconds});
      want.push_back(
          {label + tr(": NIC bandwidth"), {"node_groups", g, "nic_bandwidth"}, Dim::kBytesPerSec});
      want.push_back({label + tr(": host memory"), {"node_groups", g, "host_memory"}, Dim::kBytes});
    }
    want.push_back({tr("network: NIC bandwidth"), {"network", "nic_bandwidth"}, Dim::kBytesPerSec});
    want.push_back({tr("network: latency"), {"network", "latency"}, Dim::kSeconds});
    want.push_back(
        {tr("network: oversubscription"), {"network", "oversubscription"}, std::nullopt});
  }
  // Only the fields the file writes as single scalars.
  YAML::Node root = YAML::Load(text);
  std::vector<Spec> present;
  for (Spec& s : want) {
    YAML::Node n = node_at(root, s.path);
    std::size_t b = 0;
    std::size_t e = 0;
    if (n.IsDefined() && n.IsScalar() && scalar_span(text, n, &b, &e))
      present.push_back(std::move(s));
  }
  return present;
}

void FileForm::rebuild(const std::vector<Spec>& want) {
  for (Field& f : fields_) {
    f.edit->disconnect(this);
    if (auto* combo = qobject_cast<QComboBox*>(f.edit->parent()))
      combo->disconnect(this);
  }
  if (QWidget* old = scroll_->takeWidget())
    old->deleteLater();  // sync may run inside a field's own signal
  fields_.clear();
  auto* inner = new QWidget();
  grid_ = new QGridLayout(inner);
  grid_->setColumnStretch(3, 1);
  for (std::size_t i = 0; i < want.size(); ++i) {
    const Spec& s = want[i];
    QStringList parts;
    for (const std::string& p : s.path)
      parts << QString::fromStdString(p);
    QWidget* input = nullptr;
    QLineEdit* edit = nullptr;
    if (auto c = choices_.find(s.path.back()); c != choices_.end()) {
      auto* combo = new QComboBox(inner);
      combo->setEditable(true);
      combo->setInsertPolicy(QComboBox::NoInsert);
      combo->addItems(c->second);
      edit = combo->lineEdit();
      input = combo;
      connect(combo, &QComboBox::activated, this, [this, i] { commit(i); });
    } else {
      edit = new QLineEdit(inner);
      input = edit;
    }
    Field f{parts.join("."), s.path, s.unit, edit, new QLabel(inner)};
    auto* label = new QLabel(s.label, inner);
    label->setObjectName("form_label");
    auto* hint = new QLabel(
        s.unit ? QString::fromStdString(std::string(devices::dim_noun(*s.unit))) : QString(),
        inner);
    hint->setObjectName("form_hint");
    if (s.unit)
      f.edit->setPlaceholderText(
          QString::fromStdString(std::string(devices::dim_example(*s.unit))));
    f.problem->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    f.problem->setStyleSheet("color: #b00020");
    f.problem->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto row = static_cast<int>(i);
    grid_->addWidget(label, row, 0);
    grid_->addWidget(input, row, 1);
    grid_->addWidget(hint, row, 2);
    grid_->addWidget(f.problem, row, 3);
    connect(f.edit, &QLineEdit::editingFinished, this, [this, i] { commit(i); });
    fields_.push_back(std::move(f));
  }
  grid_->setRowStretch(static_cast<int>(want.size()), 1);
  scroll_->setWidget(inner);
}

void FileForm::sync() {
  std::string text = editor_->text()->toPlainText().toStdString();
  std::vector<Spec> want;
  YAML::Node root;
  try {
    want = specs(text);
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    status_->setText(tr("The text is not YAML (%1): the form follows when it is.")
                         .arg(QString::fromStdString(e.msg)));
    for (Field& f : fields_)
      f.edit->setEnabled(false);
    return;
  }
  status_->setText(
      tr("Return writes a field into the text; units as in the files (450 GB/s, "
         "400 Gb/s, 1.5 us, 2 TiB)."));
  bool same = want.size() == fields_.size();
  for (std::size_t i = 0; same && i < want.size(); ++i)
    same = want[i].path == fields_[i].path;
  if (!same)
    rebuild(want);
  for (Field& f : fields_) {
    QString value = QString::fromStdString(node_at(root, f.path).Scalar());
    f.edit->setEnabled(true);
    if (f.edit->text() != value)
      f.edit->setText(value);
    f.problem->clear();
  }
}

void FileForm::commit(std::size_t i) {
  if (i >= fields_.size())
    return;
  Field& f = fields_[i];
  std::string value = f.edit->text().trimmed().toStdString();
  std::string text = editor_->text()->toPlainText().toStdString();
  YAML::Node n;
  std::size_t begin = 0;
  std::size_t end = 0;
  try {
    n = node_at(YAML::Load(text), f.path);
  } catch (const YAML::Exception&) {
    return;  // the status line says the text is not YAML
  }
  if (!n.IsDefined() || !n.IsScalar() || !scalar_span(text, n, &begin, &end)) {
    f.problem->setText(tr("edit this value in the text view"));
    return;
  }
  if (n.Scalar() == value) {
    f.problem->clear();
    return;
  }
  std::string candidate = text.substr(0, begin) + scalar_text(value) + text.substr(end);
  std::string path = editor_->path().toStdString();
  int line = n.Mark().line + 1;
  QString message;
  try {
    validate_(path, candidate);
  } catch (const devices::InputError& e) {
    // The loader's messages about this field's line; any other only when the text without
    // the edit checks (the edit broke it elsewhere).
    QStringList mine;
    for (const devices::Diagnostic& d : e.items()) {
      if (d.loc.line == line)
        mine << QString::fromStdString(devices::render(d)).trimmed();
    }
    message = mine.join("\n");
    if (message.isEmpty()) {
      try {
        validate_(path, text);
        message = QString::fromStdString(e.what()).trimmed();
      } catch (const devices::InputError&) {
        // The text had problems before this edit: the text view shows them.
      }
    }
  }
  if (!message.isEmpty()) {
    f.problem->setText(message);
    return;
  }
  f.problem->clear();
  editor_->set_text(QString::fromStdString(candidate));
}

void FileForm::set_choices(const std::string& name, const QStringList& values) {
  choices_[name] = values;
  try {
    rebuild(specs(editor_->text()->toPlainText().toStdString()));
  } catch (const YAML::Exception&) {
    // The form follows when the text parses.
  }
  sync();
}

QLineEdit* FileForm::field(const QString& key) const {
  for (const Field& f : fields_) {
    if (f.key == key)
      return f.edit;
  }
  return nullptr;
}

QString FileForm::problem(const QString& key) const {
  for (const Field& f : fields_) {
    if (f.key == key)
      return f.problem->text();
  }
  return {};
}

}  // namespace yirage::gui
