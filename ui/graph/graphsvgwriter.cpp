// SPDX-License-Identifier: MIT
#include "graph/graphsvgwriter.h"

#include "graph/graphedgeitem.h"
#include "graph/graphstyle.h"
#include "session/outputsaver.h"

#include <QFile>
#include <QFontInfo>
#include <QFontMetricsF>
#include <QPainterPath>

namespace stagecraft {

namespace {

    QByteArray num(double v)
    {
        return QByteArray::number(v, 'f', 2);
    }

    QByteArray color(const QColor& c)
    {
        return c.name(QColor::HexRgb).toLatin1();
    }

    QByteArray escaped(const QString& text)
    {
        return text.toHtmlEscaped().toUtf8();
    }

    QByteArray textElement(const QString& text, const QRectF& box, const QFont& font, const QColor& fill)
    {
        const QFontMetricsF metrics(font);
        const double baseline = box.top() + (box.height() - metrics.height()) / 2 + metrics.ascent();
        return "<text x=\"" + num(box.center().x()) + "\" y=\"" + num(baseline) + "\" font-size=\""
            + num(font.pixelSize() > 0 ? font.pixelSize() : font.pointSizeF()) + "\" fill=\"" + color(fill) + "\">"
            + escaped(text) + "</text>\n";
    }

} // namespace

QByteArray GraphSvgWriter::pathData(const QPainterPath& path)
{
    QByteArray d;
    for (int i = 0; i < path.elementCount(); ++i) {
        const QPainterPath::Element e = path.elementAt(i);
        switch (e.type) {
        case QPainterPath::MoveToElement:
            d += "M" + num(e.x) + ',' + num(e.y) + ' ';
            break;
        case QPainterPath::LineToElement:
            d += "L" + num(e.x) + ',' + num(e.y) + ' ';
            break;
        case QPainterPath::CurveToElement:
            d += "C" + num(e.x) + ',' + num(e.y) + ' ';
            break;
        case QPainterPath::CurveToDataElement:
            d += num(e.x) + ',' + num(e.y) + ' ';
            break;
        }
    }
    return d.trimmed();
}

QByteArray GraphSvgWriter::toSvg(const GraphSpec& spec, const GraphLayout& layout)
{
    constexpr double kMargin = 12;
    const QRectF bounds = layout.bounds.adjusted(-kMargin, -kMargin, kMargin, kMargin);
    const QFont titleFont = GraphStyle::titleFont();
    const QFont subtitleFont = GraphStyle::subtitleFont();
    const QColor hatch = GraphStyle::hatchColor();

    QByteArray svg;
    svg += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + num(bounds.width()) + "pt\" height=\""
        + num(bounds.height()) + "pt\" viewBox=\"" + num(bounds.left()) + ' ' + num(bounds.top()) + ' '
        + num(bounds.width()) + ' ' + num(bounds.height()) + "\">\n";
    svg += "<title>Stagecraft program graph, class " + QByteArray::number(spec.classIndex) + "</title>\n";
    svg += "<defs><pattern id=\"recompute\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\">"
           "<path d=\"M-1,1 l2,-2 M0,6 l6,-6 M5,7 l2,-2\" stroke=\""
        + color(hatch) + "\" stroke-opacity=\"" + num(hatch.alphaF()) + "\" stroke-width=\"1\"/></pattern></defs>\n";
    svg += "<rect x=\"" + num(bounds.left()) + "\" y=\"" + num(bounds.top()) + "\" width=\"" + num(bounds.width())
        + "\" height=\"" + num(bounds.height()) + "\" fill=\"#ffffff\"/>\n";

    svg += "<g id=\"edges\" fill=\"none\">\n";
    for (size_t i = 0; i < spec.edges.size() && i < layout.edges.size(); ++i) {
        const GraphSpecEdge& edge = spec.edges[i];
        const QPen pen = GraphStyle::edgePen(edge.kind, edge.count);
        svg += "<path d=\"" + pathData(GraphEdgeItem::routePath(layout.edges[i])) + "\" stroke=\"" + color(pen.color())
            + "\" stroke-width=\"" + num(pen.widthF()) + '"';
        if (layout.edges[i].direct)
            svg += " stroke-opacity=\"" + num(GraphStyle::directEdgeOpacity()) + '"';
        if (edge.kind == GraphEdgeKind::Ctrl)
            svg += " stroke-dasharray=\"" + num(4 * pen.widthF()) + ',' + num(3 * pen.widthF()) + '"';
        svg += "/>\n";
        const QPolygonF arrow = GraphEdgeItem::arrowHead(layout.edges[i]);
        if (!arrow.isEmpty()) {
            QByteArray points;
            for (const QPointF& p : arrow)
                points += num(p.x()) + ',' + num(p.y()) + ' ';
            svg += "<polygon points=\"" + points.trimmed() + "\" fill=\"" + color(pen.color()) + '"'
                + (layout.edges[i].direct ? " fill-opacity=\"" + num(GraphStyle::directEdgeOpacity()) + '"'
                                          : QByteArray())
                + "/>\n";
        }
    }
    svg += "</g>\n";

    svg += "<g id=\"nodes\" font-family=\"" + escaped(QFontInfo(titleFont).family())
        + ", DejaVu Sans, sans-serif\" text-anchor=\"middle\">\n";
    const QFontMetricsF titleMetrics(titleFont);
    const QFontMetricsF subtitleMetrics(subtitleFont);
    for (size_t i = 0; i < spec.nodes.size() && i < layout.nodeRects.size(); ++i) {
        const GraphSpecNode& node = spec.nodes[i];
        const QRectF rect = layout.nodeRects[i];
        const QByteArray d = pathData(GraphStyle::nodeShape(node.kind, rect));
        const bool recompute = GraphStyle::isRecompute(node);
        svg += "<g>\n<path d=\"" + d + "\" fill=\"" + color(GraphStyle::fillColor(node)) + "\" stroke=\""
            + color(GraphStyle::borderColor(node)) + "\" stroke-width=\"1.2\""
            + (recompute ? QByteArray(" stroke-dasharray=\"4,2\"") : QByteArray()) + "/>\n";
        if (recompute)
            svg += "<path d=\"" + d + "\" fill=\"url(#recompute)\" stroke=\"none\"/>\n";
        const QRectF text = GraphStyle::textRect(node.kind, rect);
        const double total = titleMetrics.height() + (node.subtitle.isEmpty() ? 0 : subtitleMetrics.height());
        const double top = text.center().y() - total / 2;
        svg += textElement(node.title, QRectF(text.left(), top, text.width(), titleMetrics.height()), titleFont,
            GraphStyle::textColor());
        if (!node.subtitle.isEmpty())
            svg += textElement(node.subtitle,
                QRectF(text.left(), top + titleMetrics.height(), text.width(), subtitleMetrics.height()), subtitleFont,
                GraphStyle::subtitleColor());
        svg += "</g>\n";
    }
    svg += "</g>\n</svg>\n";
    return svg;
}

bool GraphSvgWriter::writeFile(const QString& path, const GraphSpec& spec, const GraphLayout& layout, QString* error)
{
    return saveOutputFile(path, toSvg(spec, layout), error);
}

} // namespace stagecraft
