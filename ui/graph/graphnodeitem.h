// SPDX-License-Identifier: MIT
#pragma once

#include "graph/graphspec.h"

#include <QGraphicsItem>
#include <QPainterPath>

namespace stagecraft {

class GraphEdgeItem;

/// One node of the graph scene, drawn in the shape and colours of its kind (GraphStyle). Selectable; the view shows
/// the selected node's details. Holds a copy of its spec node (GUI thread only).
class GraphNodeItem : public QGraphicsItem
{
public:
    enum
    {
        Type = UserType + 1
    };

    GraphNodeItem(int32_t specIndex, const GraphSpecNode& node, const QRectF& rect);
    ~GraphNodeItem() override;

    int type() const override
    {
        return Type;
    }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    int32_t specIndex() const
    {
        return m_specIndex;
    }
    const GraphSpecNode& node() const
    {
        return m_node;
    }
    /// Edges ending or starting here, highlighted while this node is selected.
    void addEdge(GraphEdgeItem* edge);

protected:
    QVariant itemChange(GraphicsItemChange change, const QVariant& value) override;

private:
    int32_t m_specIndex;
    GraphSpecNode m_node;
    QRectF m_rect;
    QPainterPath m_path;
    std::vector<GraphEdgeItem*> m_edges;
};

} // namespace stagecraft
