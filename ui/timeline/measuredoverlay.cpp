// SPDX-License-Identifier: MIT
#include "timeline/measuredoverlay.h"

#include "kineto/kinetoreader.h"

#include <QFileInfo>

namespace stagecraft {

namespace {

    TimelineBarStyle styleOf(const std::string& kind)
    {
        if (kind == "all_reduce")
            return TimelineBarStyle::AllReduce;
        if (kind == "all_gather")
            return TimelineBarStyle::AllGather;
        if (kind == "reduce_scatter")
            return TimelineBarStyle::ReduceScatter;
        if (kind == "all_to_all")
            return TimelineBarStyle::AllToAll;
        if (kind == "send/recv" || kind == "broadcast" || kind == "memcpy/memset")
            return TimelineBarStyle::Send;
        return TimelineBarStyle::Forward;
    }

} // namespace

std::shared_ptr<const MeasuredOverlay> buildMeasuredOverlay(
    const QString& path, const SynthesisResult& result, const TimelineData& data, qint64 rank, QString* error)
{
    const auto fail = [&](const std::string& message) {
        if (error)
            *error = QString::fromStdString(message);
        return std::shared_ptr<const MeasuredOverlay>();
    };
    if (!data.ok)
        return fail("no estimate to compare with");
    KinetoReadResult read = readKinetoFile(path.toStdString());
    if (!read.ok())
        return fail(read.error);
    auto overlay = std::make_shared<MeasuredOverlay>();
    overlay->fileName = QFileInfo(path).fileName();
    overlay->trace = std::make_shared<const KinetoTrace>(std::move(*read.trace));
    std::string message;
    if (!compareTrace(*overlay->trace, result, data.estimate, data.schedule, rank, -1, overlay->comparison, message))
        return fail(message);
    const TraceComparison& c = overlay->comparison;
    for (size_t i = 0; i < c.spans.size(); ++i) {
        const MeasuredSpan& s = c.spans[i];
        TimelineSpan span;
        span.startS = s.startS;
        span.endS = s.endS;
        span.node = uint32_t(i);
        span.style = styleOf(c.spanKinds[size_t(s.kind)]);
        // A lane's spans must not overlap (the chart finds the visible ones by binary search): kernels of several
        // streams can, so a bar that starts inside the previous one is clipped to its end.
        std::vector<TimelineSpan>& lane = s.communication ? overlay->lanes.communication : overlay->lanes.compute;
        if (!lane.empty() && span.startS < lane.back().endS) {
            if (span.endS <= lane.back().endS)
                continue; // fully under the previous bar: it still counts in the totals
            span.startS = lane.back().endS;
        }
        lane.push_back(span);
    }
    return overlay;
}

} // namespace stagecraft
