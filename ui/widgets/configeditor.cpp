// SPDX-License-Identifier: MIT
#include "widgets/configeditor.h"

#include "config/configloader.h"
#include "config/configvalidator.h"
#include "config/configwriter.h"
#include "config/presets.h"
#include "models/diagnosticmodel.h"
#include "models/formatting.h"
#include "session/configdocument.h"
#include "widgets/configform.h"
#include "widgets/yamlhighlighter.h"

#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QListView>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QShortcut>
#include <QTabWidget>
#include <QTextBlock>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>

namespace stagecraft {

namespace {

    QList<Diagnostic> toList(const std::vector<Diagnostic>& diagnostics)
    {
        return QList<Diagnostic>(diagnostics.begin(), diagnostics.end());
    }

    bool sameProblem(const Diagnostic& a, const Diagnostic& b)
    {
        return a.severity == b.severity && a.keyPath == b.keyPath && a.message == b.message;
    }

} // namespace

ConfigEditor::ConfigEditor(ConfigDocument* document, QWidget* parent)
    : QWidget(parent)
    , m_document(document)
    , m_form(new ConfigForm(this))
    , m_presetCombo(new QComboBox(this))
    , m_worldLabel(new QLabel(this))
    , m_tabs(new QTabWidget(this))
    , m_yamlEdit(new QPlainTextEdit(this))
    , m_yamlState(new QLabel(this))
    , m_applyButton(new QPushButton(tr("Apply"), this))
    , m_revertButton(new QPushButton(tr("Revert"), this))
    , m_problemsLabel(new QLabel(this))
    , m_problemsView(new QListView(this))
    , m_diagnostics(new DiagnosticModel(this))
    , m_yamlCheckTimer(new QTimer(this))
{
    // Preset picker and world size.
    m_presetCombo->setObjectName(QStringLiteral("presetCombo"));
    m_presetCombo->setPlaceholderText(tr("Custom"));
    for (const std::string& name : presetNames()) {
        const QString qname = QString::fromStdString(name);
        m_presetCombo->addItem(qname, qname);
        m_presetCombo->setItemData(
            m_presetCombo->count() - 1, QString::fromStdString(presetSummary(name)), Qt::ToolTipRole);
    }
    m_presetCombo->setToolTip(tr("Load a built-in workload (undoable)"));
    connect(m_presetCombo, &QComboBox::activated, this, &ConfigEditor::onPresetActivated);
    auto* presetLabel = new QLabel(tr("&Preset"), this);
    presetLabel->setBuddy(m_presetCombo);

    m_worldLabel->setObjectName(QStringLiteral("worldLabel"));
    m_worldLabel->setTextFormat(Qt::RichText);
    m_worldLabel->setWordWrap(true);
    m_worldLabel->setStyleSheet(QStringLiteral(
        "#worldLabel { background: #eef3f9; border: 1px solid #c9d6e6; border-radius: 4px; padding: 5px 8px; }"));

    // YAML tab.
    auto* yamlPage = new QWidget(this);
    m_yamlEdit->setObjectName(QStringLiteral("yamlEdit"));
    m_yamlEdit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_yamlEdit->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_yamlEdit->setTabChangesFocus(false);
    m_yamlEdit->setTabStopDistance(QFontMetricsF(m_yamlEdit->font()).horizontalAdvance(QLatin1Char(' ')) * 2);
    new YamlHighlighter(m_yamlEdit->document());
    m_applyButton->setToolTip(tr("Parse the text and make it the configuration (Ctrl+Return)"));
    m_applyButton->setEnabled(false);
    m_revertButton->setToolTip(tr("Discard the text edits and show the current configuration"));
    m_revertButton->setEnabled(false);
    m_yamlState->setObjectName(QStringLiteral("yamlState"));
    m_yamlState->setWordWrap(true); // never wider than the panel
    auto* yamlButtons = new QHBoxLayout;
    yamlButtons->setContentsMargins(0, 0, 0, 0);
    yamlButtons->addWidget(m_yamlState, 1);
    yamlButtons->addWidget(m_revertButton);
    yamlButtons->addWidget(m_applyButton);
    auto* yamlLayout = new QVBoxLayout(yamlPage);
    yamlLayout->setContentsMargins(4, 4, 4, 4);
    yamlLayout->addWidget(m_yamlEdit, 1);
    yamlLayout->addLayout(yamlButtons);
    connect(m_applyButton, &QPushButton::clicked, this, &ConfigEditor::applyYaml);
    connect(m_revertButton, &QPushButton::clicked, this, [this] {
        onConfigChanged();
        Q_EMIT textReverted();
    });
    auto* applyShortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), m_yamlEdit);
    applyShortcut->setContext(Qt::WidgetShortcut);
    connect(applyShortcut, &QShortcut::activated, this, &ConfigEditor::applyYaml);
    connect(m_yamlEdit, &QPlainTextEdit::textChanged, this, &ConfigEditor::onYamlTextChanged);
    m_yamlCheckTimer->setSingleShot(true);
    m_yamlCheckTimer->setInterval(400);
    connect(m_yamlCheckTimer, &QTimer::timeout, this, &ConfigEditor::checkYamlText);

    m_tabs->setObjectName(QStringLiteral("configTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_form, tr("Form"));
    m_tabs->addTab(yamlPage, tr("YAML"));

    // Problems.
    m_problemsLabel->setObjectName(QStringLiteral("problemsLabel"));
    m_problemsView->setObjectName(QStringLiteral("problemsView"));
    m_problemsView->setModel(m_diagnostics);
    m_problemsView->setWordWrap(true);
    m_problemsView->setUniformItemSizes(false);
    m_problemsView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_problemsView->setToolTip(tr("Click a problem to go to its field or line"));
    connect(m_problemsView, &QListView::clicked, this, &ConfigEditor::onDiagnosticClicked);
    connect(m_problemsView, &QListView::activated, this, &ConfigEditor::onDiagnosticClicked);
    m_problemsView->setMaximumHeight(140);
    m_problemsView->setVisible(false);

    // The preset's source and the citation of its plan (the comment at the top of its file).
    m_sourceButton = new QToolButton(this);
    m_sourceButton->setObjectName(QStringLiteral("presetSourceButton"));
    m_sourceButton->setText(tr("Source"));
    m_sourceButton->setAutoRaise(true);
    connect(m_sourceButton, &QToolButton::clicked, this, [this] {
        const std::string name = m_document->config().name;
        QMessageBox box(QMessageBox::Information, tr("Preset %1").arg(QString::fromStdString(name)),
            QString::fromStdString(presetDescription(name)), QMessageBox::Close, this);
        box.setTextInteractionFlags(Qt::TextSelectableByMouse);
        box.exec();
    });
    auto* presetRow = new QHBoxLayout;
    presetRow->addWidget(presetLabel);
    presetRow->addWidget(m_presetCombo, 1);
    presetRow->addWidget(m_sourceButton);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->setSpacing(6);
    layout->addLayout(presetRow);
    layout->addWidget(m_worldLabel);
    layout->addWidget(m_tabs, 1);
    layout->addWidget(m_problemsLabel);
    layout->addWidget(m_problemsView);

    connect(
        m_form, &ConfigForm::fieldEdited, this, [this](const Config& config, const QString& description, int fieldId) {
            m_document->edit(config, description, fieldId);
        });
    connect(m_document, &ConfigDocument::configChanged, this, &ConfigEditor::onConfigChanged);
    connect(m_document, &ConfigDocument::filePathChanged, this, &ConfigEditor::onConfigChanged);
    onConfigChanged();
}

ConfigEditor::~ConfigEditor() = default;

ConfigForm* ConfigEditor::form() const
{
    return m_form;
}

QPlainTextEdit* ConfigEditor::yamlEdit() const
{
    return m_yamlEdit;
}

DiagnosticModel* ConfigEditor::diagnosticModel() const
{
    return m_diagnostics;
}

QComboBox* ConfigEditor::presetCombo() const
{
    return m_presetCombo;
}

bool ConfigEditor::hasUnappliedText() const
{
    return m_yamlDirty;
}

bool ConfigEditor::hasTextErrors() const
{
    return m_yamlDirty && std::any_of(m_textDiagnostics.begin(), m_textDiagnostics.end(), [](const Diagnostic& d) {
        return d.severity == Severity::Error;
    });
}

bool ConfigEditor::hasEditedText() const
{
    return m_yamlDirty && m_yamlEdit->document()->isModified();
}

bool ConfigEditor::textLoads() const
{
    return loadConfigText(m_yamlEdit->toPlainText().toStdString(), m_document->diagnosticFileName().toStdString())
        .config.has_value();
}

void ConfigEditor::onConfigChanged()
{
    const Config& config = m_document->config();
    m_form->setConfig(config);
    // Validate through the loader on the YAML text the tab shows, so the problems carry its lines and columns.
    const std::string yaml = toYaml(config);
    const ConfigResult check = loadConfigText(yaml, m_document->diagnosticFileName().toStdString());
    m_configDiagnostics = toList(check.diagnostics);
    m_form->setDiagnostics(m_configDiagnostics);
    m_synthesisDiagnostics.clear();
    m_yamlDirty = false;
    m_textDiagnostics.clear();
    m_yamlCheckTimer->stop();
    setYamlText(QString::fromStdString(yaml));
    m_yamlState->setText(tr("Edit the text, then Apply (Ctrl+Return)"));
    m_applyButton->setEnabled(false);
    m_revertButton->setEnabled(false);
    updateYamlMarks();
    updateDiagnosticList();
    updateWorldLabel();
    updatePresetCombo();
}

void ConfigEditor::setYamlText(const QString& text)
{
    if (m_yamlEdit->toPlainText() == text)
        return;
    const int scroll = m_yamlEdit->verticalScrollBar()->value();
    const QTextCursor cursor = m_yamlEdit->textCursor();
    const int line = cursor.blockNumber();
    const int column = cursor.positionInBlock();
    m_settingText = true;
    m_yamlEdit->setPlainText(text);
    m_yamlEdit->document()->setModified(false);
    m_settingText = false;
    const QTextBlock block = m_yamlEdit->document()->findBlockByNumber(line);
    if (block.isValid()) {
        QTextCursor restored(block);
        restored.movePosition(QTextCursor::Right, QTextCursor::MoveAnchor, std::min(column, block.length() - 1));
        m_yamlEdit->setTextCursor(restored);
    }
    m_yamlEdit->verticalScrollBar()->setValue(scroll);
}

void ConfigEditor::onYamlTextChanged()
{
    if (m_settingText)
        return;
    m_yamlDirty = true;
    m_applyButton->setEnabled(true);
    m_revertButton->setEnabled(true);
    m_yamlState->setText(tr("Edited \u2014 not applied yet"));
    m_yamlCheckTimer->start();
}

void ConfigEditor::checkYamlText()
{
    if (!m_yamlDirty)
        return;
    const ConfigResult result =
        loadConfigText(m_yamlEdit->toPlainText().toStdString(), m_document->diagnosticFileName().toStdString());
    m_textDiagnostics = toList(result.diagnostics);
    const auto errors = std::count_if(m_textDiagnostics.begin(), m_textDiagnostics.end(),
        [](const Diagnostic& d) { return d.severity == Severity::Error; });
    m_yamlState->setText(result.config
            ? tr("Valid \u2014 Apply (Ctrl+Return) to use it")
            : tr("%1 \u2014 fix them to apply").arg(countNoun(errors, tr("error"), tr("errors"))));
    updateYamlMarks();
    updateDiagnosticList();
}

bool ConfigEditor::applyYaml()
{
    const ConfigResult result =
        loadConfigText(m_yamlEdit->toPlainText().toStdString(), m_document->diagnosticFileName().toStdString());
    if (!result.config) {
        m_yamlDirty = true;
        m_textDiagnostics = toList(result.diagnostics);
        m_yamlState->setText(tr("Not applied: the text has errors"));
        updateYamlMarks();
        updateDiagnosticList();
        Q_EMIT statusMessage(tr("The YAML text has errors; the configuration is unchanged"));
        return false;
    }
    if (*result.config == m_document->config())
        onConfigChanged(); // nothing to apply: show the canonical text again
    else
        m_document->edit(*result.config, tr("Edit YAML"));
    return true;
}

void ConfigEditor::showInvalidText(const QString& yamlText, const QList<Diagnostic>& diagnostics)
{
    m_settingText = true;
    m_yamlEdit->setPlainText(yamlText);
    m_yamlEdit->document()->setModified(false); // the file as it is: nothing typed yet
    m_settingText = false;
    m_yamlDirty = true;
    m_textDiagnostics = diagnostics;
    m_applyButton->setEnabled(true);
    m_revertButton->setEnabled(true);
    m_yamlState->setText(tr("The file has errors \u2014 fix them and Apply"));
    updateYamlMarks();
    updateDiagnosticList();
    showYamlTab();
    for (const Diagnostic& d : diagnostics) {
        if (d.severity == Severity::Error && d.line > 0 && isInYamlText(d)) {
            jumpTo(d.line, d.column);
            break;
        }
    }
}

void ConfigEditor::setSynthesisDiagnostics(const QList<Diagnostic>& diagnostics)
{
    m_synthesisDiagnostics = diagnostics;
    updateDiagnosticList();
}

void ConfigEditor::updateDiagnosticList()
{
    QList<Diagnostic> list = m_yamlDirty ? m_textDiagnostics : m_configDiagnostics;
    for (const Diagnostic& extra : std::as_const(m_synthesisDiagnostics)) {
        const bool known =
            std::any_of(list.begin(), list.end(), [&](const Diagnostic& d) { return sameProblem(d, extra); });
        if (!known)
            list.append(extra);
    }
    m_diagnostics->setPrimaryFile(m_document->diagnosticFileName());
    m_diagnostics->setDiagnostics(std::move(list));
    m_problemsView->setVisible(m_diagnostics->rowCount() > 0);
    const int errors = m_diagnostics->errorCount();
    const int warnings = m_diagnostics->warningCount();
    QString text = tr("<b>Problems</b>");
    if (errors == 0 && warnings == 0)
        text += QStringLiteral(" &nbsp;<span style=\"color:#2e7d32\">") + tr("none") + QStringLiteral("</span>");
    if (errors > 0)
        text += QStringLiteral(" &nbsp;<span style=\"color:#c62828\">") + countNoun(errors, tr("error"), tr("errors"))
            + QStringLiteral("</span>");
    if (warnings > 0)
        text += QStringLiteral(" &nbsp;<span style=\"color:#a86400\">")
            + countNoun(warnings, tr("warning"), tr("warnings")) + QStringLiteral("</span>");
    m_problemsLabel->setText(text);
}

bool ConfigEditor::isInYamlText(const Diagnostic& d) const
{
    return QString::fromStdString(d.file) == m_document->diagnosticFileName();
}

void ConfigEditor::updateYamlMarks()
{
    QList<QTextEdit::ExtraSelection> selections;
    const QList<Diagnostic>& list = m_yamlDirty ? m_textDiagnostics : m_configDiagnostics;
    for (const Diagnostic& d : list) {
        const QTextBlock block = m_yamlEdit->document()->findBlockByNumber(d.line - 1);
        if (d.line <= 0 || !block.isValid() || !isInYamlText(d))
            continue;
        QTextEdit::ExtraSelection selection;
        selection.cursor = QTextCursor(block);
        const int start = std::clamp(d.column - 1, 0, std::max(0, block.length() - 1));
        selection.cursor.movePosition(QTextCursor::Right, QTextCursor::MoveAnchor, start);
        selection.cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
        const bool error = d.severity == Severity::Error;
        selection.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
        selection.format.setUnderlineColor(error ? QColor(0xc6, 0x28, 0x28) : QColor(0xe6, 0x8a, 0x00));
        selection.format.setBackground(error ? QColor(0xfd, 0xec, 0xea) : QColor(0xff, 0xf4, 0xde));
        selection.format.setToolTip(QString::fromStdString(d.message));
        selections.append(selection);
    }
    m_yamlEdit->setExtraSelections(selections);
}

void ConfigEditor::updateWorldLabel()
{
    const Config& config = m_document->config();
    const ParallelismConfig& p = config.parallelism;
    const double world =
        static_cast<double>(p.dp) * static_cast<double>(p.tp) * static_cast<double>(p.pp) * static_cast<double>(p.cp);
    QString figures;
    if (world >= 1 && world <= static_cast<double>(kMaxWorldSize)) {
        const qint64 gpus = static_cast<qint64>(world);
        const qint64 perNode = std::max<qint64>(1, config.cluster.gpusPerNode);
        const qint64 nodes = (gpus + perNode - 1) / perNode;
        figures = tr("<b style=\"font-size:large\">%1</b> GPUs &nbsp;\u00b7&nbsp; %2 of %3")
                      .arg(formatExact(gpus), countNoun(nodes, tr("node"), tr("nodes")))
                      .arg(perNode);
    } else {
        figures = tr("<b style=\"color:#c62828\">world size out of range</b>");
    }
    QString product =
        QStringLiteral("dp %1 \u00d7 tp %2 \u00d7 pp %3 \u00d7 cp %4").arg(p.dp).arg(p.tp).arg(p.pp).arg(p.cp);
    if (p.ep > 1)
        product += tr(" (ep %1 within dp)").arg(p.ep);
    m_worldLabel->setText(
        figures + QStringLiteral("<br><span style=\"color:#4a5563\">") + product + QStringLiteral("</span>"));
    m_worldLabel->setToolTip(tr("World size = dp \u00d7 tp \u00d7 pp \u00d7 cp"));
}

void ConfigEditor::updatePresetCombo()
{
    const QSignalBlocker blocker(m_presetCombo);
    m_presetCombo->setCurrentIndex(m_presetCombo->findData(QString::fromStdString(m_document->config().name)));
    const QString source = QString::fromStdString(presetDescription(m_document->config().name));
    m_sourceButton->setEnabled(!source.isEmpty());
    m_sourceButton->setToolTip(source.isEmpty()
            ? tr("No preset source: this configuration is not named after a built-in preset")
            : QStringLiteral("<p style=\"white-space:pre-wrap\">%1</p>").arg(source.toHtmlEscaped()));
}

void ConfigEditor::onPresetActivated(int index)
{
    const QString name = m_presetCombo->itemData(index).toString();
    const ConfigResult result = loadConfigOrPreset(name.toStdString());
    if (!result.config) {
        Q_EMIT statusMessage(tr("Preset %1 did not load").arg(name));
        return;
    }
    m_document->edit(*result.config, tr("Load preset %1").arg(name));
}

void ConfigEditor::onDiagnosticClicked(const QModelIndex& index)
{
    const int line = index.data(DiagnosticModel::LineRole).toInt();
    const int column = index.data(DiagnosticModel::ColumnRole).toInt();
    const QString keyPath = index.data(DiagnosticModel::KeyPathRole).toString();
    if (m_tabs->currentWidget() == m_form && !m_yamlDirty && m_form->focusField(keyPath))
        return;
    const bool inText = index.data(DiagnosticModel::FileRole).toString() == m_document->diagnosticFileName();
    if (line > 0 && inText) {
        jumpTo(line, column);
    } else if (!keyPath.isEmpty()) {
        showFormTab();
        m_form->focusField(keyPath);
    }
}

void ConfigEditor::jumpTo(int line, int column)
{
    showYamlTab();
    const QTextBlock block = m_yamlEdit->document()->findBlockByNumber(line - 1);
    if (!block.isValid())
        return;
    QTextCursor cursor(block);
    cursor.movePosition(
        QTextCursor::Right, QTextCursor::MoveAnchor, std::clamp(column - 1, 0, std::max(0, block.length() - 1)));
    m_yamlEdit->setTextCursor(cursor);
    m_yamlEdit->centerCursor();
    m_yamlEdit->setFocus(Qt::OtherFocusReason);
}

void ConfigEditor::showFormTab()
{
    m_tabs->setCurrentWidget(m_form);
}

void ConfigEditor::showYamlTab()
{
    m_tabs->setCurrentIndex(1);
}

bool ConfigEditor::showTab(const QString& name)
{
    if (name.compare(QLatin1String("form"), Qt::CaseInsensitive) == 0)
        showFormTab();
    else if (name.compare(QLatin1String("yaml"), Qt::CaseInsensitive) == 0)
        showYamlTab();
    else
        return false;
    return true;
}

} // namespace stagecraft
