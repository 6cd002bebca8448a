// SPDX-License-Identifier: MIT
#include "timeline/timelinedata.h"

#include "estimate/chrometrace.h"
#include "synthesis/synthesis.h"

namespace stagecraft {

TimelineBarStyle timelineBarStyle(const ProgramNode& node)
{
    switch (node.kind) {
    case NodeKind::Compute:
        if (node.pass == Pass::Optimizer)
            return TimelineBarStyle::Optimizer;
        if (node.recompute)
            return TimelineBarStyle::Recompute;
        return node.pass == Pass::Backward ? TimelineBarStyle::Backward : TimelineBarStyle::Forward;
    case NodeKind::Collective:
        switch (node.collective) {
        case CollectiveType::AllReduce:
            return TimelineBarStyle::AllReduce;
        case CollectiveType::AllGather:
            return TimelineBarStyle::AllGather;
        case CollectiveType::ReduceScatter:
            return TimelineBarStyle::ReduceScatter;
        case CollectiveType::AllToAll:
            return TimelineBarStyle::AllToAll;
        }
        return TimelineBarStyle::AllReduce;
    case NodeKind::Send:
    case NodeKind::Recv:
        return TimelineBarStyle::Send;
    }
    return TimelineBarStyle::Forward;
}

TimelineData buildTimelineData(const SynthesisResult& result)
{
    TimelineData data;
    std::string error;
    const std::optional<GpuSpec> gpu = gpuForConfig(result.config, error);
    if (!gpu || !estimateStep(result, *gpu, EstimateOptions {}, data.estimate, error, &data.schedule)) {
        data.error = QString::fromStdString(error);
        return data;
    }
    data.ok = true;
    if (result.compression) {
        data.keptMicroBatches = result.compression->keptMicroBatches;
        data.microBatches = result.compression->microBatches;
    }
    data.classes.resize(data.schedule.classes.size());
    for (size_t c = 0; c < data.schedule.classes.size(); ++c) {
        const ClassProgram& program = result.classes[c];
        TimelineLanes& lanes = data.classes[c];
        for (const ScheduledNode& s : data.schedule.classes[c]) {
            if (s.stream == ScheduleStream::None)
                continue;
            const TimelineSpan span { s.startS, s.endS, s.node, timelineBarStyle(program.nodes[s.node]) };
            (s.stream == ScheduleStream::Compute ? lanes.compute : lanes.communication).push_back(span);
            data.stylesUsed[static_cast<size_t>(span.style)] = true;
            data.totalS = std::max(data.totalS, s.endS);
        }
    }
    std::vector<std::vector<int64_t>> ranks(result.classes.size());
    for (int64_t r = 0; r < result.worldSize(); ++r) {
        const auto c = static_cast<size_t>(result.classOf(RankId { r }));
        if (c < ranks.size())
            ranks[c].push_back(r);
    }
    for (const std::vector<int64_t>& list : ranks)
        data.classRanks.push_back(QString::fromStdString(rankRangeText(list)));
    return data;
}

} // namespace stagecraft
