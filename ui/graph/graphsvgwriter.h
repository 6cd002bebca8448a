// SPDX-License-Identifier: MIT
#pragma once

#include "graph/graphspec.h"

#include <QByteArray>

class QPainterPath;

namespace stagecraft {

/// Writes a laid-out graph as a standalone SVG 1.1 document (nodes in their shapes and colours, labels as text,
/// edges as Bézier paths with arrow heads), in points. Written by hand from GraphSpec and GraphLayout because
/// Qt's SVG module is not a dependency. Reentrant; needs only the plain structs, so it also runs in a worker.
class GraphSvgWriter
{
public:
    static QByteArray toSvg(const GraphSpec& spec, const GraphLayout& layout);
    /// Writes toSvg() to `path`; false (and `error` set) when the file cannot be written.
    static bool writeFile(const QString& path, const GraphSpec& spec, const GraphLayout& layout, QString* error);
    /// SVG path data ("M x y L ... C ... Z") of a painter path.
    static QByteArray pathData(const QPainterPath& path);
};

} // namespace stagecraft
