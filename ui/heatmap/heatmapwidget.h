// SPDX-License-Identifier: MIT
#pragma once

#include "heatmap/colorscale.h"
#include "heatmap/heatmapgeometry.h"

#include <QImage>
#include <QPointer>
#include <QWidget>
#include <vector>

class QAbstractItemModel;

namespace stagecraft {

/// Paints a square units x units heatmap from a pre-rendered QImage (one pixel per cell, built by a worker), with
/// row/column tick labels, axis titles, optional group boundaries, a log colour legend with byte ticks, and hover:
/// the cell under the mouse is outlined, its model ToolTipRole text shown as a tooltip and emitted.
/// Row = sender, column = receiver.
class HeatmapWidget : public QWidget
{
    Q_OBJECT
public:
    explicit HeatmapWidget(QWidget* parent = nullptr);
    ~HeatmapWidget() override;

    /// The model whose ToolTipRole text describes a cell (rows x columns = units x units); not owned.
    void setModel(QAbstractItemModel* model);
    /// Shows `cells` (units x units pixels) coloured with `scale`. `unitName` labels the axes ("rank", "node").
    void setImage(const QImage& cells, const LogColorScale& scale, const QString& unitName);
    /// Draws separators every `units` rows/columns (e.g. node boundaries on a rank matrix); 0 for none.
    void setBoundaryEvery(int units);
    /// Marks units on both axes (e.g. the members of a selected communicator group).
    void setHighlightedUnits(std::vector<int> units);
    /// Outlines a cell as if hovered ((-1, -1): none) and emits cellHovered.
    void setHoveredCell(int row, int column);
    QPoint hoveredCell() const;
    void setTitle(const QString& title);
    void setEmptyText(const QString& text);

    /// The current cell layout (widget coordinates).
    HeatmapGeometry geometry() const;
    const QImage& image() const;
    const LogColorScale& scale() const;

    /// The colour of cells without traffic (renderCommMatrixImage's background).
    static QColor emptyCellColor();

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    /// The mouse moved onto cell (row, column); (-1, -1) when it left the plot.
    void cellHovered(int row, int column);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    struct Layout
    {
        QRectF title;
        HeatmapGeometry cells;
        QRectF legendBar;
    };
    Layout computeLayout() const;
    int tickStep(double cellSize, double minSpacing) const;

    QPointer<QAbstractItemModel> m_model;
    QImage m_image;
    LogColorScale m_scale;
    QString m_unitName = QStringLiteral("rank");
    QString m_title;
    QString m_emptyText;
    int m_boundaryEvery = 0;
    std::vector<int> m_highlighted;
    QPoint m_hovered { -1, -1 };
};

} // namespace stagecraft
