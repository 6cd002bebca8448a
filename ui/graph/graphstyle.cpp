// SPDX-License-Identifier: MIT
#include "graph/graphstyle.h"

#include <QFontMetricsF>
#include <algorithm>
#include <cmath>

namespace stagecraft {

namespace {

    constexpr double kPadX = 9;
    constexpr double kPadY = 5;
    constexpr double kHexInset = 11; ///< horizontal depth of a hexagon's side points
    constexpr double kArrowDepth = 12; ///< send: depth of the arrow tip
    constexpr double kSlant = 9; ///< recv: horizontal slant of the parallelogram
    constexpr double kTabHeight = 6; ///< summary: height of the folder tab
    constexpr double kMinWidth = 64;

    QColor mix(const QColor& a, const QColor& b, double t)
    {
        return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t), float(a.greenF() * (1 - t) + b.greenF() * t),
            float(a.blueF() * (1 - t) + b.blueF() * t));
    }

} // namespace

QFont GraphStyle::titleFont()
{
    QFont font;
    font.setPixelSize(11);
    return font;
}

QFont GraphStyle::subtitleFont()
{
    QFont font;
    font.setPixelSize(10);
    return font;
}

QPainterPath GraphStyle::nodeShape(GraphNodeKind kind, const QRectF& r)
{
    QPainterPath path;
    switch (kind) {
    case GraphNodeKind::Compute:
        path.addRoundedRect(r, 6, 6);
        break;
    case GraphNodeKind::Collective: {
        const double inset = std::min(kHexInset, r.width() / 4);
        path.moveTo(r.left() + inset, r.top());
        path.lineTo(r.right() - inset, r.top());
        path.lineTo(r.right(), r.center().y());
        path.lineTo(r.right() - inset, r.bottom());
        path.lineTo(r.left() + inset, r.bottom());
        path.lineTo(r.left(), r.center().y());
        path.closeSubpath();
        break;
    }
    case GraphNodeKind::Send: {
        const double depth = std::min(kArrowDepth, r.width() / 4);
        path.moveTo(r.topLeft());
        path.lineTo(r.right() - depth, r.top());
        path.lineTo(r.right(), r.center().y());
        path.lineTo(r.right() - depth, r.bottom());
        path.lineTo(r.bottomLeft());
        path.closeSubpath();
        break;
    }
    case GraphNodeKind::Recv: {
        const double slant = std::min(kSlant, r.width() / 4);
        path.moveTo(r.left() + slant, r.top());
        path.lineTo(r.right(), r.top());
        path.lineTo(r.right() - slant, r.bottom());
        path.lineTo(r.left(), r.bottom());
        path.closeSubpath();
        break;
    }
    case GraphNodeKind::Summary: {
        const double tabWidth = std::min(r.width() * 0.4, 46.0);
        const double body = r.top() + kTabHeight;
        path.moveTo(r.left(), r.top() + 2);
        path.quadTo(r.left(), r.top(), r.left() + 2, r.top());
        path.lineTo(r.left() + tabWidth - 4, r.top());
        path.lineTo(r.left() + tabWidth, body);
        path.lineTo(r.right() - 2, body);
        path.quadTo(r.right(), body, r.right(), body + 2);
        path.lineTo(r.right(), r.bottom() - 2);
        path.quadTo(r.right(), r.bottom(), r.right() - 2, r.bottom());
        path.lineTo(r.left() + 2, r.bottom());
        path.quadTo(r.left(), r.bottom(), r.left(), r.bottom() - 2);
        path.closeSubpath();
        break;
    }
    }
    return path;
}

QRectF GraphStyle::textRect(GraphNodeKind kind, const QRectF& r)
{
    switch (kind) {
    case GraphNodeKind::Compute:
        return r.adjusted(kPadX / 2, 0, -kPadX / 2, 0);
    case GraphNodeKind::Collective:
        return r.adjusted(kHexInset, 0, -kHexInset, 0);
    case GraphNodeKind::Send:
        return r.adjusted(kPadX / 2, 0, -kArrowDepth, 0);
    case GraphNodeKind::Recv:
        return r.adjusted(kSlant, 0, -kSlant, 0);
    case GraphNodeKind::Summary:
        return r.adjusted(kPadX / 2, kTabHeight, -kPadX / 2, 0);
    }
    return r;
}

QSizeF GraphStyle::nodeSize(GraphNodeKind kind, const QString& title, const QString& subtitle, const QFont& titleFont,
    const QFont& subtitleFont)
{
    const QFontMetricsF titleMetrics(titleFont);
    const QFontMetricsF subtitleMetrics(subtitleFont);
    double textWidth = titleMetrics.horizontalAdvance(title);
    double textHeight = titleMetrics.height();
    if (!subtitle.isEmpty()) {
        textWidth = std::max(textWidth, subtitleMetrics.horizontalAdvance(subtitle));
        textHeight += subtitleMetrics.height();
    }
    double extraWidth = kPadX * 2;
    double extraHeight = kPadY * 2;
    switch (kind) {
    case GraphNodeKind::Compute:
        break;
    case GraphNodeKind::Collective:
        extraWidth = kHexInset * 2 + kPadX;
        break;
    case GraphNodeKind::Send:
        extraWidth = kPadX + kArrowDepth + 4;
        break;
    case GraphNodeKind::Recv:
        extraWidth = kSlant * 2 + kPadX;
        break;
    case GraphNodeKind::Summary:
        extraHeight += kTabHeight;
        break;
    }
    return QSizeF(std::max(kMinWidth, std::ceil(textWidth + extraWidth)), std::ceil(textHeight + extraHeight));
}

QColor GraphStyle::collectiveColor(CollectiveType type)
{
    switch (type) {
    case CollectiveType::AllReduce:
        return QColor(0xf6, 0xa5, 0x4a); // orange
    case CollectiveType::AllGather:
        return QColor(0xf7, 0xd0, 0x5e); // amber
    case CollectiveType::ReduceScatter:
        return QColor(0xee, 0x8a, 0x6c); // coral
    case CollectiveType::AllToAll:
        return QColor(0xd9, 0x7b, 0xa6); // rose
    }
    return QColor(0xf6, 0xa5, 0x4a);
}

QColor GraphStyle::fillColor(const GraphSpecNode& node)
{
    switch (node.kind) {
    case GraphNodeKind::Compute:
        if (node.pass == Pass::Optimizer)
            return QColor(0xe4, 0xdc, 0xf4); // lavender
        if (node.pass == Pass::Backward)
            return QColor(0x9f, 0xc0, 0xe8);
        return QColor(0xd8, 0xe7, 0xf9);
    case GraphNodeKind::Collective:
        return collectiveColor(node.collective);
    case GraphNodeKind::Send:
        return QColor(0x9b, 0xd4, 0x8f);
    case GraphNodeKind::Recv:
        return QColor(0xcd, 0xea, 0xc4);
    case GraphNodeKind::Summary:
        return QColor(0xe9, 0xe9, 0xe6);
    }
    return Qt::white;
}

QColor GraphStyle::borderColor(const GraphSpecNode& node)
{
    switch (node.kind) {
    case GraphNodeKind::Compute:
        if (node.pass == Pass::Optimizer)
            return QColor(0x6a, 0x58, 0xa8);
        return node.pass == Pass::Backward ? QColor(0x23, 0x4f, 0x8a) : QColor(0x3d, 0x6f, 0xb0);
    case GraphNodeKind::Collective:
        return mix(collectiveColor(node.collective), Qt::black, 0.45);
    case GraphNodeKind::Send:
    case GraphNodeKind::Recv:
        return QColor(0x2f, 0x7a, 0x2a);
    case GraphNodeKind::Summary:
        return QColor(0x8a, 0x8a, 0x84);
    }
    return Qt::black;
}

bool GraphStyle::isRecompute(const GraphSpecNode& node)
{
    return node.kind == GraphNodeKind::Compute && node.recompute;
}

QColor GraphStyle::hatchColor()
{
    return QColor(0x3d, 0x6f, 0xb0, 90);
}

QColor GraphStyle::textColor()
{
    return QColor(0x1e, 0x22, 0x28);
}

QColor GraphStyle::subtitleColor()
{
    return QColor(0x4a, 0x50, 0x5a);
}

QColor GraphStyle::selectionColor()
{
    return QColor(0xd6, 0x28, 0x28);
}

QPen GraphStyle::edgePen(GraphEdgeKind kind, int64_t count)
{
    const double width = 1.1 + 0.7 * std::log10(double(std::max<int64_t>(count, 1)));
    if (kind == GraphEdgeKind::Ctrl) {
        QPen pen(QColor(0x9a, 0x9a, 0x9a), width, Qt::CustomDashLine);
        pen.setDashPattern({ 4, 3 });
        return pen;
    }
    return QPen(QColor(0x4d, 0x55, 0x60), width);
}

double GraphStyle::arrowSizePt()
{
    return 7;
}

double GraphStyle::directEdgeOpacity()
{
    return 0.35;
}

} // namespace stagecraft
