// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/diagnostic.h"

#include <QHash>
#include <QList>
#include <QSet>
#include <QWidget>
#include <functional>
#include <vector>

class QFormLayout;
class QGroupBox;
class QLabel;
class QPushButton;

namespace stagecraft {

/// The config as form fields grouped like the YAML (model, training, parallelism, cluster). Each field is bound to
/// its YAML key; a user edit emits fieldEdited() with the whole edited config, and problems reported for a key are
/// marked on its field (dynamic property "severity" = "error"/"warning", styled red/amber, message as tooltip).
class ConfigForm : public QWidget
{
    Q_OBJECT
public:
    explicit ConfigForm(QWidget* parent = nullptr);
    ~ConfigForm() override;

    /// Shows `config` in the fields without emitting fieldEdited().
    void setConfig(const Config& config);
    /// Marks the fields named by the diagnostics' key paths and clears the marks of all others.
    void setDiagnostics(const QList<Diagnostic>& diagnostics);

    /// The editor widget of YAML key `keyPath` ("parallelism.tp"), or null when the form has no such field.
    QWidget* fieldWidget(const QString& keyPath) const;
    /// Sets the field of `keyPath` from its text form ("4", "moe", "true") as if the user had typed it, so the edit
    /// is emitted. False when there is no such field or the text is not one of its values.
    bool setFieldText(const QString& keyPath, const QString& text);
    /// Scrolls to and focuses the field of `keyPath`; false when there is none.
    bool focusField(const QString& keyPath);

    /// The "Make servable" button of a serving config (enabled while training-only keys are set; servableConfig()).
    QPushButton* servableButton() const;

Q_SIGNALS:
    /// The user changed a field; `config` is the config with that change. `mergeId` (>= 0) is the same for the
    /// keystrokes of one entry in one field (each text a prefix of the next, or the reverse: typing or deleting),
    /// new for every other edit, so ConfigDocument::edit() merges typing into one undo step and nothing else.
    void fieldEdited(const stagecraft::Config& config, const QString& description, int mergeId);

protected:
    /// Ctrl+Z and Ctrl+Shift+Z in a field are the document's Undo and Redo (Edit menu), not the field's text undo.
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Field;
    void addField(QFormLayout* layout, Field field);
    void onEdited(int fieldId, qint64 value, const QString& text);
    void updateRowVisibility();
    void updateServable();

    /// A group box and its titles for the two workloads ("Training" shows only the precision for inference).
    struct GroupTitle
    {
        QGroupBox* box;
        QString training;
        QString inference;
    };

    std::vector<Field> m_fields;
    std::vector<GroupTitle> m_groupTitles;
    QHash<QString, int> m_fieldByKey;
    Config m_config;
    int m_mergeId = 0;
    int m_lastEditField = -1; ///< the field of the last user edit, and its text (typing merges)
    QString m_lastEditText;
    /// Rows the user edited that stay on screen although their value would hide them (a row never disappears
    /// under the mouse), until the workload or the family changes.
    QSet<int> m_pinnedRows;
    std::pair<Workload, Family> m_pinnedFor {};
    QLabel* m_servableLabel = nullptr;
    QPushButton* m_servableButton = nullptr;
};

} // namespace stagecraft
