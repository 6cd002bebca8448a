// SPDX-License-Identifier: MIT
#include "graph/graphnodeitem.h"

#include "graph/graphedgeitem.h"
#include "graph/graphstyle.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace stagecraft {

GraphNodeItem::GraphNodeItem(int32_t specIndex, const GraphSpecNode& node, const QRectF& rect)
    : m_specIndex(specIndex)
    , m_node(node)
    , m_rect(rect)
    , m_path(GraphStyle::nodeShape(node.kind, rect))
{
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(false);
    setCursor(Qt::PointingHandCursor);
    setToolTip(node.subtitle.isEmpty() ? node.title : node.title + QLatin1Char('\n') + node.subtitle);
}

GraphNodeItem::~GraphNodeItem() = default;

QRectF GraphNodeItem::boundingRect() const
{
    return m_rect.adjusted(-3, -3, 3, 3);
}

QPainterPath GraphNodeItem::shape() const
{
    return m_path;
}

void GraphNodeItem::addEdge(GraphEdgeItem* edge)
{
    m_edges.push_back(edge);
}

QVariant GraphNodeItem::itemChange(GraphicsItemChange change, const QVariant& value)
{
    if (change == ItemSelectedHasChanged) {
        for (GraphEdgeItem* edge : m_edges)
            edge->setHighlighted(value.toBool());
    }
    return QGraphicsItem::itemChange(change, value);
}

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget)
{
    Q_UNUSED(widget);
    painter->setRenderHint(QPainter::Antialiasing);
    const bool selected = option->state & QStyle::State_Selected;
    const bool recompute = GraphStyle::isRecompute(m_node);

    painter->setPen(Qt::NoPen);
    painter->setBrush(GraphStyle::fillColor(m_node));
    painter->drawPath(m_path);
    if (recompute) {
        painter->setBrush(QBrush(GraphStyle::hatchColor(), Qt::BDiagPattern));
        painter->drawPath(m_path);
    }
    QPen border(selected ? GraphStyle::selectionColor() : GraphStyle::borderColor(m_node), selected ? 2.4 : 1.2);
    if (recompute && !selected)
        border.setStyle(Qt::DashLine);
    painter->setPen(border);
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(m_path);

    // Below about 40 % the text is unreadable anyway; skipping it keeps large graphs fluid.
    const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
    if (lod < 0.4)
        return;
    const QRectF text = GraphStyle::textRect(m_node.kind, m_rect);
    // Painting happens on the GUI thread only; measuring fonts once keeps thousands of nodes cheap.
    static const QFont titleFont = GraphStyle::titleFont();
    static const QFont subtitleFont = GraphStyle::subtitleFont();
    static const QFontMetricsF titleMetrics(titleFont);
    static const QFontMetricsF subtitleMetrics(subtitleFont);
    const double total = titleMetrics.height() + (m_node.subtitle.isEmpty() ? 0 : subtitleMetrics.height());
    double y = text.center().y() - total / 2;
    painter->setFont(titleFont);
    painter->setPen(GraphStyle::textColor());
    painter->drawText(QRectF(text.left(), y, text.width(), titleMetrics.height()), Qt::AlignCenter, m_node.title);
    if (!m_node.subtitle.isEmpty()) {
        y += titleMetrics.height();
        painter->setFont(subtitleFont);
        painter->setPen(GraphStyle::subtitleColor());
        painter->drawText(
            QRectF(text.left(), y, text.width(), subtitleMetrics.height()), Qt::AlignCenter, m_node.subtitle);
    }
}

} // namespace stagecraft
