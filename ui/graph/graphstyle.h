// SPDX-License-Identifier: MIT
#pragma once

#include "graph/graphspec.h"

#include <QColor>
#include <QFont>
#include <QPainterPath>
#include <QPen>
#include <QSizeF>

namespace stagecraft {

/// Shapes, colours and text metrics of the graph view, shared by the scene items, the legend, the SVG writer and
/// the spec builder (which sizes nodes for the layout). Geometry is in points (= scene units, 1 pt = 1 px at
/// 100 %). Reentrant: usable from a worker as long as the fonts were made on the GUI thread.
class GraphStyle
{
public:
    /// Fonts of the first and second label line. Sized in pixels so that scene, PNG and SVG agree.
    static QFont titleFont();
    static QFont subtitleFont();

    /// The outline of a node of `kind` filling `rect`: compute a rounded rectangle, collective a hexagon, send a
    /// right-pointing arrow (pentagon), recv a parallelogram, summary a folder.
    static QPainterPath nodeShape(GraphNodeKind kind, const QRectF& rect);
    /// The part of `rect` that holds the label inside the shape.
    static QRectF textRect(GraphNodeKind kind, const QRectF& rect);
    /// Size of a node of `kind` whose label has these lines, with the fonts given (measured on any thread).
    static QSizeF nodeSize(GraphNodeKind kind, const QString& title, const QString& subtitle, const QFont& titleFont,
        const QFont& subtitleFont);

    static QColor fillColor(const GraphSpecNode& node);
    static QColor borderColor(const GraphSpecNode& node);
    /// Recomputed forward ops get a dashed border and a hatched fill.
    static bool isRecompute(const GraphSpecNode& node);
    static QColor hatchColor();
    static QColor collectiveColor(CollectiveType type);
    static QColor textColor();
    static QColor subtitleColor();
    static QColor selectionColor();

    /// Data edges are solid and dark, schedule (control) edges dashed and light; aggregated edges are wider.
    static QPen edgePen(GraphEdgeKind kind, int64_t count);
    static double arrowSizePt();
    /// Opacity of long edges drawn direct instead of routed by dot (GraphEdgeRoute::direct).
    static double directEdgeOpacity();
};

} // namespace stagecraft
