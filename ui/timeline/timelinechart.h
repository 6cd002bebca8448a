// SPDX-License-Identifier: MIT
#pragma once

#include "timeline/measuredoverlay.h"
#include "timeline/timeaxis.h"
#include "timeline/timelinedata.h"

#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

namespace stagecraft {

struct SynthesisResult;

/// The Gantt chart of the Timeline tab. On top, the two streams of the shown rank class (compute and
/// communication) as full-height lanes with the node names on wide bars; below, when there are several pipeline
/// stages, the compute stream of every stage as a thinner lane (with its communication stream as a strip under it
/// when there is room), so the pipeline's fill, steady state, drain and bubbles are visible (the shown class is
/// highlighted; a click on a stage lane asks to show it). A time axis with 1-2-5 ticks runs along the top; a dashed
/// line marks the end of the iteration.
///
/// Wheel: zoom around the cursor; drag: pan; double-click: fit. Tooltips name the node under the mouse. Painting
/// walks only the visible spans of each lane (std::lower_bound) and merges spans thinner than a pixel into
/// one-pixel columns (the colour of their longest member), so programs of 100k nodes repaint quickly.
class TimelineChart : public QWidget
{
    Q_OBJECT
public:
    enum class LaneKind
    {
        Compute, ///< compute stream of the shown class
        Communication, ///< communication stream of the shown class
        Stage, ///< compute stream of one pipeline stage (the overview)
        StageCommunication, ///< communication stream of one stage, under its Stage lane when there is room
        MeasuredCompute, ///< a measured trace's compute kernels (setMeasured), under the shown class's streams
        MeasuredCommunication ///< its NCCL kernels and copies
    };
    struct Lane
    {
        LaneKind kind = LaneKind::Compute;
        int classIndex = 0;
        QRectF rect; ///< the plot part of the lane (right of the labels)
    };
    /// The span under a point: its lane, its index in the lane's span vector and how many spans lie within two
    /// pixels of the point (several when zoomed out).
    struct Hit
    {
        Lane lane;
        size_t span = 0;
        int64_t nearby = 1;
    };

    explicit TimelineChart(QWidget* parent = nullptr);
    ~TimelineChart() override;

    /// Shows `data` (from buildTimelineData on `result`); null or failed data clears the chart. Fits the view.
    void setTimeline(std::shared_ptr<const SynthesisResult> result, std::shared_ptr<const TimelineData> data);
    /// Lays `overlay`'s kernels beside the shown class's streams (null removes them); the time axis then spans
    /// both iterations.
    void setMeasured(std::shared_ptr<const MeasuredOverlay> overlay);
    std::shared_ptr<const MeasuredOverlay> measured() const;
    void setCurrentClass(int classIndex);
    int currentClass() const;

    /// Shows the whole iteration.
    void fit();
    /// Shows [startS, startS + spanS] (clamped like a zoom).
    void setVisibleRange(double startS, double spanS);
    TimeAxis axis() const;

    /// The lanes laid out for the current size, top to bottom.
    std::vector<Lane> lanes() const;
    /// The spans a lane draws (empty without data).
    const std::vector<TimelineSpan>& spans(const Lane& lane) const;
    std::optional<Hit> hitAt(const QPointF& pos) const;
    /// The tooltip at `pos` (rich text), empty where there is no bar.
    QString tooltipAt(const QPointF& pos) const;

    /// Find: the bars whose node name contains `text` (case-insensitive) are outlined in every lane; "" clears.
    void setSearchText(const QString& text);
    /// Bars of the shown class (both streams) whose node matches the search.
    int searchMatchCount() const;
    /// Centres the next match of the shown class after the middle of the view (wrapping), zooming in when it is
    /// thinner than a few pixels. False when nothing matches.
    bool showNextMatch();
    /// Shift+drag measures a time range, drawn as a band labelled with its length; Esc clears it.
    std::optional<std::pair<double, double>> measuredRange() const;
    void setMeasuredRange(double startS, double endS);
    void clearMeasuredRange();
    /// A pipeline send drawn as an arrow on the stage overview: from its start on the sending stage's lane to its
    /// end on the receiving stage's lane.
    struct Arrow
    {
        QPointF from;
        QPointF to;
    };
    /// The arrows of the sends visible in the view; none when more than kMaxArrows are (zoom in to see them).
    std::vector<Arrow> sendArrows() const;
    static constexpr size_t kMaxArrows = 400;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    /// The user clicked the overview lane of stage `classIndex`.
    void classClicked(int classIndex);
    void visibleRangeChanged();

protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;

private:
    QRectF plotRect() const;
    void setAxis(const TimeAxis& axis);
    double totalS() const;
    void paintAxis(QPainter& p, const QRectF& plot);
    void paintLane(QPainter& p, const Lane& lane);
    /// Draws the visible part of `spans` into `rect`; wide bars get the node names of class `namesOf` (-1: none).
    void paintSpans(QPainter& p, const std::vector<TimelineSpan>& spans, const QRectF& rect, int namesOf);
    /// Outlines the search's matches among the visible spans of `lane`.
    void paintMatches(QPainter& p, const Lane& lane);
    /// The send arrows and the measured range, over the lanes.
    void paintOverlays(QPainter& p, const std::vector<Lane>& all);
    bool matches(int classIndex, uint32_t node) const;

    std::shared_ptr<const SynthesisResult> m_result;
    std::shared_ptr<const TimelineData> m_data;
    std::shared_ptr<const MeasuredOverlay> m_measured;
    int m_class = 0;
    TimeAxis m_axis;
    bool m_fitted = true;
    QPointF m_pressPos;
    TimeAxis m_pressAxis;
    bool m_pressed = false;
    bool m_dragged = false;
    QString m_search;
    std::vector<std::vector<char>> m_matches; ///< per class and node: its name matches m_search
    std::optional<std::pair<double, double>> m_measure;
    bool m_measuring = false;
    double m_measureAnchorS = 0; ///< where the Shift+drag started
};

} // namespace stagecraft
