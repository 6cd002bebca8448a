// SPDX-License-Identifier: MIT
#include "heatmap/heatmapwidget.h"

#include "models/formatting.h"

#include <QAbstractItemModel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <cmath>

namespace stagecraft {

namespace {

    constexpr double kLeftMargin = 64; // row tick labels and the rotated axis title
    constexpr double kBottomMargin = 44; // column tick labels and the axis title
    constexpr double kLegendWidth = 118; // gap, colour bar and its labels
    constexpr double kBarWidth = 16;
    const QColor kEmptyCell(0xf2, 0xf2, 0xf2);
    const QColor kHighlight(0xff, 0x6f, 0x00);

} // namespace

HeatmapWidget::HeatmapWidget(QWidget* parent)
    : QWidget(parent)
{
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setBackgroundRole(QPalette::Base);
    setAutoFillBackground(true);
}

HeatmapWidget::~HeatmapWidget() = default;

void HeatmapWidget::setModel(QAbstractItemModel* model)
{
    m_model = model;
}

void HeatmapWidget::setImage(const QImage& cells, const LogColorScale& scale, const QString& unitName)
{
    m_image = cells;
    m_scale = scale;
    m_unitName = unitName;
    m_highlighted.clear();
    m_hovered = QPoint(-1, -1);
    update();
}

void HeatmapWidget::setBoundaryEvery(int units)
{
    m_boundaryEvery = units;
    update();
}

void HeatmapWidget::setHighlightedUnits(std::vector<int> units)
{
    m_highlighted = std::move(units);
    update();
}

void HeatmapWidget::setHoveredCell(int row, int column)
{
    const QPoint cell(column, row);
    if (cell == m_hovered)
        return;
    m_hovered = cell;
    update();
    Q_EMIT cellHovered(row, column);
}

QPoint HeatmapWidget::hoveredCell() const
{
    return m_hovered;
}

void HeatmapWidget::setTitle(const QString& title)
{
    m_title = title;
    update();
}

void HeatmapWidget::setEmptyText(const QString& text)
{
    m_emptyText = text;
    update();
}

const QImage& HeatmapWidget::image() const
{
    return m_image;
}

const LogColorScale& HeatmapWidget::scale() const
{
    return m_scale;
}

QColor HeatmapWidget::emptyCellColor()
{
    return kEmptyCell;
}

QSize HeatmapWidget::sizeHint() const
{
    return QSize(760, 720);
}

QSize HeatmapWidget::minimumSizeHint() const
{
    return QSize(360, 320);
}

HeatmapWidget::Layout HeatmapWidget::computeLayout() const
{
    Layout l;
    const QFontMetricsF fm(font());
    const double titleHeight = m_title.isEmpty() ? 0 : fm.height() * 1.3 + 6;
    l.title = QRectF(0, 4, width(), titleHeight);
    const QRectF available(kLeftMargin, titleHeight + 10, width() - kLeftMargin - kLegendWidth,
        height() - titleHeight - 10 - kBottomMargin);
    l.cells = HeatmapGeometry::fit(available, m_image.isNull() ? 0 : m_image.width());
    const QRectF plot = l.cells.plot;
    l.legendBar = QRectF(plot.right() + 22, plot.top() + 26, kBarWidth, std::max(0.0, plot.height() - 62));
    return l;
}

HeatmapGeometry HeatmapWidget::geometry() const
{
    return computeLayout().cells;
}

int HeatmapWidget::tickStep(double cellSize, double minSpacing) const
{
    int step = 1;
    while (step * cellSize < minSpacing && step < (1 << 20))
        step *= 2;
    return step;
}

void HeatmapWidget::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing, false);
    const Layout l = computeLayout();
    const QFontMetricsF fm(font());
    const QColor text = palette().color(QPalette::Text);
    QColor muted = text;
    muted.setAlphaF(0.65);

    if (!m_title.isEmpty()) {
        QFont bold = font();
        bold.setBold(true);
        bold.setPointSizeF(font().pointSizeF() * 1.12);
        p.setFont(bold);
        p.setPen(text);
        p.drawText(l.title, Qt::AlignHCenter | Qt::AlignVCenter, m_title);
        p.setFont(font());
    }

    const HeatmapGeometry& g = l.cells;
    if (m_image.isNull() || g.units <= 0 || g.plot.width() <= 0) {
        p.setPen(muted);
        p.drawText(rect(), Qt::AlignCenter, m_emptyText.isEmpty() ? tr("No result") : m_emptyText);
        return;
    }

    // Cells: nearest-neighbour scaling keeps every cell a flat colour.
    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    p.drawImage(g.plot, m_image);
    const double cell = g.cellSize();
    if (cell >= 10) {
        p.setPen(QPen(palette().color(QPalette::Base), 1));
        for (int i = 1; i < g.units; ++i) {
            const double x = g.plot.left() + i * cell;
            const double y = g.plot.top() + i * cell;
            p.drawLine(QPointF(x, g.plot.top()), QPointF(x, g.plot.bottom()));
            p.drawLine(QPointF(g.plot.left(), y), QPointF(g.plot.right(), y));
        }
    }
    if (m_boundaryEvery > 0 && m_boundaryEvery < g.units && cell * m_boundaryEvery >= 6) {
        p.setPen(QPen(QColor(255, 255, 255, 200), cell >= 4 ? 2 : 1));
        for (int i = m_boundaryEvery; i < g.units; i += m_boundaryEvery) {
            const double x = g.plot.left() + i * cell;
            const double y = g.plot.top() + i * cell;
            p.drawLine(QPointF(x, g.plot.top()), QPointF(x, g.plot.bottom()));
            p.drawLine(QPointF(g.plot.left(), y), QPointF(g.plot.right(), y));
        }
    }
    p.setPen(QPen(muted, 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(g.plot);

    // Highlighted units: bars along the left and bottom edges.
    if (!m_highlighted.empty()) {
        p.setPen(Qt::NoPen);
        p.setBrush(kHighlight);
        for (int u : m_highlighted) {
            if (u < 0 || u >= g.units)
                continue;
            const double extent = std::max(cell, 2.0);
            p.drawRect(QRectF(g.plot.left() - 6, g.plot.top() + u * cell, 4, extent));
            p.drawRect(QRectF(g.plot.left() + u * cell, g.plot.bottom() + 2, extent, 4));
        }
    }

    // Tick labels: unit numbers every power-of-two step that leaves room for the text.
    p.setPen(text);
    const int lastUnit = g.units - 1;
    const double labelWidth = fm.horizontalAdvance(QString::number(lastUnit)) + 8;
    const int rowStep = tickStep(cell, fm.height() + 2);
    const int columnStep = tickStep(cell, labelWidth);
    for (int r = 0; r < g.units; r += rowStep) {
        const QRectF box(g.plot.left() - 8 - 60, g.rowCenter(r) - fm.height() / 2, 60, fm.height());
        p.drawText(box, Qt::AlignRight | Qt::AlignVCenter, QString::number(r));
    }
    for (int c = 0; c < g.units; c += columnStep) {
        const QRectF box(g.columnCenter(c) - labelWidth / 2, g.plot.bottom() + 8, labelWidth, fm.height());
        p.drawText(box, Qt::AlignHCenter | Qt::AlignTop, QString::number(c));
    }
    p.setPen(muted);
    p.drawText(QRectF(g.plot.left(), g.plot.bottom() + 8 + fm.height(), g.plot.width(), fm.height() + 4),
        Qt::AlignHCenter | Qt::AlignVCenter, tr("receiver %1 \u2192").arg(m_unitName));
    p.save();
    p.translate(12, g.plot.center().y());
    p.rotate(-90);
    p.drawText(QRectF(-g.plot.height() / 2, -fm.height() / 2 - 2, g.plot.height(), fm.height() + 4),
        Qt::AlignHCenter | Qt::AlignVCenter, tr("\u2190 sender %1").arg(m_unitName));
    p.restore();

    // Hovered cell.
    if (m_hovered.x() >= 0 && m_hovered.y() >= 0 && m_hovered.x() < g.units && m_hovered.y() < g.units) {
        const QRectF r = g.cellRect(m_hovered.y(), m_hovered.x()).adjusted(-1, -1, 1, 1);
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(Qt::white, 3));
        p.drawRect(r.adjusted(-1, -1, 1, 1));
        p.setPen(QPen(Qt::black, 1.5));
        p.drawRect(r.adjusted(-1, -1, 1, 1));
    }

    // Colour legend: the log scale bottom (smallest non-zero cell) to top (largest), byte ticks, and the swatch
    // of empty cells.
    const QRectF bar = l.legendBar;
    if (bar.height() > 20) {
        p.setPen(text);
        p.drawText(
            QRectF(bar.left() - 14, g.plot.top() - 2, kLegendWidth, fm.height()), Qt::AlignLeft, tr("bytes (log)"));
        const int h = static_cast<int>(bar.height());
        for (int y = 0; y < h; ++y) {
            const double t = 1.0 - (y + 0.5) / h;
            p.setPen(LogColorScale::viridis(t));
            p.drawLine(QPointF(bar.left(), bar.top() + y + 0.5), QPointF(bar.right(), bar.top() + y + 0.5));
        }
        p.setPen(QPen(muted, 1));
        p.setBrush(Qt::NoBrush);
        p.drawRect(bar);
        auto yOf = [&](double value) { return bar.bottom() - m_scale.position(value) * bar.height(); };
        const int maxTicks = std::max(2, static_cast<int>(bar.height() / (fm.height() * 1.8)));
        std::vector<double> ticks = m_scale.byteTicks(maxTicks);
        const double minGap = fm.height() + 1;
        auto drawTick = [&](double value, const QString& label, bool bold) {
            const double y = yOf(value);
            p.setPen(text);
            p.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 4, y));
            QFont f = font();
            f.setBold(bold);
            p.setFont(f);
            p.drawText(QRectF(bar.right() + 7, y - fm.height() / 2, kLegendWidth, fm.height()),
                Qt::AlignLeft | Qt::AlignVCenter, label);
            p.setFont(font());
        };
        // The extremes are labelled in bold; round ticks too close to them are dropped.
        const double yMax = yOf(m_scale.maxValue());
        const double yMin = yOf(m_scale.minValue());
        for (double v : ticks) {
            const double y = yOf(v);
            if (std::abs(y - yMax) >= minGap && std::abs(y - yMin) >= minGap)
                drawTick(v, formatByteCount(v), false);
        }
        drawTick(m_scale.maxValue(), formatByteCount(m_scale.maxValue()), true);
        if (m_scale.minValue() < m_scale.maxValue())
            drawTick(m_scale.minValue(), formatByteCount(m_scale.minValue()), true);
        const QRectF swatch(bar.left(), bar.bottom() + 12, kBarWidth, kBarWidth * 0.8);
        p.setPen(QPen(muted, 1));
        p.setBrush(kEmptyCell);
        p.drawRect(swatch);
        p.setPen(text);
        p.drawText(QRectF(swatch.right() + 7, swatch.top() - 2, kLegendWidth, swatch.height() + 4),
            Qt::AlignLeft | Qt::AlignVCenter, tr("none"));
    }
}

void HeatmapWidget::mouseMoveEvent(QMouseEvent* event)
{
    const QPoint cell = geometry().cellAt(event->position());
    setHoveredCell(cell.y(), cell.x());
    if (cell.x() >= 0 && m_model && cell.y() < m_model->rowCount() && cell.x() < m_model->columnCount()) {
        const QString tip = m_model->data(m_model->index(cell.y(), cell.x()), Qt::ToolTipRole).toString();
        QToolTip::showText(event->globalPosition().toPoint(), tip, this);
    } else {
        QToolTip::hideText();
    }
    QWidget::mouseMoveEvent(event);
}

void HeatmapWidget::leaveEvent(QEvent* event)
{
    setHoveredCell(-1, -1);
    QWidget::leaveEvent(event);
}

} // namespace stagecraft
