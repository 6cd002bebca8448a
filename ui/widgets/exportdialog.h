// SPDX-License-Identifier: MIT
#pragma once

#include "export/traceexporter.h"

#include <QDialog>
#include <QFutureWatcher>
#include <QThreadPool>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSpinBox;

namespace stagecraft {

class Int64SpinBox;
class SimulateDialog;

/// File > Export Chakra Trace: writes the rank files and the communicator-group JSON of one synthesis result
/// (exportTrace) in a worker, with progress, cancel and a summary when it ends. The dialog exports the result it
/// was opened with, so later edits in the main window do not change a running export. A cancelled or failed
/// export leaves only complete files (exportTrace's contract); files of an earlier export with the same name are
/// replaced only when the user ticks "Replace".
///
/// "Simulate with ASTRA-sim..." runs ASTRA-sim's analytical simulator on the set just written (SimulateDialog). It
/// is enabled once a whole protobuf set has been exported and the simulator's binary is set; the binary is a
/// preference (QSettings "simulate/astrasimBinary" when `persistSettings`).
class ExportDialog : public QDialog
{
    Q_OBJECT
public:
    /// `result` must not be null. The default folder and name come from the last export (QSettings when
    /// `persistSettings`) or from the workload's name.
    explicit ExportDialog(
        std::shared_ptr<const SynthesisResult> result, bool persistSettings = true, QWidget* parent = nullptr);
    /// Cancels a running export and waits for it (the worker only ever leaves complete files).
    ~ExportDialog() override;

    void setDirectory(const QString& directory);
    QString directory() const;
    void setName(const QString& name);
    void setFormat(ChakraFileFormat format);
    /// Ranks [first, end) only; end = -1 for all ranks.
    void setRankRange(qint64 first, qint64 end);
    void setReplaceExisting(bool replace);
    /// The options the dialog's fields describe.
    ExportOptions options() const;
    /// Why the fields do not describe a valid export (empty when they do). Shown under the fields.
    QString validationMessage() const;

    /// Starts the export (no-op while one runs or when the fields are invalid; the reason is shown).
    void startExport();
    /// Asks the running export to stop after the rank files in flight.
    void cancelExport();
    bool isRunning() const;
    /// The summary of the last finished export (also after a cancel), if any.
    std::optional<ExportSummary> lastSummary() const;
    /// The text shown in the result area: the summary, the cancel note or the error.
    QString resultText() const;

    /// The ASTRA-sim binary (a path, or a name looked up in PATH) that "Simulate with ASTRA-sim..." runs.
    void setAstraSimBinary(const QString& binary);
    QString astraSimBinary() const;
    /// Why "Simulate with ASTRA-sim..." is disabled (empty when it is enabled); also its tooltip.
    QString simulateUnavailableReason() const;
    /// Opens the simulation of the last export and starts it; null (nothing opened) while it is unavailable.
    SimulateDialog* openSimulateDialog();

Q_SIGNALS:
    /// An export ended: `ok` is false on an error (resultText() says which); a cancel is ok with
    /// lastSummary()->cancelled set.
    void exportFinished(bool ok);

protected:
    void reject() override;

private:
    struct Outcome
    {
        std::optional<ExportSummary> summary;
        QString error;
    };

    void updateState();
    void updateSimulateState();
    void browse();
    void browseAstraSim();
    void onFinished();
    void setRunning(bool running);
    /// Files of an earlier export with this name that the export would replace, at most a few names.
    QStringList existingFiles(const ExportOptions& options, int limit) const;

    std::shared_ptr<const SynthesisResult> m_result;
    bool m_persistSettings;
    QLineEdit* m_directory;
    QPushButton* m_browse;
    QLineEdit* m_name;
    QComboBox* m_format;
    QRadioButton* m_allRanks;
    QRadioButton* m_someRanks;
    Int64SpinBox* m_firstRank;
    Int64SpinBox* m_endRank;
    QCheckBox* m_tensorLists;
    QCheckBox* m_ctrlAsData;
    QCheckBox* m_replace;
    QSpinBox* m_threads;
    QLabel* m_plan;
    QLabel* m_validation;
    QProgressBar* m_progress;
    QLabel* m_resultLabel;
    QDialogButtonBox* m_buttons;
    QPushButton* m_exportButton;
    QPushButton* m_cancelButton;
    QPushButton* m_openFolderButton;
    QPushButton* m_closeButton;
    QLineEdit* m_astrasim;
    QPushButton* m_browseAstrasim;
    QPushButton* m_simulateButton;
    QThreadPool m_pool;
    QFutureWatcher<void> m_watcher;
    bool m_running = false; ///< an export was started and its outcome is not shown yet
    /// Written by the worker of the current run (a cancelled QFuture drops results, so not through the promise).
    std::shared_ptr<Outcome> m_outcome;
    std::optional<ExportSummary> m_lastSummary;
    /// The options of the export that produced m_lastSummary (what a simulation reads).
    std::optional<ExportOptions> m_lastOptions;
    /// The options of the export in flight.
    ExportOptions m_runningOptions;
};

} // namespace stagecraft
