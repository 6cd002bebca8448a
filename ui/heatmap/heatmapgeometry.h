// SPDX-License-Identifier: MIT
#pragma once

#include <QPoint>
#include <QRectF>
#include <algorithm>
#include <cmath>

namespace stagecraft {

/// Where the cells of a units x units heatmap sit in a widget: a square plot rectangle split into equal cells,
/// row = sender (top to bottom), column = receiver (left to right). Plain value; the widget and its tests share it.
struct HeatmapGeometry
{
    QRectF plot; ///< the square the cells fill
    int units = 0;

    /// The largest square inside `available`, anchored at its top-left, for `units` cells per side. When each cell
    /// gets at least one pixel, the cell size is a whole number of pixels so that every cell is equally wide.
    static HeatmapGeometry fit(const QRectF& available, int units)
    {
        HeatmapGeometry g;
        g.units = std::max(units, 0);
        double side = std::max(0.0, std::min(available.width(), available.height()));
        if (g.units > 0 && side >= g.units)
            side = std::floor(side / g.units) * g.units;
        g.plot = QRectF(available.topLeft(), QSizeF(side, side));
        return g;
    }

    double cellSize() const
    {
        return units > 0 ? plot.width() / units : 0.0;
    }
    /// The cell under `p` as (x = column, y = row), or (-1, -1) outside the plot.
    QPoint cellAt(const QPointF& p) const
    {
        if (units <= 0 || plot.width() <= 0 || p.x() < plot.left() || p.y() < plot.top() || p.x() >= plot.right()
            || p.y() >= plot.bottom())
            return QPoint(-1, -1);
        const double cell = cellSize();
        const int column = std::min(units - 1, static_cast<int>((p.x() - plot.left()) / cell));
        const int row = std::min(units - 1, static_cast<int>((p.y() - plot.top()) / cell));
        return QPoint(column, row);
    }
    QRectF cellRect(int row, int column) const
    {
        const double cell = cellSize();
        return QRectF(plot.left() + column * cell, plot.top() + row * cell, cell, cell);
    }
    /// Centre of unit `index` along an axis (x for columns, y for rows).
    double columnCenter(int column) const
    {
        return plot.left() + (column + 0.5) * cellSize();
    }
    double rowCenter(int row) const
    {
        return plot.top() + (row + 0.5) * cellSize();
    }
};

} // namespace stagecraft
