// SPDX-License-Identifier: MIT
#include "timeline/timelinechart.h"

#include "graph/graphstyle.h"
#include "kineto/messagequote.h"
#include "models/formatting.h"
#include "synthesis/synthesis.h"
#include "timeline/timelinestyle.h"

#include <QFontMetricsF>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPolygonF>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace stagecraft {

namespace {

    constexpr double kLabelWidth = 124; ///< the lane labels left of the plot
    constexpr double kRightMargin = 14;
    constexpr double kAxisHeight = 24; ///< tick labels above the lanes
    constexpr double kCaptionHeight = 20; ///< a section caption above a group of lanes
    constexpr double kStreamLaneHeight = 44;
    constexpr double kStreamLaneGap = 4;
    constexpr double kSectionGap = 10;
    constexpr double kBottomMargin = 8;
    constexpr double kMaxStagePitch = 44; ///< vertical room of one stage in the overview
    constexpr double kMinStagePitch = 2;
    constexpr double kMinStagePitchWithComm = 16; ///< from here on a stage shows its communication strip
    constexpr double kBorderMinWidth = 6; ///< narrower bars are drawn solid, without a border
    constexpr double kMinSpanS = 20e-9; ///< the deepest zoom: 20 ns across the plot
    constexpr int64_t kColourSamples = 16; ///< members inspected to colour a merged column

    QFont smallFont()
    {
        QFont font;
        font.setPixelSize(11);
        return font;
    }

    /// Draws runs of one colour as few rectangles: adjacent columns of the same colour become one.
    class RunPainter
    {
    public:
        RunPainter(QPainter& p, double top, double height)
            : m_p(p)
            , m_top(top)
            , m_height(height)
        {
        }
        ~RunPainter()
        {
            flush();
        }
        void add(double x0, double x1, const QColor& color)
        {
            if (m_open && color == m_color && x0 <= m_x1 + 0.5) {
                m_x1 = std::max(m_x1, x1);
                return;
            }
            flush();
            m_open = true;
            m_x0 = x0;
            m_x1 = x1;
            m_color = color;
        }
        void flush()
        {
            if (m_open)
                m_p.fillRect(QRectF(m_x0, m_top, m_x1 - m_x0, m_height), m_color);
            m_open = false;
        }

    private:
        QPainter& m_p;
        double m_top, m_height;
        bool m_open = false;
        double m_x0 = 0, m_x1 = 0;
        QColor m_color;
    };

    QString passText(const ProgramNode& n)
    {
        if (n.recompute)
            return TimelineChart::tr("recompute (forward)");
        return QString::fromLatin1(toString(n.pass));
    }

} // namespace

TimelineChart::TimelineChart(QWidget* parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAutoFillBackground(true);
    QPalette pal = palette();
    pal.setColor(QPalette::Window, Qt::white);
    setPalette(pal);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Maximum);
    m_axis.left = kLabelWidth;
}

TimelineChart::~TimelineChart() = default;

QSize TimelineChart::sizeHint() const
{
    // Tall enough for every lane at full size; the view lets the chart shrink below this but not grow past it,
    // so a short pipeline leaves no empty band between the lanes and the legend.
    const int stages = m_data ? static_cast<int>(m_data->classes.size()) : 1;
    double h = kAxisHeight + kCaptionHeight + 2 * kStreamLaneHeight + kStreamLaneGap + kBottomMargin;
    if (m_measured)
        h += kSectionGap + kCaptionHeight + 2 * kStreamLaneHeight + kStreamLaneGap;
    if (stages > 1)
        h += kSectionGap + kCaptionHeight + stages * kMaxStagePitch;
    return { 900, static_cast<int>(std::ceil(h)) };
}

QSize TimelineChart::minimumSizeHint() const
{
    return { 400, 200 };
}

void TimelineChart::setTimeline(std::shared_ptr<const SynthesisResult> result, std::shared_ptr<const TimelineData> data)
{
    m_result = std::move(result);
    m_data = data && data->ok ? std::move(data) : nullptr;
    m_class = std::clamp(m_class, 0, m_data ? std::max(0, static_cast<int>(m_data->classes.size()) - 1) : 0);
    m_measure.reset();
    setSearchText(m_search); // the matches of the new programs
    updateGeometry();
    fit();
}

void TimelineChart::setMeasured(std::shared_ptr<const MeasuredOverlay> overlay)
{
    m_measured = std::move(overlay);
    updateGeometry();
    fit();
}

std::shared_ptr<const MeasuredOverlay> TimelineChart::measured() const
{
    return m_measured;
}

void TimelineChart::setSearchText(const QString& text)
{
    m_search = text.trimmed();
    m_matches.clear();
    if (!m_search.isEmpty() && m_result) {
        m_matches.resize(m_result->classes.size());
        for (size_t c = 0; c < m_result->classes.size(); ++c) {
            const ClassProgram& program = m_result->classes[c];
            m_matches[c].resize(program.nodes.size(), 0);
            for (size_t i = 0; i < program.nodes.size(); ++i)
                m_matches[c][i] = QString::fromStdString(program.nodes[i].name).contains(m_search, Qt::CaseInsensitive);
        }
    }
    update();
}

bool TimelineChart::matches(int classIndex, uint32_t node) const
{
    return classIndex >= 0 && static_cast<size_t>(classIndex) < m_matches.size()
        && node < m_matches[static_cast<size_t>(classIndex)].size() && m_matches[static_cast<size_t>(classIndex)][node];
}

int TimelineChart::searchMatchCount() const
{
    if (!m_data || m_search.isEmpty() || static_cast<size_t>(m_class) >= m_data->classes.size())
        return 0;
    int count = 0;
    const TimelineLanes& l = m_data->classes[static_cast<size_t>(m_class)];
    for (const auto* v : { &l.compute, &l.communication })
        for (const TimelineSpan& s : *v)
            count += matches(m_class, s.node) ? 1 : 0;
    return count;
}

bool TimelineChart::showNextMatch()
{
    if (!m_data || m_search.isEmpty() || static_cast<size_t>(m_class) >= m_data->classes.size())
        return false;
    const TimelineLanes& l = m_data->classes[static_cast<size_t>(m_class)];
    const double centre = m_axis.startS + m_axis.spanS / 2;
    const TimelineSpan* first = nullptr;
    const TimelineSpan* next = nullptr;
    for (const auto* v : { &l.compute, &l.communication })
        for (const TimelineSpan& s : *v) {
            if (!matches(m_class, s.node))
                continue;
            if (!first || s.startS < first->startS)
                first = &s;
            const double mid = (s.startS + s.endS) / 2;
            if (mid > centre + m_axis.pixelS() && (!next || s.startS < next->startS))
                next = &s;
        }
    const TimelineSpan* chosen = next ? next : first;
    if (!chosen)
        return false;
    const double width = chosen->endS - chosen->startS;
    // Keep the zoom unless the bar would be thinner than 8 pixels.
    const double span = width > 0 && width / m_axis.pixelS() < 8 ? width * plotRect().width() / 40 : m_axis.spanS;
    setVisibleRange((chosen->startS + chosen->endS) / 2 - span / 2, span);
    return true;
}

std::optional<std::pair<double, double>> TimelineChart::measuredRange() const
{
    return m_measure;
}

void TimelineChart::setMeasuredRange(double startS, double endS)
{
    m_measure = std::pair { std::min(startS, endS), std::max(startS, endS) };
    update();
}

void TimelineChart::clearMeasuredRange()
{
    m_measure.reset();
    update();
}

std::vector<TimelineChart::Arrow> TimelineChart::sendArrows() const
{
    std::vector<Arrow> out;
    if (!m_data || !m_result || m_data->classes.size() < 2)
        return out;
    std::vector<const Lane*> stageLane(m_data->classes.size(), nullptr);
    const std::vector<Lane> all = lanes();
    for (const Lane& lane : all)
        if (lane.kind == LaneKind::Stage && static_cast<size_t>(lane.classIndex) < stageLane.size())
            stageLane[static_cast<size_t>(lane.classIndex)] = &lane;
    // Class of each pipeline stage (a send names its peer by stage).
    std::vector<int> classOfStage(m_result->classes.size() + 1, -1);
    for (size_t c = 0; c < m_result->classes.size(); ++c) {
        const auto stage = static_cast<size_t>(std::max(0, m_result->classes[c].stage));
        if (stage >= classOfStage.size())
            classOfStage.resize(stage + 1, -1);
        classOfStage[stage] = static_cast<int>(c);
    }
    const double t0 = m_axis.startS, t1 = m_axis.endS();
    for (size_t c = 0; c < m_data->classes.size() && c < m_result->classes.size(); ++c) {
        const std::vector<TimelineSpan>& v = m_data->classes[c].communication;
        auto it = std::lower_bound(v.begin(), v.end(), t0, [](const TimelineSpan& s, double t) { return s.endS < t; });
        for (; it != v.end() && it->startS <= t1; ++it) {
            if (it->style != TimelineBarStyle::Send)
                continue;
            const ProgramNode& node = m_result->classes[c].nodes[it->node];
            const int peer = node.peerStage >= 0 && static_cast<size_t>(node.peerStage) < classOfStage.size()
                ? classOfStage[static_cast<size_t>(node.peerStage)]
                : -1;
            if (peer < 0 || !stageLane[c] || !stageLane[static_cast<size_t>(peer)])
                continue;
            if (out.size() >= kMaxArrows)
                return {};
            out.push_back({ QPointF(m_axis.x(it->startS), stageLane[c]->rect.center().y()),
                QPointF(m_axis.x(it->endS), stageLane[static_cast<size_t>(peer)]->rect.center().y()) });
        }
    }
    return out;
}

void TimelineChart::setCurrentClass(int classIndex)
{
    if (classIndex == m_class)
        return;
    m_class = classIndex;
    update();
}

int TimelineChart::currentClass() const
{
    return m_class;
}

double TimelineChart::totalS() const
{
    const double measured = m_measured ? m_measured->comparison.measuredStepS : 0.0;
    return m_data && m_data->totalS > 0 ? std::max(m_data->totalS, measured) : 1e-3;
}

QRectF TimelineChart::plotRect() const
{
    return QRectF(kLabelWidth, kAxisHeight, std::max(1.0, width() - kLabelWidth - kRightMargin),
        std::max(1.0, height() - kAxisHeight - kBottomMargin));
}

void TimelineChart::setAxis(const TimeAxis& axis)
{
    m_axis = axis;
    const QRectF plot = plotRect();
    m_axis.left = plot.left();
    m_axis.width = plot.width();
    m_axis.spanS = std::clamp(m_axis.spanS, kMinSpanS, std::max(kMinSpanS, totalS() * 4));
    m_axis = m_axis.clamped(totalS());
    update();
    Q_EMIT visibleRangeChanged();
}

void TimelineChart::fit()
{
    TimeAxis a;
    a.startS = 0;
    a.spanS = std::max(kMinSpanS, totalS() * 1.02); // a little room after the last node
    setAxis(a);
    m_fitted = true;
}

void TimelineChart::setVisibleRange(double startS, double spanS)
{
    TimeAxis a = m_axis;
    a.startS = startS;
    a.spanS = spanS;
    setAxis(a);
    m_fitted = false;
}

TimeAxis TimelineChart::axis() const
{
    return m_axis;
}

std::vector<TimelineChart::Lane> TimelineChart::lanes() const
{
    std::vector<Lane> out;
    if (!m_data || m_data->classes.empty())
        return out;
    const QRectF plot = plotRect();
    double y = plot.top() + kCaptionHeight;
    const int cls = std::clamp(m_class, 0, static_cast<int>(m_data->classes.size()) - 1);
    out.push_back({ LaneKind::Compute, cls, QRectF(plot.left(), y, plot.width(), kStreamLaneHeight) });
    y += kStreamLaneHeight + kStreamLaneGap;
    out.push_back({ LaneKind::Communication, cls, QRectF(plot.left(), y, plot.width(), kStreamLaneHeight) });
    y += kStreamLaneHeight;
    if (m_measured) {
        y += kSectionGap + kCaptionHeight;
        out.push_back({ LaneKind::MeasuredCompute, cls, QRectF(plot.left(), y, plot.width(), kStreamLaneHeight) });
        y += kStreamLaneHeight + kStreamLaneGap;
        out.push_back(
            { LaneKind::MeasuredCommunication, cls, QRectF(plot.left(), y, plot.width(), kStreamLaneHeight) });
        y += kStreamLaneHeight;
    }
    const int stages = static_cast<int>(m_data->classes.size());
    if (stages > 1) {
        y += kSectionGap + kCaptionHeight;
        const double available = plot.bottom() - y;
        const double pitch = std::clamp(std::floor(available / stages), kMinStagePitch, kMaxStagePitch);
        const double gap = pitch >= 8 ? std::min(5.0, std::floor(pitch / 6)) : 0;
        const double inner = pitch - gap;
        const bool withComm = pitch >= kMinStagePitchWithComm;
        const double computeHeight = withComm ? std::round(inner * 0.62) : inner;
        for (int s = 0; s < stages; ++s) {
            out.push_back({ LaneKind::Stage, s, QRectF(plot.left(), y, plot.width(), computeHeight) });
            if (withComm)
                out.push_back({ LaneKind::StageCommunication, s,
                    QRectF(plot.left(), y + computeHeight + 1, plot.width(), inner - computeHeight - 1) });
            y += pitch;
        }
    }
    return out;
}

const std::vector<TimelineSpan>& TimelineChart::spans(const Lane& lane) const
{
    static const std::vector<TimelineSpan> s_empty;
    if (lane.kind == LaneKind::MeasuredCompute || lane.kind == LaneKind::MeasuredCommunication)
        return !m_measured                           ? s_empty
            : lane.kind == LaneKind::MeasuredCompute ? m_measured->lanes.compute
                                                     : m_measured->lanes.communication;
    if (!m_data || lane.classIndex < 0 || static_cast<size_t>(lane.classIndex) >= m_data->classes.size())
        return s_empty;
    const TimelineLanes& l = m_data->classes[static_cast<size_t>(lane.classIndex)];
    return lane.kind == LaneKind::Communication || lane.kind == LaneKind::StageCommunication ? l.communication
                                                                                             : l.compute;
}

std::optional<TimelineChart::Hit> TimelineChart::hitAt(const QPointF& pos) const
{
    for (const Lane& lane : lanes()) {
        if (pos.y() < lane.rect.top() || pos.y() >= lane.rect.bottom() || pos.x() < lane.rect.left()
            || pos.x() >= lane.rect.right())
            continue;
        const std::vector<TimelineSpan>& v = spans(lane);
        const double t = m_axis.time(pos.x());
        const double tolerance = 2 * m_axis.pixelS();
        auto first = std::lower_bound(
            v.begin(), v.end(), t - tolerance, [](const TimelineSpan& s, double time) { return s.endS < time; });
        auto last = std::lower_bound(
            first, v.end(), t + tolerance, [](const TimelineSpan& s, double time) { return s.startS <= time; });
        if (first == last)
            return std::nullopt;
        // The span containing t, else the nearest one.
        auto best = first;
        double bestDistance = HUGE_VAL;
        auto containing =
            std::upper_bound(first, last, t, [](double time, const TimelineSpan& s) { return time < s.startS; });
        if (containing != first && std::prev(containing)->endS >= t) {
            best = std::prev(containing);
        } else {
            for (auto it = first; it != last && std::distance(first, it) < 64; ++it) {
                const double d = std::max({ 0.0, it->startS - t, t - it->endS });
                if (d < bestDistance) {
                    bestDistance = d;
                    best = it;
                }
            }
        }
        return Hit { lane, static_cast<size_t>(best - v.begin()), std::distance(first, last) };
    }
    return std::nullopt;
}

QString TimelineChart::tooltipAt(const QPointF& pos) const
{
    const std::optional<Hit> hit = hitAt(pos);
    if (!hit || !m_result)
        return {};
    const TimelineSpan& span = spans(hit->lane)[hit->span];
    if (hit->lane.kind == LaneKind::MeasuredCompute || hit->lane.kind == LaneKind::MeasuredCommunication) {
        const TraceComparison& c = m_measured->comparison;
        const MeasuredSpan& m = c.spans[span.node];
        const KinetoEvent& e = m_measured->trace->events[size_t(m.event)];
        QString text =
            QStringLiteral("<b>%1</b><br>%2 \u00b7 measured on rank %3 (%4)<br>start %5 \u00b7 duration %6")
                .arg(QString::fromStdString(quoteForMessage(m_measured->trace->nameOf(e), 160)).toHtmlEscaped(),
                    QString::fromStdString(c.spanKinds[size_t(m.kind)]).toHtmlEscaped())
                .arg(c.rank)
                .arg(m_measured->fileName.toHtmlEscaped(), formatDuration(m.startS), formatDuration(m.endS - m.startS));
        if (e.op >= 0)
            text += QStringLiteral("<br>")
                + tr("launched by %1")
                      .arg(QString::fromStdString(
                          quoteForMessage(m_measured->trace->nameOf(m_measured->trace->events[size_t(e.op)]), 80))
                               .toHtmlEscaped());
        if (hit->nearby > 1)
            text += QStringLiteral("<br><i>")
                + tr("%1 more within 2 pixels: zoom in to separate them").arg(formatExact(hit->nearby - 1))
                + QStringLiteral("</i>");
        return text;
    }
    const ClassProgram& program = m_result->classes[static_cast<size_t>(hit->lane.classIndex)];
    const ProgramNode& n = program.nodes[span.node];
    QStringList where { tr("stage %1").arg(program.stage) };
    if (n.kind == NodeKind::Compute)
        where << passText(n);
    else
        where << TimelineStyle::name(span.style);
    if (n.layer >= 0)
        where << tr("layer %1").arg(n.layer);
    if (n.microBatch >= 0)
        where << tr("micro-batch %1").arg(n.microBatch);
    else
        where << tr("once per iteration");
    if (m_result->config.parallelism.virtualStages > 1)
        where << tr("chunk %1").arg(n.chunk);
    QString what;
    switch (n.kind) {
    case NodeKind::Compute:
        what = tr("%1 \u00b7 %2 memory traffic")
                   .arg(formatFlopCount(static_cast<double>(n.flops)), formatByteCount(static_cast<double>(n.bytes)));
        break;
    case NodeKind::Collective:
        what = tr("%1 of %2 over %3 (%4 ranks)")
                   .arg(TimelineStyle::name(span.style), formatByteCount(static_cast<double>(n.bytes)),
                       QString::fromStdString(axisMaskName(n.mask)))
                   .arg(m_result->mesh().groupSize(n.mask));
        break;
    case NodeKind::Send:
    case NodeKind::Recv:
        what = tr("%1 to stage %2 (rank %3 from rank %4)")
                   .arg(formatByteCount(static_cast<double>(n.bytes)))
                   .arg(n.peerStage)
                   .arg(m_result->peerOf(n, program.exampleRank).value)
                   .arg(program.exampleRank.value);
        break;
    }
    QString text = QStringLiteral("<b>%1</b><br>%2<br>start %3 \u00b7 duration %4<br>%5")
                       .arg(QString::fromStdString(n.name).toHtmlEscaped(), where.join(QStringLiteral(" \u00b7 ")),
                           formatDuration(span.startS), formatDuration(span.endS - span.startS), what);
    if (hit->nearby > 1)
        text += QStringLiteral("<br><i>")
            + tr("%1 more within 2 pixels: zoom in to separate them").arg(formatExact(hit->nearby - 1))
            + QStringLiteral("</i>");
    return text;
}

bool TimelineChart::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = tooltipAt(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

void TimelineChart::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    if (m_fitted) {
        fit();
    } else {
        setAxis(m_axis);
    }
}

void TimelineChart::wheelEvent(QWheelEvent* event)
{
    if (!m_data)
        return;
    const QPoint delta = event->angleDelta();
    if (std::abs(delta.x()) > std::abs(delta.y())) {
        setAxis(m_axis.panned(delta.x() / 2.0));
    } else if (delta.y() != 0) {
        const QRectF plot = plotRect();
        const double anchor = std::clamp(event->position().x(), plot.left(), plot.right());
        // One notch (120) zooms by 2^(1/4).
        setAxis(m_axis.zoomed(std::pow(2.0, delta.y() / 480.0), anchor, kMinSpanS, totalS() * 4));
    }
    m_fitted = false;
    event->accept();
}

void TimelineChart::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton)
        return QWidget::mousePressEvent(event);
    if (event->modifiers() & Qt::ShiftModifier && m_data) {
        // Shift+drag: measure a range.
        m_measuring = true;
        m_measureAnchorS = m_axis.time(event->position().x());
        setMeasuredRange(m_measureAnchorS, m_measureAnchorS);
        return;
    }
    m_pressed = true;
    m_dragged = false;
    m_pressPos = event->position();
    m_pressAxis = m_axis;
}

void TimelineChart::mouseMoveEvent(QMouseEvent* event)
{
    if (m_measuring) {
        setMeasuredRange(m_measureAnchorS, m_axis.time(event->position().x()));
        return;
    }
    if (!m_pressed || !m_data)
        return QWidget::mouseMoveEvent(event);
    const double dx = event->position().x() - m_pressPos.x();
    if (!m_dragged && std::abs(dx) < 3)
        return;
    if (!m_dragged)
        setCursor(Qt::ClosedHandCursor);
    m_dragged = true;
    QToolTip::hideText();
    setAxis(m_pressAxis.panned(dx));
    m_fitted = false;
}

void TimelineChart::mouseReleaseEvent(QMouseEvent* event)
{
    if (m_measuring && event->button() == Qt::LeftButton) {
        m_measuring = false;
        if (m_measure && std::abs(m_axis.x(m_measure->second) - m_axis.x(m_measure->first)) < 2)
            clearMeasuredRange(); // a Shift+click, not a range
        return;
    }
    if (event->button() != Qt::LeftButton || !m_pressed)
        return QWidget::mouseReleaseEvent(event);
    m_pressed = false;
    if (m_dragged) {
        unsetCursor();
        return;
    }
    // A click on an overview lane (or its label) shows that stage.
    for (const Lane& lane : lanes())
        if ((lane.kind == LaneKind::Stage || lane.kind == LaneKind::StageCommunication)
            && event->position().y() >= lane.rect.top() && event->position().y() < lane.rect.bottom()
            && event->position().x() < lane.rect.right())
            Q_EMIT classClicked(lane.classIndex);
}

void TimelineChart::mouseDoubleClickEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton)
        fit();
}

void TimelineChart::keyPressEvent(QKeyEvent* event)
{
    const QRectF plot = plotRect();
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        setAxis(m_axis.zoomed(1.5, plot.center().x(), kMinSpanS, totalS() * 4));
        break;
    case Qt::Key_Minus:
        setAxis(m_axis.zoomed(1 / 1.5, plot.center().x(), kMinSpanS, totalS() * 4));
        break;
    case Qt::Key_Left:
        setAxis(m_axis.panned(plot.width() / 8));
        break;
    case Qt::Key_Right:
        setAxis(m_axis.panned(-plot.width() / 8));
        break;
    case Qt::Key_Home:
    case Qt::Key_0:
        fit();
        return;
    case Qt::Key_Escape:
        if (!m_measure)
            return QWidget::keyPressEvent(event);
        clearMeasuredRange();
        return;
    default:
        return QWidget::keyPressEvent(event);
    }
    m_fitted = false;
}

void TimelineChart::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), Qt::white);
    p.setFont(smallFont());
    const QRectF plot = plotRect();
    if (!m_data) {
        p.setPen(GraphStyle::subtitleColor());
        p.drawText(rect(), Qt::AlignCenter, tr("No timeline"));
        return;
    }
    const std::vector<Lane> all = lanes();
    paintAxis(p, plot);

    // Section captions.
    const QFontMetricsF fm(p.font());
    p.setPen(GraphStyle::subtitleColor());
    QFont bold = p.font();
    bold.setBold(true);
    const int cls = all.front().classIndex;
    const QString ranks =
        static_cast<size_t>(cls) < m_data->classRanks.size() ? m_data->classRanks[static_cast<size_t>(cls)] : QString();
    p.setFont(bold);
    p.setPen(GraphStyle::textColor());
    const QString stageCaption = tr("Stage %1 (%2): the streams of each of its ranks").arg(cls).arg(ranks);
    p.drawText(QRectF(8, all.front().rect.top() - kCaptionHeight, width() - 16, kCaptionHeight - 3),
        Qt::AlignLeft | Qt::AlignBottom, stageCaption);
    size_t pipelineLane = 2;
    if (m_measured && all.size() > 3) {
        const TraceComparison& c = m_measured->comparison;
        p.drawText(QRectF(8, all[2].rect.top() - kCaptionHeight, width() - 16, kCaptionHeight - 3),
            Qt::AlignLeft | Qt::AlignBottom,
            tr("Measured: rank %1, %2 of %3: GPU span %4 (ours %5), exposed communication %6 (ours %7)")
                .arg(c.rank)
                .arg(QString::fromStdString(quoteForMessage(c.iteration, 40)), m_measured->fileName,
                    formatDuration(c.measuredStepS), formatDuration(c.syntheticStepS),
                    formatDuration(c.measuredExposedCommunicationS), formatDuration(c.syntheticExposedCommunicationS)));
        pipelineLane = 4;
    }
    if (all.size() > pipelineLane) {
        p.drawText(QRectF(8, all[pipelineLane].rect.top() - kCaptionHeight, width() - 16, kCaptionHeight - 3),
            Qt::AlignLeft | Qt::AlignBottom,
            tr("Pipeline: every stage's compute stream (with its communication below it when there is room); "
               "click a stage to show it"));
    }
    p.setFont(smallFont());

    for (const Lane& lane : all)
        paintLane(p, lane);
    paintOverlays(p, all);
    // Serving: where the prefill ends, every sequence has its first token (the decode steps follow).
    if (m_data->serving && m_data->serving->ttftS > 0) {
        const double x = m_axis.x(m_data->serving->ttftS);
        if (x >= plot.left() && x <= plot.right()) {
            const QColor color(0x1c, 0x5f, 0x9e);
            p.setPen(QPen(color, 1, Qt::DashLine));
            p.drawLine(QPointF(x, all.front().rect.top()), QPointF(x, all.back().rect.bottom()));
            p.setPen(color);
            const QString label = tr("first token %1").arg(formatDuration(m_data->serving->ttftS));
            const double w = fm.horizontalAdvance(label) + 4;
            p.drawText(QRectF(x - w - 2, all.back().rect.bottom() + 2, w, fm.height() + 2),
                Qt::AlignRight | Qt::AlignTop, label);
        }
    }

    // The end of the iteration, labelled in the first caption row where the caption leaves room.
    const double endX = m_axis.x(m_data->totalS);
    if (endX >= plot.left() && endX <= plot.right()) {
        const QColor endColor(0x80, 0x1f, 0x1f);
        p.setPen(QPen(endColor, 1, Qt::DashLine));
        p.drawLine(QPointF(endX, plot.top()), QPointF(endX, all.back().rect.bottom()));
        // A compressed result draws its kept micro-batches only: their end is not the iteration's.
        // Serving has no iteration: the lanes end with the programs' last decode step.
        const QString text = m_data->serving ? tr("last decode step ends %1").arg(formatDuration(m_data->totalS))
            : m_data->keptMicroBatches > 0
            ? tr("end of micro-batch %1: %2").arg(formatExact(m_data->keptMicroBatches), formatDuration(m_data->totalS))
            : tr("iteration end %1").arg(formatDuration(m_data->totalS));
        const double textWidth = fm.horizontalAdvance(text);
        const QRectF captionRow(8, all.front().rect.top() - kCaptionHeight, width() - 16, kCaptionHeight - 3);
        const double captionEnd = 8 + QFontMetricsF(bold).horizontalAdvance(stageCaption) + 12;
        p.setPen(endColor);
        // Left of the line when the caption leaves room, else right of it and of the caption (an end near the
        // left edge, as when a longer measured trace is overlaid, must not write over the caption).
        const double rightOf = std::max(endX + 4, captionEnd);
        if (endX - 4 - textWidth > captionEnd)
            p.drawText(QRectF(endX - 4 - textWidth, captionRow.top(), textWidth, captionRow.height()),
                Qt::AlignRight | Qt::AlignBottom, text);
        else if (rightOf + textWidth < plot.right())
            p.drawText(QRectF(rightOf, captionRow.top(), textWidth, captionRow.height()),
                Qt::AlignLeft | Qt::AlignBottom, text);
    }
}

void TimelineChart::paintOverlays(QPainter& p, const std::vector<Lane>& all)
{
    // Pipeline sends: an arrow from the sender's stage lane to the receiver's.
    const std::vector<Arrow> arrows = sendArrows();
    if (!arrows.empty()) {
        p.save();
        p.setRenderHint(QPainter::Antialiasing);
        const QColor arrowColor(0x2f, 0x7a, 0x2a, 200);
        p.setPen(QPen(arrowColor, 1.2));
        p.setBrush(arrowColor);
        for (const Arrow& a : arrows) {
            p.drawLine(a.from, a.to);
            const QPointF d = a.to - a.from;
            const double length = std::hypot(d.x(), d.y());
            if (length < 6)
                continue;
            const QPointF u = d / length, n(-u.y(), u.x());
            p.drawPolygon(QPolygonF { a.to, a.to - 6 * u + 3 * n, a.to - 6 * u - 3 * n });
        }
        p.restore();
    }
    // The measured range: a band over every lane with its length.
    if (m_measure && !all.empty()) {
        const double x0 = m_axis.x(m_measure->first), x1 = m_axis.x(m_measure->second);
        const QRectF plot = plotRect();
        const QRectF band(QPointF(std::max(x0, plot.left()), plot.top()),
            QPointF(std::min(x1, plot.right()), all.back().rect.bottom()));
        if (band.width() > 0) {
            p.fillRect(band, QColor(0xff, 0xc1, 0x07, 60));
            p.setPen(QPen(QColor(0xb2, 0x6a, 0x00), 1));
            p.drawLine(QPointF(x0, band.top()), QPointF(x0, band.bottom()));
            p.drawLine(QPointF(x1, band.top()), QPointF(x1, band.bottom()));
            const QString text = tr("\u0394 %1").arg(formatDuration(m_measure->second - m_measure->first));
            const QFontMetricsF fm(p.font());
            const double w = fm.horizontalAdvance(text) + 8;
            const QRectF label(
                std::clamp((x0 + x1) / 2 - w / 2, plot.left(), plot.right() - w), band.top() + 2, w, fm.height() + 2);
            p.fillRect(label, QColor(0xff, 0xf4, 0xd6));
            p.drawText(label, Qt::AlignCenter, text);
        }
    }
}

void TimelineChart::paintAxis(QPainter& p, const QRectF& plot)
{
    const QFontMetricsF fm(p.font());
    // Ticks about 110 px apart, so that labels like "1234.5 ms" never collide.
    const int maxTicks = std::max(2, static_cast<int>(plot.width() / 110));
    const double step = tickStep(m_axis.spanS, maxTicks);
    const std::vector<double> ticks = tickTimes(m_axis.startS, m_axis.endS(), step);
    const std::vector<Lane> all = lanes();
    const double bottom = all.empty() ? plot.bottom() : all.back().rect.bottom();
    for (double t : ticks) {
        const double x = std::round(m_axis.x(t)) + 0.5;
        p.setPen(QColor(0xe3, 0xe3, 0xe0));
        p.drawLine(QPointF(x, plot.top()), QPointF(x, bottom));
        p.setPen(QColor(0x9a, 0x9a, 0x94));
        p.drawLine(QPointF(x, plot.top() - 4), QPointF(x, plot.top()));
        const QString label = formatTickTime(t, step);
        const double w = fm.horizontalAdvance(label) + 4;
        // Centred on the tick, but kept inside the widget at the right end.
        const double labelLeft = std::min(x - w / 2, width() - 2 - w);
        p.setPen(GraphStyle::subtitleColor());
        p.drawText(QRectF(labelLeft, 2, w, plot.top() - 6), Qt::AlignHCenter | Qt::AlignBottom, label);
    }
    p.setPen(QColor(0x9a, 0x9a, 0x94));
    p.drawLine(QPointF(plot.left(), plot.top() + 0.5), QPointF(plot.right(), plot.top() + 0.5));
}

void TimelineChart::paintLane(QPainter& p, const Lane& lane)
{
    const bool overview = lane.kind == LaneKind::Stage || lane.kind == LaneKind::StageCommunication;
    const bool current = !overview || lane.classIndex == m_class;
    p.fillRect(lane.rect, overview && current ? QColor(0xe6, 0xee, 0xf8) : TimelineStyle::laneColor());

    // The label; a stage's label spans its compute lane and its communication strip.
    QString label;
    QRectF labelRect(8, lane.rect.top(), kLabelWidth - 16, lane.rect.height());
    switch (lane.kind) {
    case LaneKind::Compute:
        label = tr("compute");
        break;
    case LaneKind::Communication:
        label = tr("communication");
        break;
    case LaneKind::Stage: {
        label = tr("stage %1").arg(lane.classIndex);
        for (const Lane& other : lanes())
            if (other.kind == LaneKind::StageCommunication && other.classIndex == lane.classIndex)
                labelRect.setBottom(other.rect.bottom());
        break;
    }
    case LaneKind::StageCommunication:
        break;
    case LaneKind::MeasuredCompute:
        label = tr("measured compute");
        break;
    case LaneKind::MeasuredCommunication:
        label = tr("measured comm.");
        break;
    }
    if (!label.isEmpty() && labelRect.height() >= 8) {
        QFont font = p.font();
        font.setBold(overview && current);
        if (labelRect.height() < 12)
            font.setPixelSize(std::max(8, static_cast<int>(labelRect.height())));
        p.save();
        p.setFont(font);
        p.setPen(current ? GraphStyle::textColor() : GraphStyle::subtitleColor());
        p.drawText(labelRect, Qt::AlignRight | Qt::AlignVCenter, label);
        p.restore();
    }
    if (overview && current)
        p.fillRect(QRectF(lane.rect.left() - 4, lane.rect.top(), 3, lane.rect.height()), QColor(0x3d, 0x6f, 0xb0));

    p.save();
    p.setClipRect(lane.rect);
    const bool measured = lane.kind == LaneKind::MeasuredCompute || lane.kind == LaneKind::MeasuredCommunication;
    paintSpans(p, spans(lane), lane.rect, overview || measured ? -1 : lane.classIndex);
    paintMatches(p, lane);
    p.restore();
}

void TimelineChart::paintMatches(QPainter& p, const Lane& lane)
{
    if (m_search.isEmpty())
        return;
    const std::vector<TimelineSpan>& v = spans(lane);
    const double t1 = m_axis.time(lane.rect.right());
    auto it = std::lower_bound(
        v.begin(), v.end(), m_axis.time(lane.rect.left()), [](const TimelineSpan& s, double t) { return s.endS < t; });
    p.setPen(QPen(QColor(0xe6, 0x5c, 0x00), 2));
    p.setBrush(Qt::NoBrush);
    double lastX = -1;
    for (; it != v.end() && it->startS <= t1; ++it) {
        if (!matches(lane.classIndex, it->node))
            continue;
        const double x0 = m_axis.x(it->startS);
        if (x0 < lastX + 1)
            continue; // one outline per pixel column
        const double w = std::max(3.0, m_axis.x(it->endS) - x0);
        p.drawRect(QRectF(x0, lane.rect.top() + 1, w, lane.rect.height() - 2));
        lastX = x0;
    }
}

void TimelineChart::paintSpans(QPainter& p, const std::vector<TimelineSpan>& v, const QRectF& rect, int namesOf)
{
    const TimeAxis& a = m_axis;
    const double t1 = a.time(rect.right());
    auto it = std::lower_bound(
        v.begin(), v.end(), a.time(rect.left()), [](const TimelineSpan& s, double t) { return s.endS < t; });
    size_t i = static_cast<size_t>(it - v.begin());
    const size_t n = v.size();
    const double top = rect.top(), height = rect.height();
    RunPainter runs(p, top, height);
    const QFontMetricsF fm(p.font());
    // Wide bars of the shown class's lanes carry their node's name.
    const ClassProgram* program =
        namesOf >= 0 && m_result && height >= fm.height() ? &m_result->classes[static_cast<size_t>(namesOf)] : nullptr;
    while (i < n && v[i].startS <= t1) {
        const TimelineSpan& s = v[i];
        const double x0 = a.x(s.startS), x1 = a.x(s.endS);
        if (x1 - x0 >= 1.0) {
            runs.flush();
            const QRectF bar(x0, top, x1 - x0, height);
            if (bar.width() >= kBorderMinWidth) {
                p.fillRect(bar, s.hidden ? TimelineStyle::hiddenFillColor(s.style) : TimelineStyle::fillColor(s.style));
                if (s.style == TimelineBarStyle::Recompute && bar.width() >= 6)
                    p.fillRect(bar, QBrush(TimelineStyle::hatchColor(), Qt::BDiagPattern));
                p.setPen(TimelineStyle::borderColor(s.style));
                p.drawRect(bar.adjusted(0.5, 0.5, -0.5, -0.5));
                if (program && bar.width() > 30) {
                    const QRectF textRect = bar.intersected(rect).adjusted(4, 0, -3, 0);
                    const QString text = fm.elidedText(
                        QString::fromStdString(program->nodes[s.node].name), Qt::ElideRight, textRect.width());
                    if (!text.isEmpty() && text != QStringLiteral("\u2026")) {
                        p.setPen(GraphStyle::textColor());
                        p.drawText(textRect, Qt::AlignLeft | Qt::AlignVCenter, text);
                    }
                }
            } else {
                runs.add(x0, x1, TimelineStyle::solidColor(s.style));
            }
            ++i;
            continue;
        }
        // Spans starting in this pixel column become one column. They do not overlap, so only the last of them
        // can reach past the column; a long last one is drawn on its own.
        const double column = std::floor(x0);
        const double columnEndS = a.time(column + 1);
        auto end = std::lower_bound(v.begin() + static_cast<std::ptrdiff_t>(i) + 1, v.end(), columnEndS,
            [](const TimelineSpan& span, double t) { return span.startS < t; });
        size_t j = static_cast<size_t>(end - v.begin());
        if (j - 1 > i && a.x(v[j - 1].endS) > column + 1.5)
            --j;
        const size_t stride = std::max<size_t>(1, (j - i) / kColourSamples);
        size_t longest = i;
        for (size_t k = i; k < j; k += stride)
            if (v[k].endS - v[k].startS > v[longest].endS - v[longest].startS)
                longest = k;
        runs.add(column, std::max(column + 1, a.x(v[j - 1].endS)), TimelineStyle::solidColor(v[longest].style));
        i = j;
    }
}

} // namespace stagecraft
