// SPDX-License-Identifier: MIT
#pragma once

#include "config/diagnostic.h"

#include <QList>
#include <QWidget>

class QComboBox;
class QLabel;
class QListView;
class QModelIndex;
class QPlainTextEdit;
class QPushButton;
class QTabWidget;
class QTimer;
class QToolButton;

namespace stagecraft {

class ConfigDocument;
class ConfigForm;
class DiagnosticModel;

/// The left panel: preset picker, world size, the config as a form and as YAML text, and the list of problems.
/// Every change goes to the ConfigDocument as an undoable edit; problems are marked on the fields, never in a
/// dialog. A click on a problem jumps to its field (form tab) or to its line and column (YAML tab).
class ConfigEditor : public QWidget
{
    Q_OBJECT
public:
    explicit ConfigEditor(ConfigDocument* document, QWidget* parent = nullptr);
    ~ConfigEditor() override;

    ConfigForm* form() const;
    QPlainTextEdit* yamlEdit() const;
    DiagnosticModel* diagnosticModel() const;
    QComboBox* presetCombo() const;

    /// Shows text that did not load (a file with errors) in the YAML tab with its diagnostics; the document's
    /// config is unchanged until the text is fixed and applied.
    void showInvalidText(const QString& yamlText, const QList<Diagnostic>& diagnostics);
    /// Problems reported by the last synthesis (listed with the config's own, without duplicates); {} clears.
    void setSynthesisDiagnostics(const QList<Diagnostic>& diagnostics);
    /// True while the YAML tab holds edited text that is not applied.
    bool hasUnappliedText() const;
    /// True while the YAML tab holds unapplied text with errors (e.g. a file that did not load).
    bool hasTextErrors() const;
    /// True while the YAML tab holds unapplied text the user has typed (not only a file with errors as it was
    /// opened): closing it loses work.
    bool hasEditedText() const;
    /// Whether the YAML tab's text loads as a config now (not after the check's debounce).
    bool textLoads() const;
    /// Parses the YAML tab and, when it has no errors, applies it as one undoable edit. Returns whether it did.
    bool applyYaml();
    /// Shows the YAML tab with the cursor at 1-based `line` and `column`.
    void jumpTo(int line, int column);
    void showFormTab();
    void showYamlTab();
    /// Shows the tab "form" or "yaml"; false for another name.
    bool showTab(const QString& name);

Q_SIGNALS:
    /// A short status text for the main window (e.g. why Apply did nothing).
    void statusMessage(const QString& message);
    /// Revert discarded unapplied text: the editor shows the document's config again.
    void textReverted();

private:
    void onConfigChanged();
    void onYamlTextChanged();
    void checkYamlText();
    void onDiagnosticClicked(const QModelIndex& index);
    void onPresetActivated(int index);
    void setYamlText(const QString& text);
    void updateDiagnosticList();
    void updateYamlMarks();
    /// Whether `d` is about the YAML text (not a Hugging Face config.json it names).
    bool isInYamlText(const Diagnostic& d) const;
    void updateWorldLabel();
    void updatePresetCombo();

    ConfigDocument* m_document;
    ConfigForm* m_form;
    QComboBox* m_presetCombo;
    QToolButton* m_sourceButton = nullptr;
    QLabel* m_worldLabel;
    QTabWidget* m_tabs;
    QPlainTextEdit* m_yamlEdit;
    QLabel* m_yamlState;
    QPushButton* m_applyButton;
    QPushButton* m_revertButton;
    QLabel* m_problemsLabel;
    QListView* m_problemsView;
    DiagnosticModel* m_diagnostics;
    QTimer* m_yamlCheckTimer;

    QList<Diagnostic> m_configDiagnostics; ///< of the document's config, anchored in its YAML text
    QList<Diagnostic> m_textDiagnostics; ///< of the YAML tab's text while it differs from the config
    QList<Diagnostic> m_synthesisDiagnostics;
    bool m_yamlDirty = false; ///< the YAML tab holds user text not yet applied
    bool m_settingText = false;
};

} // namespace stagecraft
