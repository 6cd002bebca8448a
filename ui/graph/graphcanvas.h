// SPDX-License-Identifier: MIT
#pragma once

#include <QGraphicsView>

namespace stagecraft {

/// The graph's QGraphicsView: the wheel zooms around the cursor, dragging the background pans, a click selects a
/// node, a double click activates it.
class GraphCanvas : public QGraphicsView
{
    Q_OBJECT
public:
    explicit GraphCanvas(QGraphicsScene* scene, QWidget* parent = nullptr);
    ~GraphCanvas() override;

    static constexpr double kMinScale = 0.03;
    static constexpr double kMaxScale = 4.0;

    double zoom() const;
    /// Scales by `factor` around the view's centre, clamped to [kMinScale, kMaxScale].
    void zoomBy(double factor);
    void setZoom(double scale);
    /// Shows the whole scene, but never magnified beyond 100 % nor shrunk below `minScale`. Returns false when the
    /// scene does not fit at `minScale`; then its top centre is shown.
    bool fitScene(double minScale = 0.25);
    /// Scrolls so that `anchor` (scene coordinates) is horizontally centred and near the top of the view.
    void showNearTop(const QPointF& anchor);

Q_SIGNALS:
    /// A node item was double-clicked (its GraphNodeItem::specIndex()).
    void nodeActivated(int specIndex);
    void zoomChanged(double scale);

protected:
    void wheelEvent(QWheelEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
};

} // namespace stagecraft
