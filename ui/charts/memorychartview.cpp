// SPDX-License-Identifier: MIT
#include "charts/memorychartview.h"

#include "charts/chartparts.h"
#include "charts/memorytimes.h"
#include "models/formatting.h"
#include "models/memorymodel.h"
#include "program/program.h"

#include <QAreaSeries>
#include <QBrush>
#include <QGraphicsLineItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMouseEvent>
#include <QPen>
#include <QScatterSeries>
#include <QStringList>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace stagecraft {

namespace {

    const QColor kHbmColor(0xd6, 0x27, 0x28);
    const QColor kCompareColor(0x22, 0x22, 0x22);
    const QColor kBaselineColor(0x00, 0x83, 0x8f);
    const QColor kMeasuredColor(0xc2, 0x18, 0x5b); ///< the measured timeline: a colour no category or line has
    const QColor kGenerationEndColor(0x7a, 0x1f, 0x1f); // a darker kv_cache red: where the cache ends up
    const QColor kCursorColor(0x33, 0x33, 0x33);

    QString categoryLegend(const MemoryChartData& data, int c)
    {
        const QString name = MemoryModel::categoryName(c);
        const auto c_ = static_cast<size_t>(c);
        if (data.categoryMaxBytes[c_] == data.categoryMinBytes[c_])
            return name + QStringLiteral(" (") + formatByteCount(static_cast<double>(data.categoryMaxBytes[c_]))
                + QLatin1Char(')');
        return name + QStringLiteral(" (max ") + formatByteCount(static_cast<double>(data.categoryMaxBytes[c_]))
            + QLatin1Char(')');
    }

    void hideLegendMarker(QChart* chart, QAbstractSeries* series)
    {
        for (QLegendMarker* marker : chart->legend()->markers(series))
            marker->setVisible(false);
    }

    // A boxed label in the chart's scene.
    void placeBox(QGraphicsRectItem* box, QGraphicsSimpleTextItem* label, QPointF anchor, const QRectF& plot,
        bool preferRight, bool preferAbove)
    {
        const QRectF text = label->boundingRect();
        const QSizeF size(text.width() + 10, text.height() + 6);
        double x = preferRight ? anchor.x() + 8 : anchor.x() - 8 - size.width();
        if (x + size.width() > plot.right())
            x = anchor.x() - 8 - size.width();
        if (x < plot.left())
            x = std::min(anchor.x() + 8, plot.right() - size.width());
        double y = preferAbove ? anchor.y() - 8 - size.height() : anchor.y() + 8;
        if (y < plot.top())
            y = anchor.y() + 8;
        if (y + size.height() > plot.bottom())
            y = plot.bottom() - size.height();
        box->setRect(QRectF(QPointF(x, y), size));
        label->setPos(x + 5, y + 3);
    }

    void moveBox(QGraphicsRectItem* box, QGraphicsSimpleTextItem* label, double dy)
    {
        box->setRect(box->rect().translated(0, dy));
        label->setPos(label->pos() + QPointF(0, dy));
    }

} // namespace

MemoryChartView::MemoryChartView(QWidget* parent)
    : QChartView(new QChart, parent)
    , m_compare(new QLineSeries(this))
    , m_baseline(new QLineSeries(this))
    , m_measured(new QLineSeries(this))
    , m_measuredPeak(new QScatterSeries(this))
    , m_hbm(new QLineSeries(this))
    , m_generationEnd(new QLineSeries(this))
    , m_peak(new QScatterSeries(this))
    , m_comparePeak(new QScatterSeries(this))
    , m_baselinePeak(new QScatterSeries(this))
    , m_axisX(new QValueAxis(this))
    , m_axisY(new QValueAxis(this))
{
    QChart* c = chart();
    c->setAnimationOptions(QChart::NoAnimation);
    c->legend()->hide();
    c->setBackgroundRoundness(0);
    c->setDropShadowEnabled(false);
    setFrameShape(QFrame::NoFrame);
    setBackgroundBrush(Qt::white);
    c->setMargins(QMargins(6, 6, 6, 6));
    QFont titleFont = c->titleFont();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.15);
    titleFont.setBold(true);
    c->setTitleFont(titleFont);
    setRenderHint(QPainter::Antialiasing);

    m_axisX->setTitleText(QStringLiteral("step (program node, schedule order)"));
    m_axisX->setLabelFormat(QStringLiteral("%.0f"));
    m_axisY->setLabelFormat(QStringLiteral("%.0f"));
    c->addAxis(m_axisX, Qt::AlignBottom);
    c->addAxis(m_axisY, Qt::AlignLeft);

    for (int i = 0; i < kMemoryChartCategories; ++i) {
        m_upper[static_cast<size_t>(i)] = new QLineSeries(this);
        auto* area =
            new QAreaSeries(m_upper[static_cast<size_t>(i)], i > 0 ? m_upper[static_cast<size_t>(i - 1)] : nullptr);
        const QColor color = MemoryModel::categoryColor(i);
        QColor fill = color;
        fill.setAlpha(200);
        area->setBrush(fill);
        // No outline: stroking five 2,000-point area boundaries (joins computed per segment) was most of the tab's
        // repaint time at 16k ranks; the fills alone separate the bands.
        area->setPen(Qt::NoPen);
        area->setName(MemoryModel::categoryName(i));
        m_areas[static_cast<size_t>(i)] = area;
        c->addSeries(area);
        area->attachAxis(m_axisX);
        area->attachAxis(m_axisY);
    }

    QPen comparePen(kCompareColor, 1); // a cosmetic 1 px pen: wider ones go through the stroker per point
    m_compare->setPen(comparePen);
    c->addSeries(m_compare);
    m_compare->attachAxis(m_axisX);
    m_compare->attachAxis(m_axisY);

    // Dashed and in a colour no category has: the other plan, drawn over this one's areas. At most 500 points, so
    // the stroker's cost for a dashed 2 px pen stays small.
    QPen baselinePen(kBaselineColor, 2, Qt::CustomDashLine);
    baselinePen.setDashPattern({ 3, 2 });
    m_baseline->setPen(baselinePen);
    c->addSeries(m_baseline);
    m_baseline->attachAxis(m_axisX);
    m_baseline->attachAxis(m_axisY);
    m_baseline->setVisible(false);

    m_measured->setPen(QPen(kMeasuredColor, 2));
    c->addSeries(m_measured);
    m_measured->attachAxis(m_axisX);
    m_measured->attachAxis(m_axisY);
    m_measured->setVisible(false);
    m_measuredPeak->setMarkerSize(9);
    m_measuredPeak->setBrush(kMeasuredColor);
    m_measuredPeak->setPen(QPen(Qt::white, 1));
    c->addSeries(m_measuredPeak);
    m_measuredPeak->attachAxis(m_axisX);
    m_measuredPeak->attachAxis(m_axisY);
    m_measuredPeak->setVisible(false);

    QPen hbmPen(kHbmColor, 2, Qt::DashLine);
    m_hbm->setPen(hbmPen);
    c->addSeries(m_hbm);
    m_hbm->attachAxis(m_axisX);
    m_hbm->attachAxis(m_axisY);

    QPen generationEndPen(kGenerationEndColor, 2, Qt::DashDotLine);
    m_generationEnd->setPen(generationEndPen);
    c->addSeries(m_generationEnd);
    m_generationEnd->attachAxis(m_axisX);
    m_generationEnd->attachAxis(m_axisY);
    m_generationEnd->setVisible(false);

    for (QScatterSeries* s : { m_peak, m_comparePeak, m_baselinePeak }) {
        s->setMarkerShape(QScatterSeries::MarkerShapeCircle);
        s->setMarkerSize(11);
        s->setPen(QPen(Qt::white, 2));
        c->addSeries(s);
        s->attachAxis(m_axisX);
        s->attachAxis(m_axisY);
        hideLegendMarker(c, s);
    }
    m_peak->setBrush(QColor(0xb0, 0x10, 0x10));
    m_comparePeak->setBrush(kCompareColor);
    m_baselinePeak->setBrush(kBaselineColor);
    m_compare->setVisible(false);
    m_comparePeak->setVisible(false);
    m_baselinePeak->setVisible(false);

    m_peakBox = new QGraphicsRectItem(c);
    m_peakBox->setBrush(QColor(255, 255, 255, 235));
    m_peakBox->setPen(QPen(QColor(0xb0, 0x10, 0x10), 1));
    m_peakBox->setZValue(20);
    m_peakLabel = new QGraphicsSimpleTextItem(c);
    m_peakLabel->setZValue(21);
    QFont bold = font();
    bold.setBold(true);
    m_peakLabel->setFont(bold);
    m_peakLabel->setBrush(QColor(0x80, 0x08, 0x08));
    m_baselineBox = new QGraphicsRectItem(c);
    m_baselineBox->setBrush(QColor(255, 255, 255, 235));
    m_baselineBox->setPen(QPen(kBaselineColor, 1, Qt::DashLine));
    m_baselineBox->setZValue(18);
    m_baselineLabel = new QGraphicsSimpleTextItem(c);
    m_baselineLabel->setZValue(19);
    m_baselineLabel->setFont(bold);
    m_baselineLabel->setBrush(kBaselineColor.darker(130));

    m_cursorLine = new QGraphicsLineItem(c);
    m_cursorLine->setPen(QPen(kCursorColor, 1, Qt::DashLine));
    m_cursorLine->setZValue(15);
    m_cursorBox = new QGraphicsRectItem(c);
    m_cursorBox->setBrush(QColor(0x33, 0x33, 0x33, 225));
    m_cursorBox->setPen(Qt::NoPen);
    m_cursorBox->setZValue(16);
    m_cursorLabel = new QGraphicsSimpleTextItem(c);
    m_cursorLabel->setBrush(Qt::white);
    m_cursorLabel->setZValue(17);
    for (QGraphicsItem* item : std::initializer_list<QGraphicsItem*> {
             m_peakBox, m_peakLabel, m_baselineBox, m_baselineLabel, m_cursorLine, m_cursorBox, m_cursorLabel })
        item->setVisible(false);

    connect(c, &QChart::plotAreaChanged, this, [this] { updateOverlays(); });
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
}

MemoryChartView::~MemoryChartView() = default;

void MemoryChartView::setChartData(const MemoryChartData& data, const QString& title, const QString& compareName,
    qint64 hbmBytes, const QString& gpuName, const QString& baselineName)
{
    m_data = data;
    m_title = title;
    m_compareName = compareName;
    m_hbmBytes = hbmBytes;
    m_gpuName = gpuName;
    m_baselineName = baselineName;
    QChart* c = chart();
    c->setTitle(title);
    for (int i = 0; i < kMemoryChartCategories; ++i) {
        m_upper[static_cast<size_t>(i)]->replace(data.upper[static_cast<size_t>(i)]);
        m_areas[static_cast<size_t>(i)]->setName(categoryLegend(data, i));
    }
    const double peak = static_cast<double>(data.peakBytes) / data.unitBytes;
    m_peak->replace(QList<QPointF> { QPointF(data.peakX, peak) });

    const bool compare = data.compareClass >= 0;
    m_compare->replace(data.compareTotal);
    m_compare->setVisible(compare);
    m_comparePeak->setVisible(compare);
    if (compare) {
        m_compare->setName(QStringLiteral("total of %1 (peak %2)")
                               .arg(compareName, formatByteCount(static_cast<double>(data.comparePeakBytes))));
        m_comparePeak->replace(
            QList<QPointF> { QPointF(data.comparePeakX, static_cast<double>(data.comparePeakBytes) / data.unitBytes) });
    }
    hideLegendMarker(c, m_comparePeak);
    for (QLegendMarker* marker : c->legend()->markers(m_compare))
        marker->setVisible(compare);

    const bool baseline = data.baselineClass >= 0;
    m_baseline->replace(data.baselineTotal);
    m_baseline->setVisible(baseline);
    m_baselinePeak->setVisible(baseline);
    m_baselinePeakText.clear();
    if (baseline) {
        m_baseline->setName(QStringLiteral("baseline: %1 (peak %2)")
                                .arg(baselineName, formatByteCount(static_cast<double>(data.baselinePeakBytes))));
        m_baselinePeak->replace(QList<QPointF> {
            QPointF(data.baselinePeakX, static_cast<double>(data.baselinePeakBytes) / data.unitBytes) });
        m_baselinePeakText = data.timeAxis ? QStringLiteral("baseline peak %1 at %2 (step %3)")
                                                 .arg(formatByteCount(static_cast<double>(data.baselinePeakBytes)),
                                                     formatDuration(data.baselinePeakX / 1000.0))
                                                 .arg(data.baselinePeakStep)
                                           : QStringLiteral("baseline peak %1 at step %2")
                                                 .arg(formatByteCount(static_cast<double>(data.baselinePeakBytes)))
                                                 .arg(data.baselinePeakStep);
    }
    m_baselineLabel->setText(m_baselinePeakText);
    hideLegendMarker(c, m_baselinePeak);
    for (QLegendMarker* marker : c->legend()->markers(m_baseline))
        marker->setVisible(baseline);

    const bool measured = !m_measuredPoints.isEmpty();
    QList<QPointF> measuredScaled;
    measuredScaled.reserve(m_measuredPoints.size());
    for (const QPointF& p : m_measuredPoints)
        measuredScaled.append(QPointF(p.x(), p.y() / data.unitBytes));
    m_measured->replace(measuredScaled);
    m_measured->setName(m_measuredName);
    m_measured->setVisible(measured);
    m_measuredPeak->replace(measured
            ? QList<QPointF> { QPointF(m_measuredPeakPoint.x(), m_measuredPeakPoint.y() / data.unitBytes) }
            : QList<QPointF> {});
    m_measuredPeak->setVisible(measured);
    hideLegendMarker(c, m_measuredPeak);
    for (QLegendMarker* marker : c->legend()->markers(m_measured))
        marker->setVisible(measured);

    const double lastStep = std::max(data.xMax, 1e-9);
    const double dataMax = std::max(static_cast<double>(std::max({ data.peakBytes, data.comparePeakBytes,
                                        data.baselinePeakBytes, data.generationEndBytes })),
                               measured ? m_measuredPeakPoint.y() : 0.0)
        / data.unitBytes;
    const bool generationEnd = data.generationEndBytes > 0;
    m_generationEnd->replace(generationEnd
            ? QList<QPointF> { QPointF(0, double(data.generationEndBytes) / data.unitBytes),
                QPointF(lastStep, double(data.generationEndBytes) / data.unitBytes) }
            : QList<QPointF> {});
    m_generationEnd->setVisible(generationEnd);
    m_generationEnd->setName(
        QStringLiteral("at the last token (%1 positions cached): weights + KV cache %2")
            .arg(formatExact(data.generationEndToken), formatByteCount(static_cast<double>(data.generationEndBytes))));
    for (QLegendMarker* marker : c->legend()->markers(m_generationEnd))
        marker->setVisible(generationEnd);
    const double hbm = static_cast<double>(hbmBytes) / data.unitBytes;
    // The capacity line is drawn when it is on the same scale as the data; far above it (a tiny test model on an
    // 80 GiB GPU), it would flatten the areas to nothing, so the legend states it instead.
    const bool hbmOnScale = hbmBytes > 0 && hbm <= std::max(dataMax, 1e-9) * 4;
    const QString hbmText = formatByteCount(static_cast<double>(hbmBytes));
    if (hbmBytes > 0) {
        // Off scale: an empty series keeps its legend entry and draws nothing.
        m_hbm->replace(hbmOnScale ? QList<QPointF> { QPointF(0, hbm), QPointF(lastStep, hbm) } : QList<QPointF> {});
        m_hbm->setName(hbmOnScale ? QStringLiteral("HBM capacity %1 (%2)").arg(gpuName, hbmText)
                                  : QStringLiteral("HBM capacity %1 (%2, above the scale)").arg(gpuName, hbmText));
        m_hbm->setVisible(true);
    } else {
        m_hbm->replace(QList<QPointF> {});
        m_hbm->setVisible(false);
    }
    for (QLegendMarker* marker : c->legend()->markers(m_hbm))
        marker->setVisible(hbmBytes > 0);

    const double xInterval = niceTickInterval(lastStep, 8);
    setAxisTicks(m_axisX, 0, lastStep, xInterval, data.timeAxis ? tickLabelFormat(xInterval) : QStringLiteral("%.0f"));
    QString xTitle = data.timeAxis ? QStringLiteral("estimated time (ms, the Timeline's clock)")
                                   : QStringLiteral("step (program node, schedule order)");
    if (data.keptMicroBatches > 0) // the peak is the iteration's: 1F1B and interleaved bound what is in flight
        xTitle += QStringLiteral(" \u00b7 ") + keptMicroBatchesRange(data.keptMicroBatches, data.microBatches);
    m_axisX->setTitleText(xTitle);
    const double top = std::max(dataMax, hbmOnScale ? hbm : 0.0) * 1.1;
    const double yInterval = niceTickInterval(top > 0 ? top : 1, 6);
    setAxisTicks(
        m_axisY, 0, std::ceil((top > 0 ? top : 1) / yInterval) * yInterval, yInterval, tickLabelFormat(yInterval));
    m_axisY->setTitleText(QStringLiteral("memory per rank (%1)").arg(data.unitName));

    auto entry = [](const QColor& color, const QString& symbol, const QString& name) {
        QString text = name.toHtmlEscaped();
        // Wrap between entries, not inside one (not at a space, nor at the hyphen of "h100-sxm").
        text.replace(QLatin1Char(' '), QStringLiteral("&nbsp;")).replace(QLatin1Char('-'), QChar(0x2011));
        return QStringLiteral("<span style='color:%1'>%2</span>&nbsp;%3").arg(color.name(), symbol, text);
    };
    QStringList entries;
    constexpr auto kvCache = static_cast<int>(MemoryCategory::KvCache);
    const bool serving = data.categoryMaxBytes[static_cast<size_t>(kvCache)] > 0;
    for (int i = 0; i < kMemoryChartCategories; ++i) {
        // A training timeline holds no KV cache: no entry for it. Serving holds no gradients or optimizer state:
        // no entry for an empty category there.
        if ((i == kvCache || serving) && data.categoryMaxBytes[static_cast<size_t>(i)] == 0)
            continue;
        entries << entry(MemoryModel::categoryColor(i), QStringLiteral("&#9632;"), categoryLegend(data, i));
    }
    if (compare)
        entries << entry(kCompareColor, QStringLiteral("&#9473;&#9473;"), m_compare->name());
    if (baseline)
        entries << entry(kBaselineColor, QStringLiteral("&#9477;&#9477;"), m_baseline->name());
    else if (!data.baselineMissing.isEmpty())
        entries << entry(kBaselineColor, QStringLiteral("&#9477;&#9477;"),
            QStringLiteral("baseline not drawn: ") + data.baselineMissing);
    if (measured)
        entries << entry(kMeasuredColor, QStringLiteral("&#9473;&#9473;"), m_measuredName);
    if (generationEnd)
        entries << entry(kGenerationEndColor, QStringLiteral("&#8722;&#183;&#8722;"), m_generationEnd->name());
    if (hbmBytes > 0)
        entries << entry(kHbmColor, QStringLiteral("&#9588;&#9588;&#9588;"), m_hbm->name());
    m_legendHtml = entries.join(QStringLiteral("&nbsp;&nbsp;&nbsp; "));

    if (data.timeAxis) {
        m_peakText = QStringLiteral("peak %1 at %2 (step %3")
                         .arg(formatByteCount(static_cast<double>(data.peakBytes)), formatDuration(data.peakX / 1000.0))
                         .arg(data.peakStep);
        m_peakText +=
            data.peakNode.isEmpty() ? QStringLiteral(")") : QStringLiteral(", ") + data.peakNode + QLatin1Char(')');
    } else {
        m_peakText = QStringLiteral("peak %1 at step %2")
                         .arg(formatByteCount(static_cast<double>(data.peakBytes)))
                         .arg(data.peakStep);
        if (!data.peakNode.isEmpty())
            m_peakText += QStringLiteral(" (") + data.peakNode + QLatin1Char(')');
    }
    QString label = m_peakText;
    if (hbmBytes > 0 && data.peakBytes > hbmBytes)
        label += QStringLiteral("\nexceeds the %1 HBM (%2) by %3")
                     .arg(gpuName, hbmText, formatByteCount(static_cast<double>(data.peakBytes - hbmBytes)));
    m_peakLabel->setText(label);
    const bool hasData = data.steps > 0;
    m_peakLabel->setVisible(hasData);
    m_peakBox->setVisible(hasData);
    m_peak->setVisible(hasData);
    m_baselineBox->setVisible(hasData && baseline);
    m_baselineLabel->setVisible(hasData && baseline);
    hideLegendMarker(c, m_peak);
    updateOverlays();
}

void MemoryChartView::setMeasured(const QList<QPointF>& points, QPointF peak, const QString& name)
{
    m_measuredPoints = points;
    m_measuredPeakPoint = peak;
    m_measuredName = name;
    setChartData(m_data, m_title, m_compareName, m_hbmBytes, m_gpuName, m_baselineName);
}

QLineSeries* MemoryChartView::measuredSeries() const
{
    return m_measured;
}

QScatterSeries* MemoryChartView::measuredPeakSeries() const
{
    return m_measuredPeak;
}

const MemoryChartData& MemoryChartView::chartData() const
{
    return m_data;
}

void MemoryChartView::setCursor(qint64 step, const QString& text)
{
    m_cursorStep = step;
    m_cursorLabel->setText(text);
    updateOverlays();
}

qint64 MemoryChartView::cursorStep() const
{
    return m_cursorStep;
}

QLineSeries* MemoryChartView::categorySeries(int category) const
{
    return m_upper[static_cast<size_t>(category)];
}

QAreaSeries* MemoryChartView::areaSeries(int category) const
{
    return m_areas[static_cast<size_t>(category)];
}

QLineSeries* MemoryChartView::compareSeries() const
{
    return m_compare;
}

QLineSeries* MemoryChartView::baselineSeries() const
{
    return m_baseline;
}

QScatterSeries* MemoryChartView::baselinePeakSeries() const
{
    return m_baselinePeak;
}

QString MemoryChartView::baselinePeakText() const
{
    return m_baselinePeakText;
}

double MemoryChartView::xOfStep(qint64 step) const
{
    if (m_data.timeAxis && m_data.times && step >= 0 && static_cast<size_t>(step) < m_data.times->startS.size())
        return m_data.times->startS[static_cast<size_t>(step)] * 1000.0;
    return static_cast<double>(step);
}

QRectF MemoryChartView::peakLabelRect() const
{
    return m_peakBox->isVisible() ? m_peakBox->mapRectToScene(m_peakBox->rect()) : QRectF();
}

QRectF MemoryChartView::baselinePeakLabelRect() const
{
    return m_baselineBox->isVisible() ? m_baselineBox->mapRectToScene(m_baselineBox->rect()) : QRectF();
}

QLineSeries* MemoryChartView::generationEndSeries() const
{
    return m_generationEnd;
}

QLineSeries* MemoryChartView::hbmSeries() const
{
    return m_hbm;
}

QScatterSeries* MemoryChartView::peakSeries() const
{
    return m_peak;
}

QString MemoryChartView::legendHtml() const
{
    return m_legendHtml;
}

QString MemoryChartView::peakText() const
{
    return m_peakText;
}

void MemoryChartView::updateOverlays()
{
    QChart* c = chart();
    const QRectF plot = c->plotArea();
    if (m_data.steps > 0) {
        const QPointF peak =
            c->mapToPosition(QPointF(m_data.peakX, static_cast<double>(m_data.peakBytes) / m_data.unitBytes), m_peak);
        // Place the label on the side with more room.
        placeBox(m_peakBox, m_peakLabel, peak, plot, peak.x() < plot.center().x(), true);
        if (m_data.baselineClass >= 0) {
            const QPointF other = c->mapToPosition(
                QPointF(m_data.baselinePeakX, static_cast<double>(m_data.baselinePeakBytes) / m_data.unitBytes),
                m_peak);
            placeBox(m_baselineBox, m_baselineLabel, other, plot, other.x() < plot.center().x(), other.y() <= peak.y());
            // Two peaks close together: stack the baseline's label under (or over) this plan's instead of on it.
            const QRectF mine = m_peakBox->rect();
            const QRectF theirs = m_baselineBox->rect();
            if (mine.intersects(theirs)) {
                const double below = mine.bottom() + 4 - theirs.top();
                const double above = mine.top() - 4 - theirs.bottom();
                moveBox(m_baselineBox, m_baselineLabel, theirs.bottom() + below <= plot.bottom() ? below : above);
            }
        }
    }
    const bool cursor = m_cursorStep >= 0 && m_data.steps > 0;
    m_cursorLine->setVisible(cursor);
    m_cursorBox->setVisible(cursor && !m_cursorLabel->text().isEmpty());
    m_cursorLabel->setVisible(cursor && !m_cursorLabel->text().isEmpty());
    if (cursor) {
        const double x = c->mapToPosition(QPointF(xOfStep(m_cursorStep), 0), m_peak).x();
        m_cursorLine->setLine(QLineF(x, plot.top(), x, plot.bottom()));
        placeBox(m_cursorBox, m_cursorLabel, QPointF(x, plot.top() - 4), plot, true, false);
    }
}

qint64 MemoryChartView::stepAt(const QPointF& viewPos) const
{
    if (m_data.steps <= 0)
        return -1;
    const QPointF chartPos = chart()->mapFromScene(mapToScene(viewPos.toPoint()));
    if (!chart()->plotArea().contains(chartPos))
        return -1;
    const double x = chart()->mapToValue(chartPos, m_peak).x();
    if (m_data.timeAxis && m_data.times)
        return m_data.times->stepAt(x / 1000.0);
    const qint64 steps = std::max(m_data.steps, m_data.compareSteps);
    return std::clamp<qint64>(std::llround(x), 0, steps - 1);
}

void MemoryChartView::mouseMoveEvent(QMouseEvent* event)
{
    const qint64 step = stepAt(event->position());
    if (step != m_lastHovered) {
        m_lastHovered = step;
        Q_EMIT stepHovered(step);
    }
    QChartView::mouseMoveEvent(event);
}

void MemoryChartView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        const qint64 step = stepAt(event->position());
        if (step >= 0)
            Q_EMIT stepClicked(step);
    }
    QChartView::mousePressEvent(event);
}

void MemoryChartView::leaveEvent(QEvent* event)
{
    m_lastHovered = -1;
    Q_EMIT stepHovered(-1);
    QChartView::leaveEvent(event);
}

void MemoryChartView::resizeEvent(QResizeEvent* event)
{
    QChartView::resizeEvent(event);
    updateOverlays();
}

} // namespace stagecraft
