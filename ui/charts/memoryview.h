// SPDX-License-Identifier: MIT
#pragma once

#include "charts/memorychartdata.h"
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
/// an optional comparison with a second class (default: the last stage), a cursor whose step lists the live
/// buffers in a side table (MemoryModel), and CSV export. Down-sampling runs in a worker (LatestRun): results of
/// superseded requests are dropped.
///
/// Embed: `auto* v = new MemoryView; window->addResultView(v, tr("Memory"), "memory");` then setResult().
class MemoryView : public ResultView
{
    Q_OBJECT
public:
    explicit MemoryView(QWidget* parent = nullptr);
    ~MemoryView() override;

    void setResult(std::shared_ptr<const SynthesisResult> result) override;
    void setStale(bool stale) override;

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
    /// True while a down-sampling request is running or queued.
    bool isUpdating() const;
    /// False while the chart of the latest request is still being built.
    bool isSettled() const override;

    MemoryModel* model() const;
    MemoryChartView* chartView() const;
    QTableView* table() const;
    QLabel* cursorTitle() const;

Q_SIGNALS:
    /// The chart shows the data of the latest request.
    void chartDataAvailable();

private:
    void requestChart();
    void applyChart(const MemoryChartData& data);
    void updateCursor();
    void exportCsvInteractively();
    QString className(int classIndex) const;

    std::shared_ptr<const SynthesisResult> m_result;
    MemoryModel* m_model;
    QSortFilterProxyModel* m_proxy;
    MemoryChartView* m_chart;
    QTableView* m_table;
    QComboBox* m_classCombo;
    QSpinBox* m_rankSpin;
    QLabel* m_rankClassLabel;
    QCheckBox* m_compareCheck;
    QComboBox* m_compareCombo;
    QPushButton* m_exportButton;
    QLabel* m_cursorTitle;
    QLabel* m_legend;
    QLabel* m_staleBanner;
    LatestRun m_run;
    qint64 m_pinnedStep = -1;
    qint64 m_hoverStep = -1;
    bool m_syncing = false;
};

} // namespace stagecraft
