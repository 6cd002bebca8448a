// SPDX-License-Identifier: MIT
#include "sweep/sweepchartview.h"

#include "charts/chartparts.h"
#include "models/formatting.h"

#include <QCategoryAxis>
#include <QLineSeries>
#include <QMouseEvent>
#include <QPen>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace stagecraft {

namespace {

    const QColor kFittingColor(0x1f, 0x77, 0xb4);
    const QColor kOutOfMemoryColor(0x9a, 0x9a, 0x9a);
    const QColor kParetoColor(0xe6, 0x55, 0x0d);
    const QColor kCurrentColor(0x11, 0x11, 0x11);
    const QColor kBaselineColor(0x8e, 0x44, 0xad);
    const QColor kHbmColor(0xd6, 0x27, 0x28);
    const QColor kBestColor(0x2c, 0xa0, 0x2c);
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    constexpr double kMiB = 1024.0 * 1024.0;
    /// Out-of-memory plans are drawn up to this multiple of the HBM capacity.
    constexpr double kOutOfMemoryAxisLimit = 2.5;
    /// Above this ratio of the largest to the smallest drawn step time, the time axis is logarithmic.
    constexpr double kLogRatio = 20;
    constexpr double kHitRadiusPx = 8;

    /// A tick of the time or tokens/s axis: whole numbers with thousands separators ("50,000", never "5e+04"
    /// beside "5000"), smaller ones with the decimals they need ("0.05").
    QString tickLabel(double value)
    {
        if (value >= 1 || value <= 0)
            return value == std::round(value) ? formatExact(static_cast<qint64>(std::llround(value)))
                                              : QString::number(value, 'f', 1);
        const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(value))) + 1, 1, 9);
        QString text = QString::number(value, 'f', decimals);
        while (text.endsWith(QLatin1Char('0')))
            text.chop(1);
        return text;
    }

} // namespace

SweepChartView::SweepChartView(QWidget* parent)
    : QChartView(new QChart, parent)
    , m_fitting(new QScatterSeries(this))
    , m_oom(new QScatterSeries(this))
    , m_overLimit(new QScatterSeries(this))
    , m_pareto(new QLineSeries(this))
    , m_paretoPoints(new QScatterSeries(this))
    , m_currentMarker(new QScatterSeries(this))
    , m_bestMarker(new QScatterSeries(this))
    , m_baselineMarker(new QScatterSeries(this))
    , m_highlightMarker(new QScatterSeries(this))
    , m_hoverMarker(new QScatterSeries(this))
    , m_hbm(new QLineSeries(this))
    , m_tpotLimit(new QLineSeries(this))
    , m_axisX(new QValueAxis(this))
    , m_axisY(new QCategoryAxis(this))
{
    QChart* c = chart();
    c->setAnimationOptions(QChart::NoAnimation);
    c->setBackgroundRoundness(0);
    c->setDropShadowEnabled(false);
    c->setMargins(QMargins(6, 6, 6, 6));
    setFrameShape(QFrame::NoFrame);
    setBackgroundBrush(Qt::white);
    setRenderHint(QPainter::Antialiasing);
    QFont titleFont = c->titleFont();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.15);
    titleFont.setBold(true);
    c->setTitleFont(titleFont);
    // The legend is rich text under the chart (legendHtml()): QLegend cannot wrap and elides long entries.
    c->legend()->hide();

    m_axisX->setTitleText(tr("peak memory per GPU (GiB)"));
    m_axisX->setLabelFormat(QStringLiteral("%.0f"));
    m_axisY->setTitleText(tr("step time (s)"));
    m_axisY->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    c->addAxis(m_axisX, Qt::AlignBottom);
    c->addAxis(m_axisY, Qt::AlignLeft);

    m_oom->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    m_oom->setMarkerSize(6);
    QColor oomFill = kOutOfMemoryColor;
    oomFill.setAlpha(120);
    m_oom->setBrush(oomFill);
    m_oom->setPen(Qt::NoPen);

    m_fitting->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    m_fitting->setMarkerSize(7);
    QColor fitFill = kFittingColor;
    fitFill.setAlpha(190);
    m_fitting->setBrush(fitFill);
    m_fitting->setPen(Qt::NoPen);

    // Plans over the TPOT limit: open circles of the fitting colour (they would fit, but are too slow).
    m_overLimit->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    m_overLimit->setMarkerSize(8);
    m_overLimit->setBrush(Qt::NoBrush);
    m_overLimit->setPen(QPen(kFittingColor, 1.5));

    m_pareto->setPen(QPen(kParetoColor, 2.5));
    m_paretoPoints->setMarkerShape(QScatterSeries::MarkerShapeCircle);
    m_paretoPoints->setMarkerSize(10);
    m_paretoPoints->setBrush(kParetoColor);
    m_paretoPoints->setPen(QPen(Qt::white, 1.5));

    m_hbm->setPen(QPen(kHbmColor, 2, Qt::DashLine));
    m_tpotLimit->setPen(QPen(kHbmColor, 2, Qt::DashLine));

    m_bestMarker->setMarkerShape(QScatterSeries::MarkerShapeRotatedRectangle);
    m_bestMarker->setMarkerSize(16);
    m_bestMarker->setBrush(kBestColor);
    m_bestMarker->setPen(QPen(Qt::white, 1.5));
    m_bestMarker->setPointLabelsFormat(tr("best"));
    m_bestMarker->setPointLabelsVisible(true);
    m_bestMarker->setPointLabelsColor(kBestColor.darker(130));
    m_bestMarker->setPointLabelsClipping(false);
    QFont bestFont = m_bestMarker->pointLabelsFont();
    bestFont.setBold(true);
    m_bestMarker->setPointLabelsFont(bestFont);

    m_currentMarker->setMarkerShape(QScatterSeries::MarkerShapeStar);
    m_currentMarker->setMarkerSize(20);
    m_currentMarker->setBrush(QColor(0xff, 0xd7, 0x00));
    m_currentMarker->setPen(QPen(kCurrentColor, 1.5));

    m_baselineMarker->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    m_baselineMarker->setMarkerSize(13);
    m_baselineMarker->setBrush(kBaselineColor);
    m_baselineMarker->setPen(QPen(kCurrentColor, 1.5));

    for (QScatterSeries* ring : { m_highlightMarker, m_hoverMarker }) {
        ring->setMarkerShape(QScatterSeries::MarkerShapeCircle);
        ring->setMarkerSize(18);
        ring->setBrush(Qt::NoBrush);
    }
    m_highlightMarker->setPen(QPen(kCurrentColor, 2));
    m_hoverMarker->setPen(QPen(kParetoColor.darker(130), 2));

    // Drawing order: later series on top.
    for (QAbstractSeries* s :
        std::initializer_list<QAbstractSeries*> { m_oom, m_overLimit, m_fitting, m_hbm, m_tpotLimit, m_pareto,
            m_paretoPoints, m_bestMarker, m_baselineMarker, m_currentMarker, m_highlightMarker, m_hoverMarker }) {
        c->addSeries(s);
        s->attachAxis(m_axisX);
        s->attachAxis(m_axisY);
    }
    // Cached positions follow the plot area and the axis ranges.
    connect(c, &QChart::plotAreaChanged, this, [this] { m_hitsValid = false; });
    connect(m_axisX, &QValueAxis::rangeChanged, this, [this] { m_hitsValid = false; });
    connect(m_axisY, &QValueAxis::rangeChanged, this, [this] { m_hitsValid = false; });
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
    setSweep(nullptr, {}, {});
}

SweepChartView::~SweepChartView() = default;

QPointF SweepChartView::valueOf(const SweepCandidate& plan) const
{
    if (m_serving) {
        const double tokens = plan.tokensPerSPerGpu;
        return { plan.tpotS / m_unitSeconds, m_logTime ? std::log10(tokens) : tokens };
    }
    const double t = plan.stepTimeS / m_unitSeconds;
    return { static_cast<double>(plan.peakBytes) / m_unitBytes, m_logTime ? std::log10(t) : t };
}

void SweepChartView::setSweep(
    std::shared_ptr<const SweepResult> result, const std::vector<int>& pareto, const QString& title)
{
    m_result = std::move(result);
    m_current = {};
    m_baseline = {};
    m_highlighted = {};
    m_hovered = {};
    m_hitsValid = false;
    m_drawnRejected.clear();
    m_hiddenOutOfMemory = 0;
    m_hiddenOverLimit = 0;
    m_legendEntries.clear();
    QChart* c = chart();
    for (QXYSeries* s : std::initializer_list<QXYSeries*> { m_fitting, m_oom, m_overLimit, m_pareto, m_paretoPoints,
             m_bestMarker, m_baselineMarker, m_currentMarker, m_highlightMarker, m_hoverMarker, m_hbm, m_tpotLimit })
        s->clear();
    if (!m_result) {
        c->setTitle(title.isEmpty() ? tr("No sweep yet") : title);
        m_serving = false;
        // No ticks to read on an empty chart (its 0..1 range labelled "0 0 1 1 1").
        m_axisX->setLabelsVisible(false);
        m_axisY->setLabelsVisible(false);
        m_axisX->setRange(0, 1);
        for (const QString& label : m_axisY->categoriesLabels())
            m_axisY->remove(label);
        m_axisY->setRange(0, 1);
        return;
    }
    const SweepResult& r = *m_result;
    m_axisX->setLabelsVisible(true);
    m_axisY->setLabelsVisible(true);
    c->setTitle(title);
    m_serving = r.serving;
    if (m_serving)
        setServingScales(r);
    else
        setTrainingScales(r);

    // Series.
    QList<QPointF> fitting;
    fitting.reserve(static_cast<qsizetype>(r.ranked.size()));
    for (const SweepCandidate& p : r.ranked)
        fitting.append(valueOf(p));
    m_fitting->replace(fitting);
    QList<QPointF> oom, overLimit;
    for (int i : m_drawnRejected) {
        const SweepCandidate& p = r.rejected[static_cast<size_t>(i)];
        (p.rejection == SweepRejection::OverTpotLimit ? overLimit : oom).append(valueOf(p));
    }
    m_oom->replace(oom);
    m_overLimit->replace(overLimit);

    m_paretoMember.assign(r.ranked.size(), 0);
    QList<QPointF> front, staircase;
    for (int i : pareto) {
        m_paretoMember[static_cast<size_t>(i)] = 1;
        const QPointF p = valueOf(r.ranked[static_cast<size_t>(i)]);
        // The best time (serving: throughput) within a memory (TPOT) budget holds until the next front point: a
        // staircase.
        if (!staircase.isEmpty())
            staircase.append(QPointF(p.x(), staircase.back().y()));
        staircase.append(p);
        front.append(p);
    }
    m_pareto->replace(staircase);
    m_paretoPoints->replace(front);
    m_pareto->setName(tr("Pareto front (%1)").arg(formatExact(static_cast<qint64>(pareto.size()))));
    if (m_serving && !r.ranked.empty())
        m_bestMarker->replace(QList<QPointF> { valueOf(r.ranked.front()) });

    // Legend, in drawing order of importance.
    std::vector<LegendEntry> legend;
    legend.push_back({ kFittingColor, QStringLiteral("&#9679;"), m_fitting->name() });
    if (m_overLimit->count() + m_hiddenOverLimit > 0)
        legend.push_back({ kFittingColor, QStringLiteral("&#9675;"), m_overLimit->name() });
    if (!m_oom->name().isEmpty())
        legend.push_back({ kOutOfMemoryColor, QStringLiteral("&#9679;"), m_oom->name() });
    if (!pareto.empty())
        legend.push_back({ kParetoColor, QStringLiteral("&#9473;&#9679;&#9473;"), m_pareto->name() });
    if (m_bestMarker->count() > 0)
        legend.push_back({ kBestColor, QStringLiteral("&#9670;"), m_bestMarker->name() });
    for (QLineSeries* line : { m_hbm, m_tpotLimit })
        if (!line->name().isEmpty())
            legend.push_back({ kHbmColor, QStringLiteral("&#9588;&#9588;&#9588;"), line->name() });
    m_legendEntries = std::move(legend);
    setMarker(m_currentMarker, {});
    setMarker(m_baselineMarker, {});
    setMarker(m_highlightMarker, {});
    setMarker(m_hoverMarker, {});
    m_hitsValid = false;
}

void SweepChartView::setTrainingScales(const SweepResult& r)
{
    // Which plans are drawn, and the scales.
    int64_t maxFitting = 0, maxDrawn = 0;
    for (const SweepCandidate& p : r.ranked)
        maxFitting = std::max(maxFitting, p.peakBytes);
    maxDrawn = maxFitting;
    const double oomLimit = r.hbmBytes > 0 ? kOutOfMemoryAxisLimit * static_cast<double>(r.hbmBytes) : 0;
    for (size_t i = 0; i < r.rejected.size(); ++i) {
        const SweepCandidate& p = r.rejected[i];
        if (p.rejection != SweepRejection::OutOfMemory || p.stepTimeS <= 0)
            continue;
        if (oomLimit > 0 && static_cast<double>(p.peakBytes) > oomLimit) {
            ++m_hiddenOutOfMemory;
            continue;
        }
        m_drawnRejected.push_back(static_cast<int>(i));
        maxDrawn = std::max(maxDrawn, p.peakBytes);
    }
    if (m_hiddenOutOfMemory > 0)
        maxDrawn = std::max<int64_t>(maxDrawn, static_cast<int64_t>(oomLimit));
    double minTime = 0, maxTime = 0;
    auto extend = [&](double t) {
        if (t <= 0)
            return;
        minTime = minTime > 0 ? std::min(minTime, t) : t;
        maxTime = std::max(maxTime, t);
    };
    for (const SweepCandidate& p : r.ranked)
        extend(p.stepTimeS);
    for (int i : m_drawnRejected)
        extend(r.rejected[static_cast<size_t>(i)].stepTimeS);
    if (maxTime <= 0)
        minTime = maxTime = 1;

    const bool gib = static_cast<double>(std::max<int64_t>(maxDrawn, 1)) >= kGiB;
    m_unitBytes = gib ? kGiB : kMiB;
    m_axisX->setTitleText(gib ? tr("peak memory per GPU (GiB)") : tr("peak memory per GPU (MiB)"));
    m_unitSeconds = maxTime >= 1 ? 1 : maxTime >= 1e-3 ? 1e-3 : 1e-6;
    const QString timeUnit = maxTime >= 1 ? tr("s") : maxTime >= 1e-3 ? tr("ms") : tr("\u00b5s");

    // Memory axis from 0; the HBM line when it is on the scale.
    const bool hbmOnScale = r.hbmBytes > 0 && r.hbmBytes <= maxDrawn * 1.25;
    const double xTop = std::max(static_cast<double>(maxDrawn), hbmOnScale ? static_cast<double>(r.hbmBytes) : 0.0)
        * 1.05 / m_unitBytes;
    const double xInterval = niceTickInterval(xTop > 0 ? xTop : 1, 8);
    setAxisTicks(
        m_axisX, 0, std::ceil((xTop > 0 ? xTop : 1) / xInterval) * xInterval, xInterval, tickLabelFormat(xInterval));

    const auto [yMin, yMax] = setVerticalTicks(minTime / m_unitSeconds, maxTime / m_unitSeconds);
    m_axisY->setTitleText(
        m_logTime ? tr("step time (%1, log scale)").arg(timeUnit) : tr("step time (%1)").arg(timeUnit));

    if (hbmOnScale) {
        const double x = static_cast<double>(r.hbmBytes) / m_unitBytes;
        m_hbm->replace(QList<QPointF> { QPointF(x, yMin), QPointF(x, yMax) });
    }
    const QString hbmText = formatByteCount(static_cast<double>(r.hbmBytes));
    const QString gpu = QString::fromStdString(r.gpu);
    m_fitting->setName(tr("fits in HBM (%1)").arg(formatExact(static_cast<qint64>(r.ranked.size()))));
    const qint64 oomCount = static_cast<qint64>(m_drawnRejected.size()) + m_hiddenOutOfMemory;
    m_oom->setName(oomCount == 0 ? QString()
            : m_hiddenOutOfMemory > 0
            ? tr("out of memory (%1; %2 above %3 not drawn)")
                  .arg(formatExact(oomCount), formatExact(m_hiddenOutOfMemory), formatByteCount(oomLimit))
            : tr("out of memory (%1)").arg(formatExact(oomCount)));
    m_hbm->setName(r.hbmBytes <= 0 ? QString()
            : hbmOnScale           ? tr("HBM capacity %1 (%2)").arg(gpu, hbmText)
                                   : tr("HBM capacity %1 (%2, beyond the axis)").arg(gpu, hbmText));
    m_tpotLimit->setName(QString());
    m_overLimit->setName(QString());
    m_bestMarker->setName(QString());
}

void SweepChartView::setServingScales(const SweepResult& r)
{
    // Rejected plans with an estimate are drawn up to 2.5 x the larger of the limit and the slowest fitting plan: a
    // pipeline of many stages can be ten times slower and would squeeze the plans that matter into a corner.
    double slowestFitting = 0;
    for (const SweepCandidate& p : r.ranked)
        slowestFitting = std::max(slowestFitting, p.tpotS);
    const double cutoffS = kOutOfMemoryAxisLimit * std::max(slowestFitting, r.tpotLimitS);
    qint64 oomCount = 0, overLimitCount = 0;
    for (SweepRejection kind : { SweepRejection::OutOfMemory, SweepRejection::OverTpotLimit })
        for (size_t i = 0; i < r.rejected.size(); ++i) {
            const SweepCandidate& p = r.rejected[i];
            if (p.rejection != kind || p.tpotS <= 0 || p.tokensPerSPerGpu <= 0)
                continue;
            const bool oom = kind == SweepRejection::OutOfMemory;
            ++(oom ? oomCount : overLimitCount);
            if (cutoffS > 0 && p.tpotS > cutoffS)
                ++(oom ? m_hiddenOutOfMemory : m_hiddenOverLimit);
            else
                m_drawnRejected.push_back(static_cast<int>(i));
        }
    double maxTpot = 0, minTokens = 0, maxTokens = 0;
    auto extend = [&](const SweepCandidate& p) {
        maxTpot = std::max(maxTpot, p.tpotS);
        if (p.tokensPerSPerGpu > 0) {
            minTokens = minTokens > 0 ? std::min(minTokens, p.tokensPerSPerGpu) : p.tokensPerSPerGpu;
            maxTokens = std::max(maxTokens, p.tokensPerSPerGpu);
        }
    };
    for (const SweepCandidate& p : r.ranked)
        extend(p);
    for (int i : m_drawnRejected)
        extend(r.rejected[static_cast<size_t>(i)]);
    if (maxTokens <= 0)
        minTokens = maxTokens = 1;

    // TPOT axis from 0, in the unit of the largest drawn TPOT (or of the limit when it sets the scale); the limit is
    // on it unless it would squeeze the plans into less than half of the axis.
    const double limit = r.tpotLimitS;
    const bool limitOnScale = limit > 0 && (maxTpot <= 0 || limit <= 2 * maxTpot);
    const double xTopS = std::max(maxTpot, limitOnScale ? limit : 0.0);
    const DurationUnit unit = durationUnitFor(xTopS > 0 ? xTopS : 1e-3);
    m_unitSeconds = unit.seconds;
    const QString unitName = QString::fromUtf8(unit.suffix).trimmed();
    m_axisX->setTitleText(tr("time per output token (%1)").arg(unitName));
    const double xTop = xTopS > 0 ? xTopS * 1.05 / m_unitSeconds : 1;
    const double xInterval = niceTickInterval(xTop, 8);
    setAxisTicks(m_axisX, 0, std::ceil(xTop / xInterval) * xInterval, xInterval, tickLabelFormat(xInterval));

    const auto [yMin, yMax] = setVerticalTicks(minTokens, maxTokens);
    m_axisY->setTitleText(m_logTime ? tr("output tokens/s per GPU (log scale)") : tr("output tokens/s per GPU"));

    if (limitOnScale) {
        const double x = limit / m_unitSeconds;
        m_tpotLimit->replace(QList<QPointF> { QPointF(x, yMin), QPointF(x, yMax) });
    }
    const qint64 fitting = static_cast<qint64>(r.ranked.size());
    m_fitting->setName(limit > 0 ? tr("fits, TPOT within the limit (%1)").arg(formatExact(fitting))
                                 : tr("fits in HBM (%1)").arg(formatExact(fitting)));
    auto named = [&](const QString& what, qint64 count, int hidden) {
        if (hidden == 0)
            return tr("%1 (%2)").arg(what, formatExact(count));
        return tr("%1 (%2; %3 above %4 not drawn)")
            .arg(what, formatExact(count), formatExact(hidden), formatDuration(cutoffS));
    };
    m_overLimit->setName(named(tr("over the TPOT limit"), overLimitCount, m_hiddenOverLimit));
    m_oom->setName(oomCount > 0 ? named(tr("out of memory"), oomCount, m_hiddenOutOfMemory) : QString());
    m_tpotLimit->setName(limit <= 0 ? QString()
            : limitOnScale          ? tr("TPOT limit %1").arg(formatDuration(limit))
                                    : tr("TPOT limit %1 (beyond the axis)").arg(formatDuration(limit)));
    m_hbm->setName(QString());
    m_bestMarker->setName(r.ranked.empty() ? QString()
                                           : tr("best: %1, %2 tokens/s per GPU")
                                                 .arg(sweepPlanText(r.ranked.front(), true),
                                                     QString::number(r.ranked.front().tokensPerSPerGpu, 'f', 1)));
}

std::pair<double, double> SweepChartView::setVerticalTicks(double lo, double hi)
{
    // A category axis places the labels: ticks at 1-2-5 steps (log) or at a nice interval (linear).
    for (const QString& label : m_axisY->categoriesLabels())
        m_axisY->remove(label);
    m_logTime = hi / lo > kLogRatio;
    double yMin = 0, yMax = 1;
    std::vector<double> ticks;
    if (m_logTime) {
        yMin = std::log10(lo) - 0.05;
        yMax = std::log10(hi) + 0.05;
        for (int e = static_cast<int>(std::floor(yMin)); e <= static_cast<int>(std::ceil(yMax)); ++e)
            for (double m : { 1.0, 2.0, 5.0 }) {
                const double v = m * std::pow(10.0, e);
                if (std::log10(v) > yMin && std::log10(v) < yMax)
                    ticks.push_back(v);
            }
    } else {
        const double span = std::max(hi - lo, hi * 0.05);
        const double interval = niceTickInterval(span * 1.1, 6);
        const double bottom = std::max(0.0, std::floor((lo - span * 0.05) / interval) * interval);
        yMax = std::ceil((hi + span * 0.05) / interval) * interval;
        for (double v = bottom; v < yMax + interval * 0.01; v += interval)
            ticks.push_back(v);
        // A category axis labels the ends of its categories, never its start: start a hair below the first tick.
        yMin = bottom - (yMax - bottom) * 1e-6;
    }
    m_axisY->setStartValue(yMin);
    for (double v : ticks)
        m_axisY->append(tickLabel(v), m_logTime ? std::log10(v) : v);
    m_axisY->setRange(yMin, yMax);
    return { yMin, yMax };
}

void SweepChartView::setMarker(QScatterSeries* series, SweepPlanRef plan)
{
    const SweepCandidate* c = m_result ? sweepCandidate(*m_result, plan) : nullptr;
    const bool drawn = c
        && (plan.fitting
            || std::find(m_drawnRejected.begin(), m_drawnRejected.end(), plan.index) != m_drawnRejected.end());
    if (drawn)
        series->replace(QList<QPointF> { valueOf(*c) });
    else
        series->clear();
}

void SweepChartView::setCurrentPlan(SweepPlanRef plan)
{
    m_current = plan;
    setMarker(m_currentMarker, plan);
}

SweepPlanRef SweepChartView::currentPlan() const
{
    return m_current;
}

void SweepChartView::setBaselinePlan(SweepPlanRef plan)
{
    m_baseline = plan;
    setMarker(m_baselineMarker, plan);
}

SweepPlanRef SweepChartView::baselinePlan() const
{
    return m_baseline;
}

void SweepChartView::setHighlightedPlan(SweepPlanRef plan)
{
    m_highlighted = plan;
    setMarker(m_highlightMarker, plan);
}

void SweepChartView::updateHitCache() const
{
    if (m_hitsValid)
        return;
    m_hits.clear();
    m_hitsValid = true;
    if (!m_result)
        return;
    auto toView = [this](const QPointF& value) {
        const QPointF inChart = chart()->mapToPosition(value, m_fitting);
        return QPointF(mapFromScene(chart()->mapToScene(inChart)));
    };
    // Fitting plans first: on a tie they win over the grey ones behind them.
    m_hits.reserve(m_result->ranked.size() + m_drawnRejected.size());
    for (size_t i = 0; i < m_result->ranked.size(); ++i)
        m_hits.push_back({ { true, static_cast<int>(i) }, toView(valueOf(m_result->ranked[i])) });
    for (int i : m_drawnRejected)
        m_hits.push_back({ { false, i }, toView(valueOf(m_result->rejected[static_cast<size_t>(i)])) });
}

SweepPlanRef SweepChartView::planAt(const QPointF& viewPos) const
{
    updateHitCache();
    SweepPlanRef best;
    double bestDistance = kHitRadiusPx * kHitRadiusPx;
    for (const Hit& h : m_hits) {
        const QPointF d = h.viewPos - viewPos;
        const double distance = d.x() * d.x() + d.y() * d.y();
        if (distance < bestDistance) {
            bestDistance = distance;
            best = h.plan;
        }
    }
    return best;
}

std::optional<QPointF> SweepChartView::viewPosition(SweepPlanRef plan) const
{
    if (!plan.isValid())
        return std::nullopt;
    updateHitCache();
    if (plan.fitting)
        return static_cast<size_t>(plan.index) < m_result->ranked.size()
            ? std::optional<QPointF>(m_hits[static_cast<size_t>(plan.index)].viewPos)
            : std::nullopt;
    const auto it = std::find(m_drawnRejected.begin(), m_drawnRejected.end(), plan.index);
    if (it == m_drawnRejected.end())
        return std::nullopt;
    return m_hits[m_result->ranked.size() + static_cast<size_t>(it - m_drawnRejected.begin())].viewPos;
}

QString SweepChartView::toolTipText(SweepPlanRef plan) const
{
    const SweepCandidate* c = m_result ? sweepCandidate(*m_result, plan) : nullptr;
    if (!c)
        return {};
    const SweepResult& r = *m_result;
    QString text = QStringLiteral("<b>") + sweepPlanText(*c, m_serving).toHtmlEscaped() + QStringLiteral("</b><br>");
    if (m_serving) {
        text +=
            tr("%1 output tokens/s per GPU \u00b7 TPOT %2 \u00b7 TTFT %3")
                .arg(QString::number(c->tokensPerSPerGpu, 'f', 1), formatDuration(c->tpotS), formatDuration(c->ttftS));
    } else {
        text += tr("step time %1").arg(formatDuration(c->stepTimeS));
        if (plan.fitting)
            text += tr(" \u00b7 MFU %1 %").arg(QString::number(c->mfu * 100, 'f', 1));
    }
    text += QStringLiteral("<br>")
        + tr("peak %1 of %2 HBM")
              .arg(
                  formatByteCount(static_cast<double>(c->peakBytes)), formatByteCount(static_cast<double>(r.hbmBytes)));
    if (m_serving)
        text += tr(" \u00b7 up to %1 sequences fit").arg(formatExact(c->maxSequences));
    text += QStringLiteral("<br>");
    if (plan.fitting) {
        text += tr("rank %1 of %2").arg(plan.index + 1).arg(formatExact(static_cast<qint64>(r.ranked.size())));
        if (m_serving && plan.index == 0)
            text += tr(" \u00b7 the best throughput");
        if (static_cast<size_t>(plan.index) < m_paretoMember.size() && m_paretoMember[static_cast<size_t>(plan.index)])
            text += tr(" \u00b7 on the Pareto front");
    } else {
        text += (c->rejection == SweepRejection::OverTpotLimit ? tr("rejected: %1") : tr("does not fit: %1"))
                    .arg(QString::fromStdString(c->reason).toHtmlEscaped());
    }
    if (plan == m_current)
        text += QStringLiteral("<br>") + tr("the current config's plan");
    if (plan == m_baseline)
        text += QStringLiteral("<br>") + tr("the baseline's plan");
    text += QStringLiteral("<br><i>") + tr("Click to load this plan into the editor") + QStringLiteral("</i>");
    return text;
}

QString SweepChartView::legendHtml() const
{
    QStringList entries;
    auto entry = [](const QColor& color, const QString& symbol, const QString& name) {
        QString text = name.toHtmlEscaped();
        // Wrap between entries, not inside one ("h100-sxm" included).
        text.replace(QLatin1Char(' '), QStringLiteral("&nbsp;")).replace(QLatin1Char('-'), QStringLiteral("&#8209;"));
        return QStringLiteral("<span style='color:%1'>%2</span>&nbsp;%3").arg(color.name(), symbol, text);
    };
    for (const LegendEntry& e : m_legendEntries)
        entries << entry(e.color, e.symbol, e.name);
    if (m_currentMarker->count() > 0)
        entries << entry(QColor(0xd4, 0xa0, 0x00), QStringLiteral("&#9733;"), tr("current plan"));
    if (m_baselineMarker->count() > 0)
        entries << entry(kBaselineColor, QStringLiteral("&#9632;"), tr("baseline plan"));
    return entries.join(QStringLiteral("&nbsp;&nbsp;&nbsp; "));
}

bool SweepChartView::isTimeAxisLogarithmic() const
{
    return m_logTime;
}

int SweepChartView::hiddenOutOfMemoryCount() const
{
    return m_hiddenOutOfMemory;
}

int SweepChartView::hiddenOverTpotLimitCount() const
{
    return m_hiddenOverLimit;
}

bool SweepChartView::isServing() const
{
    return m_serving;
}

QScatterSeries* SweepChartView::overTpotLimitSeries() const
{
    return m_overLimit;
}

QScatterSeries* SweepChartView::bestSeries() const
{
    return m_bestMarker;
}

QLineSeries* SweepChartView::tpotLimitSeries() const
{
    return m_tpotLimit;
}

QScatterSeries* SweepChartView::fittingSeries() const
{
    return m_fitting;
}

QScatterSeries* SweepChartView::outOfMemorySeries() const
{
    return m_oom;
}

QLineSeries* SweepChartView::paretoSeries() const
{
    return m_pareto;
}

QScatterSeries* SweepChartView::paretoPointSeries() const
{
    return m_paretoPoints;
}

QScatterSeries* SweepChartView::currentSeries() const
{
    return m_currentMarker;
}

QLineSeries* SweepChartView::hbmSeries() const
{
    return m_hbm;
}

QValueAxis* SweepChartView::memoryAxis() const
{
    return m_axisX;
}

QCategoryAxis* SweepChartView::timeAxis() const
{
    return m_axisY;
}

void SweepChartView::mouseMoveEvent(QMouseEvent* event)
{
    const SweepPlanRef plan = planAt(event->position());
    if (!(plan == m_hovered)) {
        m_hovered = plan;
        setMarker(m_hoverMarker, plan);
        if (plan.isValid())
            QToolTip::showText(event->globalPosition().toPoint(), toolTipText(plan), this);
        else
            QToolTip::hideText();
        Q_EMIT planHovered(plan);
    }
    QChartView::mouseMoveEvent(event);
}

void SweepChartView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton) {
        const SweepPlanRef plan = planAt(event->position());
        if (plan.isValid())
            Q_EMIT planClicked(plan);
    }
    QChartView::mousePressEvent(event);
}

void SweepChartView::leaveEvent(QEvent* event)
{
    if (m_hovered.isValid()) {
        m_hovered = {};
        setMarker(m_hoverMarker, {});
        Q_EMIT planHovered({});
    }
    QChartView::leaveEvent(event);
}

void SweepChartView::resizeEvent(QResizeEvent* event)
{
    m_hitsValid = false;
    QChartView::resizeEvent(event);
}

} // namespace stagecraft
