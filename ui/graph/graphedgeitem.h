// SPDX-License-Identifier: MIT
#pragma once

#include "graph/graphspec.h"

#include <QGraphicsItem>
#include <QPainterPath>
#include <QPolygonF>

namespace stagecraft {

/// One edge of the graph scene: the Bézier route dot computed, with an arrow head. Data edges solid, schedule
/// (control) edges dashed (GraphStyle::edgePen). Not selectable; highlighted while an end node is selected.
class GraphEdgeItem : public QGraphicsItem
{
public:
    enum
    {
        Type = UserType + 2
    };

    GraphEdgeItem(const GraphSpecEdge& edge, const GraphEdgeRoute& route);
    ~GraphEdgeItem() override;

    int type() const override
    {
        return Type;
    }
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    const GraphSpecEdge& edge() const
    {
        return m_edge;
    }
    void setHighlighted(bool highlighted);

    /// The route as a painter path (cubic segments) and its arrow head polygon; shared with the SVG writer.
    static QPainterPath routePath(const GraphEdgeRoute& route);
    static QPolygonF arrowHead(const GraphEdgeRoute& route);

private:
    GraphSpecEdge m_edge;
    QPainterPath m_path;
    QPolygonF m_arrow;
    QRectF m_bounds;
    bool m_highlighted = false;
    bool m_direct = false;
};

} // namespace stagecraft
