// SPDX-License-Identifier: MIT
#include "graph/graphcanvas.h"

#include "graph/graphnodeitem.h"

#include <QMouseEvent>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace stagecraft {

GraphCanvas::GraphCanvas(QGraphicsScene* scene, QWidget* parent)
    : QGraphicsView(scene, parent)
{
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(ScrollHandDrag);
    setTransformationAnchor(AnchorUnderMouse);
    setResizeAnchor(AnchorViewCenter);
    setViewportUpdateMode(SmartViewportUpdate);
    setBackgroundBrush(QColor(0xfb, 0xfb, 0xfa));
    setFrameShape(QFrame::NoFrame);
}

GraphCanvas::~GraphCanvas() = default;

double GraphCanvas::zoom() const
{
    return transform().m11();
}

void GraphCanvas::setZoom(double scale)
{
    scale = std::clamp(scale, kMinScale, kMaxScale);
    const double current = zoom();
    if (current <= 0 || std::abs(scale - current) < 1e-9)
        return;
    QGraphicsView::scale(scale / current, scale / current);
    Q_EMIT zoomChanged(scale);
}

void GraphCanvas::zoomBy(double factor)
{
    const ViewportAnchor anchor = transformationAnchor();
    setTransformationAnchor(AnchorViewCenter);
    setZoom(zoom() * factor);
    setTransformationAnchor(anchor);
}

bool GraphCanvas::fitScene(double minScale)
{
    const QRectF rect = sceneRect();
    if (rect.isEmpty() || viewport()->width() < 10 || viewport()->height() < 10)
        return true;
    const double fit = std::min((viewport()->width() - 8) / rect.width(), (viewport()->height() - 8) / rect.height());
    const double scale = std::clamp(fit, std::max(minScale, kMinScale), 1.0);
    resetTransform();
    QGraphicsView::scale(scale, scale);
    const bool fits = fit >= scale;
    if (fits)
        centerOn(rect.center());
    else
        centerOn(QPointF(rect.center().x(), rect.top() + viewport()->height() / scale / 2));
    Q_EMIT zoomChanged(scale);
    return fits;
}

void GraphCanvas::showNearTop(const QPointF& anchor)
{
    constexpr double kTopMarginPx = 80; // room for the summaries above the first node
    const double scale = zoom();
    if (scale <= 0)
        return;
    centerOn(QPointF(anchor.x(), anchor.y() - kTopMarginPx / scale + viewport()->height() / scale / 2));
}

void GraphCanvas::wheelEvent(QWheelEvent* event)
{
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    setZoom(zoom() * std::pow(1.15, steps));
    event->accept();
}

void GraphCanvas::mouseDoubleClickEvent(QMouseEvent* event)
{
    for (QGraphicsItem* item : items(event->position().toPoint())) {
        if (item->type() == GraphNodeItem::Type) {
            Q_EMIT nodeActivated(static_cast<GraphNodeItem*>(item)->specIndex());
            event->accept();
            return;
        }
    }
    QGraphicsView::mouseDoubleClickEvent(event);
}

} // namespace stagecraft
