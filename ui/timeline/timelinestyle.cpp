// SPDX-License-Identifier: MIT
#include "timeline/timelinestyle.h"

#include "graph/graphspec.h"
#include "graph/graphstyle.h"

#include <QCoreApplication>

namespace stagecraft {

namespace {

    GraphSpecNode graphNode(TimelineBarStyle style)
    {
        GraphSpecNode n;
        switch (style) {
        case TimelineBarStyle::Forward:
            break;
        case TimelineBarStyle::Recompute:
            n.recompute = true;
            break;
        case TimelineBarStyle::Backward:
        case TimelineBarStyle::WeightGradient:
            n.pass = Pass::Backward;
            break;
        case TimelineBarStyle::Optimizer:
            n.pass = Pass::Optimizer;
            break;
        case TimelineBarStyle::AllReduce:
        case TimelineBarStyle::AllGather:
        case TimelineBarStyle::ReduceScatter:
        case TimelineBarStyle::AllToAll:
            n.kind = GraphNodeKind::Collective;
            n.collective =
                static_cast<CollectiveType>(static_cast<int>(style) - static_cast<int>(TimelineBarStyle::AllReduce));
            break;
        case TimelineBarStyle::Send:
            n.kind = GraphNodeKind::Send;
            break;
        }
        return n;
    }

    QColor mix(const QColor& a, const QColor& b, double t)
    {
        return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t), float(a.greenF() * (1 - t) + b.greenF() * t),
            float(a.blueF() * (1 - t) + b.blueF() * t));
    }

} // namespace

QColor TimelineStyle::fillColor(TimelineBarStyle style)
{
    // Recompute is a forward run again: its own teal, apart from the forward's light and the backward's dark blue.
    if (style == TimelineBarStyle::Recompute)
        return QColor(0xb4, 0xe4, 0xdc);
    const QColor fill = GraphStyle::fillColor(graphNode(style));
    // The weight gradients: the backward's hue, darker, so that a split backward's B and W read apart.
    return style == TimelineBarStyle::WeightGradient ? mix(fill, GraphStyle::borderColor(graphNode(style)), 0.55)
                                                     : fill;
}

QColor TimelineStyle::hiddenFillColor(TimelineBarStyle style)
{
    return mix(fillColor(style), laneColor(), 0.6);
}

QColor TimelineStyle::borderColor(TimelineBarStyle style)
{
    if (style == TimelineBarStyle::Recompute)
        return QColor(0x1c, 0x7c, 0x70);
    return GraphStyle::borderColor(graphNode(style));
}

QColor TimelineStyle::solidColor(TimelineBarStyle style)
{
    // Recompute shares the forward fill (the Graph view hatches it); solid, it needs its own shade.
    return mix(fillColor(style), borderColor(style), 0.35);
}

QString TimelineStyle::name(TimelineBarStyle style)
{
    switch (style) {
    case TimelineBarStyle::Forward:
        return QCoreApplication::translate("TimelineStyle", "forward");
    case TimelineBarStyle::Backward:
        return QCoreApplication::translate("TimelineStyle", "backward");
    case TimelineBarStyle::WeightGradient:
        return QCoreApplication::translate("TimelineStyle", "weight gradients (W)");
    case TimelineBarStyle::Recompute:
        return QCoreApplication::translate("TimelineStyle", "recompute");
    case TimelineBarStyle::Optimizer:
        return QCoreApplication::translate("TimelineStyle", "optimizer");
    case TimelineBarStyle::AllReduce:
        return QCoreApplication::translate("TimelineStyle", "all-reduce");
    case TimelineBarStyle::AllGather:
        return QCoreApplication::translate("TimelineStyle", "all-gather");
    case TimelineBarStyle::ReduceScatter:
        return QCoreApplication::translate("TimelineStyle", "reduce-scatter");
    case TimelineBarStyle::AllToAll:
        return QCoreApplication::translate("TimelineStyle", "all-to-all");
    case TimelineBarStyle::Send:
        return QCoreApplication::translate("TimelineStyle", "send");
    }
    return {};
}

QColor TimelineStyle::laneColor()
{
    return QColor(0xf2, 0xf2, 0xef);
}

QColor TimelineStyle::hatchColor()
{
    return GraphStyle::hatchColor();
}

} // namespace stagecraft
