// SPDX-License-Identifier: MIT
#pragma once

#include "charts/memorychartdata.h"
#include "charts/memorytimes.h"
#include "kineto/memorytimeline.h"
#include "session/latestrun.h"
#include "widgets/resultview.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace stagecraft {

class MemoryChartView;
class MemoryModel;

/// The Memory tab: the memory timeline of one rank's class as stacked areas (MemoryChartView), the HBM capacity,
/// an optional comparison with a second class (default: the last stage), the pinned baseline's total of the same
/// stage (setBaseline(); its last stage when it has fewer) as a dashed line, a cursor whose step lists the live
/// buffers in a side table (MemoryModel), and CSV export. Down-sampling runs in a worker (LatestRun): results of
/// superseded requests are dropped.
///
/// The x axis is the program step or, on request (setXAxis(TimeAxis)), the estimated time in ms: each step sits at
/// the start of its node in the step-time estimate the Timeline tab shows, so a peak lines up with the Timeline's
/// same instant. That estimate runs in a second worker when the time axis is first asked for with a result (and
/// for the baseline); until it arrives the chart shows steps and says so, and the view is not settled.
///
/// Embed: `auto* v = new MemoryView; window->addResultView(v, tr("Memory"), "memory");` then setResult().
class MemoryView : public ResultView
{
    Q_OBJECT
public:
    explicit MemoryView(QWidget* parent = nullptr);
    ~MemoryView() override;

    /// The x axis of the chart.
    enum XAxis
    {
        StepAxis, ///< program step (node index, schedule order)
        TimeAxis ///< estimated start of each step's node, ms
    };
    Q_ENUM(XAxis)

    void setResult(std::shared_ptr<const SynthesisResult> result) override;
    void setStale(bool stale) override;
    void setBaseline(std::shared_ptr<const SynthesisResult> baseline) override;

    void setXAxis(XAxis axis);
    XAxis xAxis() const;
    /// The baseline's class drawn with the current class (-1: no baseline).
    int baselineClass() const;
    /// The estimate's times of the shown result (null until the time axis was asked for and they arrived).
    std::shared_ptr<const MemoryTimes> times() const;

    /// Shows rank class `classIndex` (a pipeline stage); the rank picker moves to its example rank.
    void showClass(int classIndex);
    /// Shows the class of `rank` (clamped to the world).
    void showRank(qint64 rank);
    /// Overlays the total of class `classIndex` (-1: no comparison).
    void setCompareClass(int classIndex);
    /// Moves the cursor to `step` and lists the buffers alive there; `pin` keeps it there when the mouse leaves.
    void setCursorStep(qint64 step, bool pin = true);
    /// Writes the shown class's full-resolution timeline as CSV (see saveMemoryCsv). False with `error` set on
    /// failure or when there is no result.
    bool exportCsv(const QString& path, QString* error = nullptr) const;

    int currentClass() const;
    int compareClass() const;
    qint64 cursorStep() const;
    /// True while a down-sampling request (or the estimate the time axis needs) is running or queued.
    bool isUpdating() const;
    /// False while the chart of the latest request is still being built, or the time axis waits for its estimate.
    bool isSettled() const override;

    /// Overlays a measured memory timeline: the raw JSON of PyTorch's profile.export_memory_timeline (plain or
    /// .gz, kineto/memorytimeline.h), read in a worker. One measured iteration (the first of
    /// setMeasuredIterations() equal parts of the recording) is stretched over ours, so the two iterations line up;
    /// both peaks are stated. Kept across results until clearMeasuredMemory(); measuredMemoryLoaded() says when it
    /// is done, measuredMemoryError() why it failed.
    void loadMeasuredMemory(const QString& path);
    void clearMeasuredMemory();
    /// How many training iterations the measured recording holds (1 by default).
    void setMeasuredIterations(int iterations);
    std::shared_ptr<const MeasuredMemoryTimeline> measuredMemory() const;
    QString measuredMemoryError() const;
    /// States the measured peak against ours (hidden without a measured timeline).
    QLabel* measuredNote() const;
    MemoryModel* model() const;
    MemoryChartView* chartView() const;
    QTableView* table() const;
    QLabel* cursorTitle() const;
    QComboBox* xAxisCombo() const;
    /// Says what the time axis waits for, or why it cannot be drawn (hidden otherwise).
    QLabel* axisNote() const;

Q_SIGNALS:
    /// The chart shows the data of the latest request.
    void chartDataAvailable();
    /// A measured memory timeline was read, or failed (measuredMemoryError()).
    void measuredMemoryLoaded();

private:
    void requestChart();
    void requestTimes();
    void applyChart(const MemoryChartData& data);
    void updateAxisNote();
    void emitIfSettled();
    QString baselineName(int baselineClass) const;
    void updateCursor();
    void exportCsvInteractively();
    void applyMeasured();
    QString className(int classIndex) const;

    std::shared_ptr<const SynthesisResult> m_result;
    std::shared_ptr<const SynthesisResult> m_baseline;
    /// The estimate's times of m_timesFor (a result or the baseline); null until computed.
    std::shared_ptr<const MemoryTimes> m_times;
    std::shared_ptr<const SynthesisResult> m_timesFor;
    std::shared_ptr<const MemoryTimes> m_baselineTimes;
    std::shared_ptr<const SynthesisResult> m_baselineTimesFor;
    MemoryModel* m_model;
    QSortFilterProxyModel* m_proxy;
    MemoryChartView* m_chart;
    QTableView* m_table;
    QComboBox* m_classCombo;
    QSpinBox* m_rankSpin;
    QLabel* m_rankClassLabel;
    QCheckBox* m_compareCheck;
    QComboBox* m_compareCombo;
    QComboBox* m_xAxisCombo;
    QLabel* m_axisNote;
    QPushButton* m_exportButton;
    QPushButton* m_measuredButton;
    QSpinBox* m_measuredIterations;
    QPushButton* m_clearMeasuredButton;
    QLabel* m_measuredNote;
    LatestRun m_measuredRun; ///< reading a measured memory timeline
    QString m_measuredPath;
    QString m_measuredError;
    std::shared_ptr<const MeasuredMemoryTimeline> m_measured;
    QLabel* m_cursorTitle;
    QLabel* m_legend;
    QLabel* m_staleBanner;
    LatestRun m_run;
    LatestRun m_timesRun; ///< the step-time estimate of the time axis
    XAxis m_xAxis = StepAxis;
    qint64 m_pinnedStep = -1;
    qint64 m_hoverStep = -1;
    bool m_syncing = false;
};

} // namespace stagecraft
