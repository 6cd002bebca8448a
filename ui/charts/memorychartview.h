// SPDX-License-Identifier: MIT
#pragma once

#include "charts/memorychartdata.h"

#include <QChartView>
#include <array>

class QAreaSeries;
class QGraphicsLineItem;
class QGraphicsRectItem;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace stagecraft {

/// The stacked-area memory chart of one rank class: weights, gradients, optimizer, activations and other (bottom
/// to top), the peak marked with its value and node, the HBM capacity as a dashed red line, optionally the total of
/// a second class as a line and the total of the pinned baseline's class as a dashed line with its own labelled
/// peak, and a vertical cursor. x is the program step or the estimated time in ms (MemoryChartData::timeAxis).
/// Series are created once and refilled with one QXYSeries::replace() each (STYLE §3). Emits the step under the
/// mouse; the owner decides where the cursor goes.
class MemoryChartView : public QChartView
{
    Q_OBJECT
public:
    explicit MemoryChartView(QWidget* parent = nullptr);
    ~MemoryChartView() override;

    /// Shows `data` (from buildMemoryChartData). `title` heads the chart, `compareName` names the comparison line
    /// ("stage 7"), `hbmBytes` (0: none) is drawn as a line named after `gpuName`, `baselineName` names the
    /// baseline's line ("llama3-70b stage 0, 64 GPUs").
    void setChartData(const MemoryChartData& data, const QString& title, const QString& compareName, qint64 hbmBytes,
        const QString& gpuName, const QString& baselineName = {});
    const MemoryChartData& chartData() const;
    /// A measured memory timeline (PyTorch's export_memory_timeline, MemoryView::loadMeasuredMemory) as a solid
    /// line over the areas, `points` already in this chart's x units and bytes; its peak is marked. `name` is its
    /// legend entry. Empty `points` remove it. Redraws with the last setChartData() arguments (the y axis takes
    /// the measured peak in).
    void setMeasured(const QList<QPointF>& points, QPointF peak, const QString& name);
    QLineSeries* measuredSeries() const;
    QScatterSeries* measuredPeakSeries() const;
    /// Moves the cursor line to `step` (-1 hides it); `text` is shown next to it.
    void setCursor(qint64 step, const QString& text);
    qint64 cursorStep() const;

    /// The upper boundary series of category `category` (MemoryCategory order).
    QLineSeries* categorySeries(int category) const;
    QAreaSeries* areaSeries(int category) const;
    QLineSeries* compareSeries() const;
    /// The baseline's total (dashed; hidden without a baseline).
    QLineSeries* baselineSeries() const;
    QScatterSeries* baselinePeakSeries() const;
    QLineSeries* hbmSeries() const;
    /// Serving: the level of the weights plus the KV cache at the generation's last token (hidden for training).
    QLineSeries* generationEndSeries() const;
    QScatterSeries* peakSeries() const;
    /// "peak 27.8 GiB at step 1234 (mb3/L5.mlp.down.bwd)"; on the time axis "... at 12.3 ms (step 1234, ...)".
    QString peakText() const;
    /// "baseline peak 30.1 GiB at step 1200"; empty without a baseline.
    QString baselinePeakText() const;
    /// The x of `step` of the shown class: the step, or its node's estimated start in ms.
    double xOfStep(qint64 step) const;
    /// The scene rectangles of the peak labels (for tests: they must not overlap).
    QRectF peakLabelRect() const;
    QRectF baselinePeakLabelRect() const;
    /// The legend as rich text (colour swatch and name of every visible series); the chart's own legend is hidden
    /// because it cannot wrap. MemoryView shows this under the chart.
    QString legendHtml() const;

Q_SIGNALS:
    /// The mouse is over the plot at `step` (-1: it left the plot).
    void stepHovered(qint64 step);
    void stepClicked(qint64 step);

protected:
    void mouseMoveEvent(QMouseEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    qint64 stepAt(const QPointF& viewPos) const;
    void updateOverlays();

    MemoryChartData m_data;
    std::array<QLineSeries*, kMemoryChartCategories> m_upper {};
    std::array<QAreaSeries*, kMemoryChartCategories> m_areas {};
    QLineSeries* m_compare;
    QLineSeries* m_baseline;
    QLineSeries* m_measured;
    QScatterSeries* m_measuredPeak;
    QList<QPointF> m_measuredPoints; ///< bytes, not yet scaled to the chart's unit
    QPointF m_measuredPeakPoint;
    QString m_measuredName;
    /// The last setChartData() arguments after `data`, for setMeasured().
    QString m_title, m_compareName, m_gpuName, m_baselineName;
    qint64 m_hbmBytes = 0;
    QLineSeries* m_hbm;
    QLineSeries* m_generationEnd; ///< serving: weights + KV cache at the generation's last token
    QScatterSeries* m_peak;
    QScatterSeries* m_comparePeak;
    QScatterSeries* m_baselinePeak;
    QValueAxis* m_axisX;
    QValueAxis* m_axisY;
    QGraphicsRectItem* m_peakBox;
    QGraphicsSimpleTextItem* m_peakLabel;
    QGraphicsRectItem* m_baselineBox;
    QGraphicsSimpleTextItem* m_baselineLabel;
    QGraphicsLineItem* m_cursorLine;
    QGraphicsRectItem* m_cursorBox;
    QGraphicsSimpleTextItem* m_cursorLabel;
    QString m_peakText;
    QString m_baselinePeakText;
    QString m_legendHtml;
    qint64 m_cursorStep = -1;
    qint64 m_lastHovered = -2;
};

} // namespace stagecraft
