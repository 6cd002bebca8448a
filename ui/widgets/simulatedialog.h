// SPDX-License-Identifier: MIT
#pragma once

#include "simulate/astrasimrunner.h"

#include <QDialog>
#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QThreadPool>
#include <QTimer>
#include <memory>
#include <optional>

class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;

namespace stagecraft {

class SimulationModel;
struct StepEstimate;
struct SimulationComparison;
struct SynthesisResult;

/// Simulate with ASTRA-sim: runs the analytical simulator on an exported trace set (runAstraSim) in a worker, with
/// progress (ranks finished), the elapsed time and Cancel (which kills the simulator's process group), and shows
/// the pass/fail line and, per stage, ASTRA-sim's finish time and exposed communication next to our step-time
/// estimate (SimulationModel). The configs come from the result the traces were exported from; the run folder
/// `<directory>/<name>.astrasim/` keeps them with cmd.sh to repeat the run by hand.
class SimulateDialog : public QDialog
{
    Q_OBJECT
public:
    /// What to simulate. `result` must not be null and must be the result the trace set was exported from.
    struct Request
    {
        std::shared_ptr<const SynthesisResult> result;
        QString directory; ///< the trace folder
        QString name; ///< the trace set's name
        QString binary; ///< the simulator (path or name in PATH)
        bool trackLocalMem = false; ///< the traces hold tensor lists; ask ASTRA-sim for the memory peak
        double timeoutS = 300;
    };

    explicit SimulateDialog(Request request, QWidget* parent = nullptr);
    /// Cancels a running simulation and waits for the worker (it kills the simulator within about two seconds).
    ~SimulateDialog() override;

    /// Starts the run (no-op while one runs).
    void start();
    /// Asks the running simulation to stop: the simulator's process group is killed.
    void cancel();
    bool isRunning() const;
    /// The last finished run, if any (also after a cancel or a failure to start).
    std::optional<AstraSimResult> lastResult() const;
    /// The pass/fail line shown above the table.
    QString statusText() const;
    SimulationModel* model() const;

Q_SIGNALS:
    /// A run ended: `passed` is true when ASTRA-sim met all four pass criteria.
    void simulationFinished(bool passed);

protected:
    void reject() override;

private:
    struct Outcome
    {
        std::optional<AstraSimResult> simulation;
        std::shared_ptr<const SimulationComparison> comparison;
        std::shared_ptr<const StepEstimate> estimate;
        QString error; ///< nothing ran (no GPU preset, no estimate, a config ASTRA-sim cannot model)
    };

    void onFinished();
    void setRunning(bool running);
    void updateElapsed();

    Request m_request;
    QLabel* m_info;
    QProgressBar* m_progress;
    QLabel* m_elapsed;
    QLabel* m_status;
    QLabel* m_details;
    QTableView* m_table;
    SimulationModel* m_model;
    QLabel* m_summary;
    QPushButton* m_cancelButton;
    QPushButton* m_runAgainButton;
    QPushButton* m_openFolderButton;
    QPushButton* m_closeButton;
    QThreadPool m_pool;
    QFutureWatcher<void> m_watcher;
    bool m_running = false; ///< a run was started and its outcome is not shown yet
    QTimer m_clock;
    QElapsedTimer m_started;
    std::shared_ptr<Outcome> m_outcome;
    std::optional<AstraSimResult> m_lastResult;
};

} // namespace stagecraft
