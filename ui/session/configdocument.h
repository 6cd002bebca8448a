// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"

#include <QObject>
#include <QString>

class QUndoStack;

namespace stagecraft {

/// The config being edited: its value, where it came from (a file or a preset), and the undo history of its
/// edits. Every change goes through edit() as an undoable command, or through reset() which starts a new history.
class ConfigDocument : public QObject
{
    Q_OBJECT
public:
    explicit ConfigDocument(QObject* parent = nullptr);
    ~ConfigDocument() override;

    const Config& config() const;
    QUndoStack* undoStack() const;

    /// The YAML file this document is saved to; empty for a document made from a preset and not yet saved.
    QString filePath() const;
    /// The preset the document was made from, empty when it was opened from a file.
    QString presetName() const;
    /// For titles: the file's name, or "<preset> (preset)" for an unsaved preset document.
    QString displayName() const;
    /// The file name diagnostics about this document carry (the path, or "<preset NAME>").
    QString diagnosticFileName() const;
    bool isModified() const;

    /// Starts a new document: replaces the config, forgets the undo history, and marks it unmodified.
    void reset(const Config& config, const QString& filePath, const QString& presetName = {});
    /// Points the document at `filePath` and marks it modified, keeping the config (used when a file with errors
    /// is opened: the config stays the last good one until the user fixes the text).
    void adoptFilePath(const QString& filePath);
    /// An undoable edit that replaces the config with `config` (no-op when equal). Consecutive edits with the same
    /// `fieldId` >= 0 merge into one undo step; -1 never merges.
    void edit(const Config& config, const QString& description, int fieldId = -1);
    /// Writes the config as YAML (toYaml) to `filePath`; on success the document is that file and unmodified.
    bool saveAs(const QString& filePath, QString* errorMessage);

Q_SIGNALS:
    void configChanged();
    /// A new document (reset()); configChanged() is emitted as well.
    void documentReset();
    void filePathChanged();
    void modifiedChanged(bool modified);

private:
    friend class ConfigEditCommand;
    void apply(const Config& config);

    Config m_config;
    QUndoStack* m_undoStack;
    QString m_filePath;
    QString m_presetName;
};

} // namespace stagecraft
