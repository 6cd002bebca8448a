// SPDX-License-Identifier: MIT
#include "graph/graphedgeitem.h"

#include "graph/graphstyle.h"

#include <QLineF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace stagecraft {

GraphEdgeItem::GraphEdgeItem(const GraphSpecEdge& edge, const GraphEdgeRoute& route)
    : m_edge(edge)
    , m_path(routePath(route))
    , m_arrow(arrowHead(route))
    , m_direct(route.direct)
{
    const double margin = GraphStyle::edgePen(edge.kind, edge.count).widthF() + 2;
    m_bounds = m_path.boundingRect().united(m_arrow.boundingRect()).adjusted(-margin, -margin, margin, margin);
    setZValue(edge.kind == GraphEdgeKind::Ctrl ? -2 : -1);
    setAcceptedMouseButtons(Qt::NoButton);
}

GraphEdgeItem::~GraphEdgeItem() = default;

QPainterPath GraphEdgeItem::routePath(const GraphEdgeRoute& route)
{
    QPainterPath path;
    if (route.bezier.empty())
        return path;
    path.moveTo(route.bezier.front());
    size_t i = 1;
    for (; i + 2 < route.bezier.size(); i += 3)
        path.cubicTo(route.bezier[i], route.bezier[i + 1], route.bezier[i + 2]);
    for (; i < route.bezier.size(); ++i)
        path.lineTo(route.bezier[i]);
    return path;
}

QPolygonF GraphEdgeItem::arrowHead(const GraphEdgeRoute& route)
{
    if (!route.hasArrow || route.bezier.empty())
        return {};
    // dot ends the curve one arrow length before the head node; the arrow spans that gap.
    const QPointF base = route.bezier.back();
    const QLineF axis(route.arrowTip, base);
    if (axis.length() < 0.01)
        return {};
    const QLineF unit = axis.unitVector();
    const QPointF dir = unit.p2() - unit.p1();
    const QPointF normal(-dir.y(), dir.x());
    const double halfWidth = GraphStyle::arrowSizePt() / 2;
    return QPolygonF({ route.arrowTip, base + normal * halfWidth, base - normal * halfWidth });
}

QRectF GraphEdgeItem::boundingRect() const
{
    return m_bounds;
}

void GraphEdgeItem::setHighlighted(bool highlighted)
{
    if (m_highlighted == highlighted)
        return;
    m_highlighted = highlighted;
    setZValue(highlighted ? 0.5 : (m_edge.kind == GraphEdgeKind::Ctrl ? -2 : -1));
    update();
}

void GraphEdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget)
{
    Q_UNUSED(option);
    Q_UNUSED(widget);
    QPen pen = GraphStyle::edgePen(m_edge.kind, m_edge.count);
    if (m_highlighted) {
        pen.setColor(GraphStyle::selectionColor());
        pen.setWidthF(pen.widthF() + 0.8);
    } else if (m_direct) {
        // Long edges dot did not route cut straight across the graph; keep them in the background.
        QColor faded = pen.color();
        faded.setAlphaF(GraphStyle::directEdgeOpacity());
        pen.setColor(faded);
    }
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setBrush(Qt::NoBrush);
    painter->setPen(pen);
    painter->drawPath(m_path);
    if (!m_arrow.isEmpty()) {
        painter->setPen(QPen(pen.color(), 1));
        painter->setBrush(pen.color());
        painter->drawPolygon(m_arrow);
    }
}

} // namespace stagecraft
