// SPDX-License-Identifier: MIT
#include "graph/graphlegend.h"

#include "graph/graphstyle.h"

#include <QPainter>

namespace stagecraft {

namespace {

    struct Entry
    {
        QString text;
        GraphSpecNode node; ///< style of the swatch
        bool edge = false;
        GraphEdgeKind edgeKind = GraphEdgeKind::Data;
    };

    GraphSpecNode swatch(GraphNodeKind kind, Pass pass = Pass::Forward, bool recompute = false,
        CollectiveType type = CollectiveType::AllReduce)
    {
        GraphSpecNode n;
        n.kind = kind;
        n.pass = pass;
        n.recompute = recompute;
        n.collective = type;
        return n;
    }

    std::vector<Entry> entries()
    {
        std::vector<Entry> e;
        e.push_back({ QStringLiteral("forward op"), swatch(GraphNodeKind::Compute) });
        e.push_back({ QStringLiteral("backward op"), swatch(GraphNodeKind::Compute, Pass::Backward) });
        e.push_back({ QStringLiteral("recomputed op"), swatch(GraphNodeKind::Compute, Pass::Forward, true) });
        e.push_back({ QStringLiteral("optimizer step"), swatch(GraphNodeKind::Compute, Pass::Optimizer) });
        e.push_back({ QStringLiteral("send"), swatch(GraphNodeKind::Send) });
        e.push_back({ QStringLiteral("recv"), swatch(GraphNodeKind::Recv) });
        e.push_back({ QStringLiteral("summary"), swatch(GraphNodeKind::Summary) });
        for (CollectiveType t : { CollectiveType::AllReduce, CollectiveType::AllGather, CollectiveType::ReduceScatter,
                 CollectiveType::AllToAll })
            e.push_back({ QLatin1String(toString(t)), swatch(GraphNodeKind::Collective, Pass::Forward, false, t) });
        Entry data { QStringLiteral("data edge"), {}, true, GraphEdgeKind::Data };
        Entry ctrl { QStringLiteral("schedule edge"), {}, true, GraphEdgeKind::Ctrl };
        e.push_back(data);
        e.push_back(ctrl);
        return e;
    }

    constexpr int kRowHeight = 20;
    constexpr int kSwatchWidth = 34;
    constexpr int kSwatchHeight = 14;
    constexpr int kMargin = 6;

} // namespace

GraphLegend::GraphLegend(QWidget* parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    setToolTip(tr("Shapes and colours of the graph. Edge width grows with the number of program edges an edge "
                  "between summaries stands for."));
}

GraphLegend::~GraphLegend() = default;

QSize GraphLegend::sizeHint() const
{
    const int rows = int((entries().size() + 1) / 2);
    return QSize(300, rows * kRowHeight + 2 * kMargin);
}

QSize GraphLegend::minimumSizeHint() const
{
    return sizeHint();
}

void GraphLegend::paintEvent(QPaintEvent* event)
{
    Q_UNUSED(event);
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const std::vector<Entry> all = entries();
    const int rows = int((all.size() + 1) / 2);
    const int columnWidth = (width() - 2 * kMargin) / 2;
    QFont font = this->font();
    painter.setFont(font);
    for (size_t i = 0; i < all.size(); ++i) {
        const Entry& entry = all[i];
        // Column-major: node kinds fill the first column, collectives and edges the second.
        const int column = int(i) / rows;
        const int rowIndex = int(i) % rows;
        const int x = kMargin + column * columnWidth;
        const int y = kMargin + rowIndex * kRowHeight;
        const QRectF box(x, y + (kRowHeight - kSwatchHeight) / 2.0, kSwatchWidth, kSwatchHeight);
        if (entry.edge) {
            const QPen pen = GraphStyle::edgePen(entry.edgeKind, 1);
            painter.setPen(pen);
            const double midY = box.center().y();
            painter.drawLine(QPointF(box.left(), midY), QPointF(box.right() - 5, midY));
            painter.setPen(Qt::NoPen);
            painter.setBrush(pen.color());
            painter.drawPolygon(QPolygonF({ QPointF(box.right(), midY), QPointF(box.right() - 6, midY - 3),
                QPointF(box.right() - 6, midY + 3) }));
        } else {
            const QPainterPath path = GraphStyle::nodeShape(entry.node.kind, box);
            painter.setPen(Qt::NoPen);
            painter.setBrush(GraphStyle::fillColor(entry.node));
            painter.drawPath(path);
            if (GraphStyle::isRecompute(entry.node)) {
                painter.setBrush(QBrush(GraphStyle::hatchColor(), Qt::BDiagPattern));
                painter.drawPath(path);
            }
            QPen border(GraphStyle::borderColor(entry.node), 1.1);
            if (GraphStyle::isRecompute(entry.node))
                border.setStyle(Qt::DashLine);
            painter.setPen(border);
            painter.setBrush(Qt::NoBrush);
            painter.drawPath(path);
        }
        painter.setPen(palette().color(QPalette::WindowText));
        painter.drawText(QRectF(x + kSwatchWidth + 6, y, columnWidth - kSwatchWidth - 8, kRowHeight),
            Qt::AlignVCenter | Qt::AlignLeft, entry.text);
    }
}

} // namespace stagecraft
