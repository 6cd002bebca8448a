// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"

#include <QObject>
#include <QString>
#include <memory>
#include <optional>

class QUndoStack;

namespace stagecraft {

struct SynthesisResult;

/// The config being edited: its value, where it came from (a file or a preset), the plan pinned as its baseline,
/// and the undo history of its edits. Every change goes through edit() or setBaseline() as an undoable command, or
/// through reset() which starts a new history.
///
/// The baseline is saved beside the file, as a config file of its own (baselinePath(): `plan.yaml` keeps its
/// baseline in `plan.baseline.yaml`), so that both stay plain configs the command line reads as they are; the
/// result is not saved but synthesized again from that config after a load (adoptBaselineResult()).
class ConfigDocument : public QObject
{
    Q_OBJECT
public:
    /// The pinned plan: its config, and its synthesis once there is one (null while it is synthesized again
    /// after a load). No config: no baseline.
    struct Baseline
    {
        std::optional<Config> config;
        std::shared_ptr<const SynthesisResult> result;
    };

    explicit ConfigDocument(QObject* parent = nullptr);
    ~ConfigDocument() override;

    const Config& config() const;
    QUndoStack* undoStack() const;

    /// The YAML file this document is saved to; empty for a document made from a preset and not yet saved.
    QString filePath() const;
    /// The preset the document was made from, empty when it was opened from a file.
    QString presetName() const;
    /// For titles: the file's name, or "<preset> (preset)" for an unsaved preset document (the preset last picked:
    /// the config's name when it names a preset).
    QString displayName() const;
    /// The file name diagnostics about this document carry (the path, or "<preset NAME>").
    QString diagnosticFileName() const;
    bool isModified() const;

    /// Starts a new document: replaces the config, forgets the undo history, and marks it unmodified. `baseline`
    /// is its pinned plan's config (read from baselinePath()); its result is null until adoptBaselineResult().
    void reset(const Config& config, const QString& filePath, const QString& presetName = {},
        const std::optional<Config>& baseline = std::nullopt);
    /// Points the document at `filePath`, keeping the config, with a new undo history. `modified`: marks it
    /// modified (overrides applied to a file's config); false for a file with errors that is opened (the config stays
    /// the last good one until the user fixes the text; opening never makes a document that asks to be saved).
    void adoptFilePath(const QString& filePath, bool modified = true);
    /// An undoable edit that replaces the config with `config` (no-op when equal). Consecutive edits with the same
    /// `fieldId` >= 0 merge into one undo step; -1 never merges.
    void edit(const Config& config, const QString& description, int fieldId = -1);
    /// Writes the config as YAML (toYaml) to `filePath`, and the baseline's config to baselinePath(filePath) (or
    /// removes a baseline file left there when there is no baseline); on success the document is that file and
    /// unmodified.
    bool saveAs(const QString& filePath, QString* errorMessage);

    const Baseline& baseline() const;
    /// An undoable change of the baseline (Edit > Pin as Baseline, Clear Baseline): `result` (null: none) and its
    /// config become the baseline. No-op when `result` is the baseline already.
    void setBaseline(std::shared_ptr<const SynthesisResult> result, const QString& description);
    /// Completes a baseline that has a config and no result yet (after a load) with `result`, when `result` is of
    /// that config; not an undo step, the document's state is the same. Returns whether it was taken.
    bool adoptBaselineResult(std::shared_ptr<const SynthesisResult> result);
    /// Where the baseline of the file `filePath` is kept: "<folder>/<name without suffix>.baseline.yaml".
    static QString baselinePath(const QString& filePath);

Q_SIGNALS:
    void configChanged();
    /// A new document (reset()); configChanged() is emitted as well.
    void documentReset();
    void filePathChanged();
    void modifiedChanged(bool modified);
    /// The baseline has changed: pinned, cleared (also by undo or redo), loaded, or its result has arrived.
    void baselineChanged();

private:
    friend class BaselineCommand;
    friend class ConfigEditCommand;
    void apply(const Config& config);
    void applyBaseline(Baseline baseline);
    QString currentPreset() const;

    Config m_config;
    QUndoStack* m_undoStack;
    QString m_filePath;
    QString m_presetName;
    Baseline m_baseline;
    /// The last result adopted for a loaded baseline: undoing back to that baseline finds it here instead of
    /// synthesizing it again.
    std::shared_ptr<const SynthesisResult> m_adoptedBaseline;
};

} // namespace stagecraft
