// SPDX-License-Identifier: MIT
#pragma once

#include "serving/servingsimulation.h"
#include "serving/slosweep.h"
#include "session/latestrun.h"
#include "widgets/resultview.h"

#include <memory>

class QChart;
class QChartView;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace stagecraft {

/// The Serving tab: requests over time for a serving config (core's simulateServing()). Controls set the arrival
/// rate (Poisson at that rate unless the config reads a trace or sets another process), the number of requests and
/// the TTFT and TPOT bounds; "Simulate" runs it in a worker (LatestRun; Cancel stops it), and the tab shows the
/// latencies' percentiles, goodput and KV figures, then three Qt Charts: running and waiting requests over time,
/// KV-cache occupancy and preemptions over time, and the cumulative distribution of TTFT, TPOT and end-to-end
/// latency. "Size for rate" runs the SLO sweep (sloSweep()): replica plans, colocated and disaggregated, ranked by
/// the GPUs they need for the rate within the bounds, in a table. A training config shows a hint instead.
class ServingView : public ResultView
{
    Q_OBJECT
public:
    explicit ServingView(QWidget* parent = nullptr);
    ~ServingView() override;

    void setResult(std::shared_ptr<const SynthesisResult> result) override;
    bool isSettled() const override;

    /// Sets the rate control (requests per second) and, when `simulate`, runs the simulation.
    void setRequestRate(double rate, bool simulate = true);
    /// Runs the SLO sweep for the current controls.
    void sizeForRate();
    /// The simulation shown (null before the first finished run).
    std::shared_ptr<const ServingSimulation> simulation() const;

private:
    void simulate();
    void showSimulation(std::shared_ptr<const ServingSimulation> s, const QString& error);
    void showSweep(const SloSweepResult& r);
    Config configForControls() const;

    std::shared_ptr<const SynthesisResult> m_result;
    std::shared_ptr<const ServingSimulation> m_simulation;
    LatestRun m_run;
    LatestRun m_sweepRun;
    QDoubleSpinBox* m_rate;
    QSpinBox* m_requests;
    QDoubleSpinBox* m_ttftMs;
    QDoubleSpinBox* m_tpotMs;
    QPushButton* m_simulateButton;
    QPushButton* m_sizeButton;
    QPushButton* m_cancelButton;
    QProgressBar* m_progress;
    QLabel* m_summary;
    QChart* m_overTime;
    QChart* m_kvChart;
    QChart* m_latencyChart;
    QChartView* m_overTimeView;
    QChartView* m_kvView;
    QChartView* m_latencyView;
    QTableWidget* m_sweepTable;
    QLabel* m_sweepLabel;
};

} // namespace stagecraft
