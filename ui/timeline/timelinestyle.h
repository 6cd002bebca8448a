// SPDX-License-Identifier: MIT
#pragma once

#include "timeline/timelinedata.h"

#include <QColor>
#include <QString>

namespace stagecraft {

/// Colours and names of the timeline's bars. Fill and border colours are the Graph view's (GraphStyle), so a
/// forward op, an all-reduce or a send looks the same in both tabs.
class TimelineStyle
{
public:
    static QColor fillColor(TimelineBarStyle style);
    /// A communication bar hidden under compute: its fill faded towards the lane.
    static QColor hiddenFillColor(TimelineBarStyle style);
    static QColor borderColor(TimelineBarStyle style);
    /// The colour of a bar too thin for a border (or of several merged into one pixel): between fill and border,
    /// so that thin bars stay visible on the lane background.
    static QColor solidColor(TimelineBarStyle style);
    /// "forward", "backward", "recompute", "optimizer", "all-reduce", "all-gather", "reduce-scatter",
    /// "all-to-all", "send".
    static QString name(TimelineBarStyle style);
    static QColor laneColor();
    static QColor hatchColor();
};

} // namespace stagecraft
