// SPDX-License-Identifier: MIT
#pragma once

#include "sweep/sweepplan.h"

#include <QChartView>
#include <QColor>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QCategoryAxis;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace stagecraft {

/// Step time against peak memory per GPU for every plan of a sweep: fitting plans in blue, out-of-memory plans in
/// grey, the HBM capacity as a vertical dashed line, the Pareto front of the fitting plans as an orange staircase
/// (the best step time reachable within a memory budget) with its points, and the current config's plan as a star.
/// The time axis is logarithmic when the drawn times span more than a factor of 20. Out-of-memory plans beyond
/// 2.5 x HBM are not drawn (they would squeeze the fitting ones; the legend counts them). Hovering shows a plan's
/// tooltip; a click emits planClicked(). Series are refilled with one QXYSeries::replace() each.
///
/// A serving sweep (SweepResult::serving) is drawn as the latency-throughput trade-off instead: output tokens/s per GPU
/// against the time per output token, the fitting plans in blue, the plans over the TPOT limit as open blue circles,
/// out-of-memory plans in grey, the TPOT limit as a vertical dashed line, the Pareto front of the fitting plans (the
/// best throughput reachable within a TPOT) and the best plan (rank 1) as a labelled green diamond. Rejected plans
/// slower than 2.5 x the larger of the limit and the slowest fitting plan are not drawn (the legend counts them). The
/// throughput axis is logarithmic when it spans more than a factor of 20.
class SweepChartView : public QChartView
{
    Q_OBJECT
public:
    explicit SweepChartView(QWidget* parent = nullptr);
    ~SweepChartView() override;

    /// Shows `result` (null: the empty chart) with its Pareto front `pareto` (indices into `ranked`, by ascending
    /// peak), headed by `title`.
    void setSweep(std::shared_ptr<const SweepResult> result, const std::vector<int>& pareto, const QString& title);
    /// Marks `plan` (invalid: none) as the current config's plan.
    void setCurrentPlan(SweepPlanRef plan);
    SweepPlanRef currentPlan() const;
    /// Marks `plan` (invalid: none) as the pinned baseline's plan (a square).
    void setBaselinePlan(SweepPlanRef plan);
    SweepPlanRef baselinePlan() const;
    /// Rings `plan` (invalid: none), e.g. the row selected in a table.
    void setHighlightedPlan(SweepPlanRef plan);

    /// The drawn plan nearest to `viewPos` (viewport coordinates) within 8 px; invalid when there is none.
    SweepPlanRef planAt(const QPointF& viewPos) const;
    /// Where `plan` is drawn in viewport coordinates; nullopt when it is not drawn.
    std::optional<QPointF> viewPosition(SweepPlanRef plan) const;
    /// The hover text of `plan`: the plan, step time, MFU (serving: tokens/s per GPU, TPOT, TTFT), peak memory and
    /// where it stands (rich text).
    QString toolTipText(SweepPlanRef plan) const;

    /// The legend as rich text (a swatch and the name of every shown series); the view shows it under the chart.
    QString legendHtml() const;
    /// True when the vertical axis (step time; serving: tokens/s per GPU) is logarithmic.
    bool isTimeAxisLogarithmic() const;
    /// Out-of-memory plans not drawn because their peak (serving: their TPOT) is beyond the axis.
    int hiddenOutOfMemoryCount() const;
    /// Serving: plans over the TPOT limit not drawn because their TPOT is beyond the axis.
    int hiddenOverTpotLimitCount() const;
    /// True when the shown sweep is a serving sweep (the axes are TPOT and tokens/s per GPU).
    bool isServing() const;
    QScatterSeries* fittingSeries() const;
    QScatterSeries* outOfMemorySeries() const;
    /// Serving: the plans over the TPOT limit.
    QScatterSeries* overTpotLimitSeries() const;
    QLineSeries* paretoSeries() const;
    QScatterSeries* paretoPointSeries() const;
    QScatterSeries* currentSeries() const;
    /// Serving: the best plan (rank 1).
    QScatterSeries* bestSeries() const;
    QLineSeries* hbmSeries() const;
    /// Serving: the TPOT limit, empty without a limit or when it is beyond the axis.
    QLineSeries* tpotLimitSeries() const;
    /// The horizontal axis: peak memory per GPU; serving: TPOT.
    QValueAxis* memoryAxis() const;
    /// The vertical axis: step time; serving: tokens/s per GPU.
    QCategoryAxis* timeAxis() const;

Q_SIGNALS:
    void planClicked(stagecraft::SweepPlanRef plan);
    /// The plan under the mouse changed (invalid: none).
    void planHovered(stagecraft::SweepPlanRef plan);

protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    QPointF valueOf(const SweepCandidate& plan) const;
    /// Scales, drawn rejected plans, the vertical line and the legend of a training or a serving sweep.
    void setTrainingScales(const SweepResult& r);
    void setServingScales(const SweepResult& r);
    /// The vertical axis over [lo, hi] (display units; logarithmic when hi / lo > 20): ticks at 1-2-5 steps (log) or
    /// at a nice interval (linear). Returns the axis range (log10 of the values when logarithmic).
    std::pair<double, double> setVerticalTicks(double lo, double hi);
    void setMarker(QScatterSeries* series, SweepPlanRef plan);
    void updateHitCache() const;

    struct LegendEntry
    {
        QColor color;
        QString symbol; ///< HTML
        QString name;
    };
    struct Hit
    {
        SweepPlanRef plan;
        QPointF viewPos;
    };

    std::shared_ptr<const SweepResult> m_result;
    /// Indices into `rejected` of the drawn rejected plans in series order: out of memory, then over the TPOT limit.
    std::vector<int> m_drawnRejected;
    std::vector<char> m_paretoMember;
    SweepPlanRef m_current;
    SweepPlanRef m_baseline;
    SweepPlanRef m_highlighted;
    SweepPlanRef m_hovered;
    int m_hiddenOutOfMemory = 0;
    int m_hiddenOverLimit = 0;
    bool m_serving = false;
    bool m_logTime = false; ///< the vertical axis is logarithmic
    double m_unitBytes = 1;
    double m_unitSeconds = 1; ///< of the step time (serving: TPOT) axis
    QScatterSeries* m_fitting;
    QScatterSeries* m_oom;
    QScatterSeries* m_overLimit;
    QLineSeries* m_pareto;
    QScatterSeries* m_paretoPoints;
    QScatterSeries* m_currentMarker;
    QScatterSeries* m_bestMarker;
    QScatterSeries* m_baselineMarker;
    QScatterSeries* m_highlightMarker;
    QScatterSeries* m_hoverMarker;
    QLineSeries* m_hbm;
    QLineSeries* m_tpotLimit;
    QValueAxis* m_axisX;
    QCategoryAxis* m_axisY;
    std::vector<LegendEntry> m_legendEntries;
    mutable std::vector<Hit> m_hits;
    mutable bool m_hitsValid = false;
};

} // namespace stagecraft
