// SPDX-License-Identifier: MIT
#pragma once

#include "session/latestrun.h"
#include "timeline/measuredoverlay.h"
#include "timeline/timelinedata.h"
#include "widgets/resultview.h"

#include <memory>

class QComboBox;
class QFrame;
class QLabel;
class QLineEdit;
class QPushButton;

namespace stagecraft {

class Int64SpinBox;
class TimelineChart;

/// The Timeline tab: the step-time estimate's schedule of one rank (all ranks of a pipeline stage share it) as a
/// Gantt chart with a compute and a communication lane, above the compute lanes of every stage (the pipeline
/// picture); a summary line (step time, compute busy, exposed communication, bubble of the class, MFU of the
/// plan) and an export of the whole schedule as Chrome trace JSON (Perfetto, chrome://tracing).
///
/// The estimate runs in a worker (LatestRun): results of superseded requests are dropped. When the estimate fails (an
/// unknown GPU, a GPU without the precision...) the tab says why.
///
/// Embed: `auto* v = new TimelineView; window->addResultView(v, tr("Timeline"), "timeline");` then setResult().
class TimelineView : public ResultView
{
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);
    ~TimelineView() override;

    void setResult(std::shared_ptr<const SynthesisResult> result) override;
    void setStale(bool stale) override;

    /// Shows rank class `classIndex` (a pipeline stage); the rank picker moves to its example rank.
    void showClass(int classIndex);
    /// Shows the class of `rank` (clamped to the world).
    void showRank(qint64 rank);
    int currentClass() const;
    qint64 currentRank() const;

    /// The latest estimate and schedule (null before the first one arrives). Check `ok` and `error`.
    std::shared_ptr<const TimelineData> timelineData() const;
    /// Writes the schedule of every stage as Chrome trace JSON (chromeTraceJson + writeChromeTrace), on the calling
    /// thread (the Export button does the same in the worker). False with `error` set when there is no estimate
    /// or the file cannot be written.
    bool exportChromeTrace(const QString& path, QString* error = nullptr) const;
    /// True while an estimate is running or queued.
    bool isUpdating() const;
    /// False while the estimate of the shown result runs.
    bool isSettled() const override;

    /// Overlays a measured PyTorch profiler trace of one rank (the "Overlay measured trace..." button): read and
    /// compared in a worker (estimate/tracecompare.h), then drawn as two lanes under the shown stage's streams with
    /// per-kind totals in the comparison line. Kept across results (re-compared with each new estimate) until
    /// clearMeasuredTrace(). measuredTraceLoaded() says when it is done; measuredTraceError() why it failed.
    void loadMeasuredTrace(const QString& path);
    void clearMeasuredTrace();
    std::shared_ptr<const MeasuredOverlay> measuredOverlay() const;
    QString measuredTraceError() const;
    /// The measured-vs-ours line (hidden without an overlay).
    QLabel* comparisonLabel() const;

    TimelineChart* chart() const;
    QLabel* summaryLabel() const;
    /// Says why there is no timeline (hidden when there is one).
    QLabel* messageLabel() const;

Q_SIGNALS:
    /// The estimate of the latest request arrived (check timelineData()->ok).
    void timelineAvailable();
    /// A measured trace was read and compared, or failed (measuredTraceError()).
    void measuredTraceLoaded();

private:
    void requestTimeline();
    void applyTimeline(std::shared_ptr<const SynthesisResult> result, std::shared_ptr<const TimelineData> data);
    void updateSummary();
    void exportInteractively();
    void overlayInteractively();
    void requestOverlay();
    void updateComparison();

    std::shared_ptr<const SynthesisResult> m_result;
    std::shared_ptr<const TimelineData> m_data;
    std::shared_ptr<const SynthesisResult> m_dataResult; ///< the result m_data was estimated from
    TimelineChart* m_chart;
    QComboBox* m_classCombo;
    Int64SpinBox* m_rankSpin;
    QLabel* m_rankClassLabel;
    QPushButton* m_fitButton;
    QLineEdit* m_findEdit = nullptr; ///< Find: outlines the matching bars, Return shows the next
    QLabel* m_findLabel = nullptr;
    QPushButton* m_exportButton;
    QPushButton* m_overlayButton;
    QPushButton* m_clearOverlayButton;
    QLabel* m_comparison;
    LatestRun m_overlayRun; ///< reading and comparing a measured trace
    QString m_overlayPath;
    QString m_overlayError;
    std::shared_ptr<const MeasuredOverlay> m_overlay;
    QLabel* m_summary;
    QLabel* m_message;
    QLabel* m_legend;
    QLabel* m_hint;
    QLabel* m_staleBanner;
    QFrame* m_card; ///< the chart, legend and hint
    LatestRun m_run;
    LatestRun m_exportRun; ///< the Export button's file writing
    int m_class = 0;
    bool m_syncing = false;
    bool m_exporting = false;
};

} // namespace stagecraft
