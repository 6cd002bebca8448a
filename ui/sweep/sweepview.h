// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "session/latestrun.h"
#include "sweep/sweepplan.h"
#include "widgets/resultview.h"

#include <memory>
#include <optional>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QToolButton;
class QAction;
class QSortFilterProxyModel;
class QSpinBox;
class QTabWidget;
class QTableView;
class QTreeView;

namespace stagecraft {

class SweepChartView;
class SweepModel;
class SweepProgress;
class SweepRejectedModel;

/// The Sweep tab: ranks every (dp, tp, pp, cp, ep, micro-batch, recompute, ZeRO) plan of the current config for a
/// GPU count (core sweep(), quick estimate) and shows them as a step time vs peak memory scatter with the Pareto
/// front (SweepChartView), a sortable table of the fitting plans (SweepModel) and the rejected ones grouped by reason
/// (SweepRejectedModel). setResult() only remembers the config: a sweep takes seconds, so it runs when asked
/// (runSweep(), the "Run sweep" button), in a worker (LatestRun), cancellable; results of cancelled or superseded
/// runs are dropped and the previous sweep stays shown. Clicking a point or
/// activating a row emits planChosen() with the current config set to that plan.
///
/// For an inference config the sweep ranks serving plans (dp, tp, pp, ep) by output tokens/s per GPU: the micro-batch
/// field gives way to a TPOT limit (tpotLimitEdit(), SweepOptions::tpotLimitS), the tables show the serving columns
/// (SweepModel) sorted by throughput, and the chart plots throughput against TPOT with the limit (SweepChartView).
///
/// Embed: `addResultView(new SweepView(this), tr("Sweep"), "sweep")`, then connect planChosen to
/// `document->edit(config, tr("Load sweep plan"))`.
class SweepView : public ResultView
{
    Q_OBJECT
public:
    explicit SweepView(QWidget* parent = nullptr);
    ~SweepView() override;

    void setResult(std::shared_ptr<const SynthesisResult> result) override;
    void setStale(bool stale) override;
    /// Marks the baseline's plan on the chart when the shown sweep has it (same inputs, same GPU count).
    void setBaseline(std::shared_ptr<const SynthesisResult> baseline) override;

    /// Starts a sweep of the current config on gpusSpin() GPUs with the micro-batch sizes of microBatchEdit() (an
    /// inference config: under the TPOT limit of tpotLimitEdit()), cancelling a running one. False (the status line
    /// says why) when there is no config, its GPU is unknown or the micro-batch list (the TPOT limit) does not parse.
    bool runSweep();
    /// Stops the running sweep; its partial result is dropped and the previous sweep stays shown.
    void cancel();
    /// True from runSweep() until the sweep's result is shown, it fails, or cancel().
    bool isRunning() const;
    /// False while a sweep runs (settled() follows its result, failure or cancel()).
    bool isSettled() const override;

    /// The shown sweep (null before the first one finished).
    std::shared_ptr<const SweepResult> sweepResult() const;
    /// The config the shown sweep ran on.
    const Config& sweepConfig() const;
    /// Wall time of the shown sweep, seconds.
    double sweepDurationS() const;

    /// Emits planChosen() for `plan` of the shown sweep. False when it does not exist or there is no config.
    bool choosePlan(SweepPlanRef plan);
    /// Emits planChosen() for row `row` of model() (rank order).
    bool chooseRow(int row);

    SweepModel* model() const;
    SweepRejectedModel* rejectedModel() const;
    QSortFilterProxyModel* proxyModel() const;
    SweepChartView* chartView() const;
    QTableView* table() const;
    QTreeView* rejectedTree() const;
    QSpinBox* gpusSpin() const;
    QLineEdit* microBatchEdit() const;
    /// The TPOT limit in milliseconds (empty or 0: none); shown for inference configs only.
    QLineEdit* tpotLimitEdit() const;
    QPushButton* runButton() const;
    QProgressBar* progressBar() const;
    QLabel* statusLabel() const;
    QLabel* legendLabel() const;

Q_SIGNALS:
    /// The user picked a plan: `config` is the current config with the plan's parallelism and training fields.
    void planChosen(stagecraft::Config config);
    void sweepStarted();
    /// A sweep finished and is shown.
    void sweepFinished();
    /// A cancelled or superseded sweep has stopped; `interrupted` is true when the core stopped it early.
    void sweepCancelled(bool interrupted);
    /// A sweep could not run (bad GPU count...); the previous sweep stays shown.
    void sweepFailed(const QString& message);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Outcome
    {
        std::shared_ptr<const SweepResult> result;
        double durationS = 0;
    };

    void showOutcome(const Outcome& outcome, const Config& config);
    void setRunning(bool running);
    void updateCurrentPlan();
    /// Shows the micro-batch field for a training config, the TPOT limit for an inference config.
    void updateControls();
    /// Columns and sort order of the tables for the shown sweep (training or serving).
    void updateColumns();
    /// Serving: widens the rejected plans' reason column to its longest text where the tree has room (the core's
    /// reasons run to 60 characters); training keeps the fixed width.
    void fitReasonColumn();
    void updateBanner();
    void setStatus(const QString& text, bool error = false);
    void fail(const QString& message);
    QString summary() const;

public:
    /// The status line of sweep `r` that took `durationS`: plans, how many fit, why the others do not (a failed
    /// estimate with its most common reason).
    static QString summaryOf(const SweepResult& r, double durationS);

    std::optional<Config> m_config;
    std::optional<Config> m_baselineConfig;
    Config m_sweepConfig;
    std::shared_ptr<const SweepResult> m_sweep;
    double m_sweepDurationS = 0;
    SweepModel* m_model;
    SweepRejectedModel* m_rejectedModel;
    QSortFilterProxyModel* m_proxy;
    SweepChartView* m_chart;
    QTableView* m_table;
    QTreeView* m_rejectedTree;
    QTabWidget* m_tabs;
    QSpinBox* m_gpusSpin;
    QLabel* m_microBatchLabel;
    QLineEdit* m_microBatchEdit;
    QLabel* m_tpotLimitLabel;
    QLineEdit* m_tpotLimitEdit;
    QLabel* m_hint;
    QPushButton* m_runButton;
    /// "Also try" menu: FP8, the other all-to-all overlap setting, the balanced split (SweepOptions).
    QToolButton* m_tryButton;
    QAction* m_tryFp8;
    QAction* m_tryOverlap;
    QAction* m_trySplit;
    QProgressBar* m_progressBar;
    QLabel* m_statusLabel;
    QLabel* m_banner;
    QLabel* m_legend;
    SweepProgress* m_progress = nullptr; ///< of the running sweep
    LatestRun m_run; ///< declared after m_progress: destroyed (waiting for the worker) first
    bool m_gpusEdited = false;
    bool m_syncing = false;
    bool m_stale = false;
    bool m_servingColumns = false; ///< the tables show a serving sweep's columns
    int m_reasonWidth = 0; ///< serving: what the reason column's texts need, pixels
};

} // namespace stagecraft
