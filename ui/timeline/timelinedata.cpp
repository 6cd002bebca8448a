// SPDX-License-Identifier: MIT
#include "timeline/timelinedata.h"

#include "estimate/chrometrace.h"
#include "synthesis/synthesis.h"

#include <algorithm>

namespace stagecraft {

TimelineBarStyle timelineBarStyle(const ProgramNode& node, const ModelGraph* graph, bool splitBackward)
{
    switch (node.kind) {
    case NodeKind::Compute:
        if (node.pass == Pass::Optimizer)
            return TimelineBarStyle::Optimizer;
        if (node.recompute)
            return TimelineBarStyle::Recompute;
        if (node.pass == Pass::Backward && splitBackward && graph && node.op >= 0
            && static_cast<size_t>(node.op) < graph->ops.size()
            && graph->writesOnlyWeightGradients(graph->ops[static_cast<size_t>(node.op)]))
            return TimelineBarStyle::WeightGradient;
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

void markHiddenCommunication(TimelineLanes& lanes)
{
    // Compute spans never overlap; walk them alongside the communication spans, both sorted by start.
    const std::vector<TimelineSpan>& compute = lanes.compute;
    size_t c = 0;
    for (TimelineSpan& s : lanes.communication) {
        while (c < compute.size() && compute[c].endS <= s.startS)
            ++c;
        // Covered when consecutive compute spans from c reach s.endS without a gap (a gap under 1 ns is none).
        double reached = s.startS;
        for (size_t k = c; k < compute.size() && compute[k].startS <= reached + 1e-9 && reached < s.endS; ++k)
            reached = std::max(reached, compute[k].endS);
        s.hidden = s.endS > s.startS && reached + 1e-9 >= s.endS;
    }
}

TimelineData buildTimelineData(const SynthesisResult& result)
{
    TimelineData data;
    std::string error;
    const std::optional<GpuSpec> gpu = gpuForConfig(result.config, error);
    if (gpu && isInference(result.config)) {
        // Serving: the programs' prefill and decode steps, timed by the serving estimate's schedule.
        ServingEstimate serving;
        if (!estimateServing(result, *gpu, EstimateOptions {}, serving, error, &data.schedule)) {
            data.error = QString::fromStdString(error);
            return data;
        }
        data.estimate.gpu = serving.gpu;
        data.serving = std::move(serving);
    } else if (!gpu || !estimateStep(result, *gpu, EstimateOptions {}, data.estimate, error, &data.schedule)) {
        data.error = QString::fromStdString(error);
        return data;
    }
    data.ok = true;
    if (result.compression) {
        data.keptMicroBatches = result.compression->keptMicroBatches;
        data.microBatches = result.compression->microBatches;
    }
    data.classes.resize(data.schedule.classes.size());
    const ModelGraph* graph = result.plan ? result.plan->graph.get() : nullptr;
    const bool split = splitsBackward(result.config.parallelism.schedule);
    for (size_t c = 0; c < data.schedule.classes.size(); ++c) {
        const ClassProgram& program = result.classes[c];
        TimelineLanes& lanes = data.classes[c];
        for (const ScheduledNode& s : data.schedule.classes[c]) {
            if (s.stream == ScheduleStream::None)
                continue;
            const TimelineSpan span { s.startS, s.endS, s.node, timelineBarStyle(program.nodes[s.node], graph, split) };
            (s.stream == ScheduleStream::Compute ? lanes.compute : lanes.communication).push_back(span);
            data.stylesUsed[static_cast<size_t>(span.style)] = true;
            data.totalS = std::max(data.totalS, s.endS);
        }
        markHiddenCommunication(lanes);
        for (const TimelineSpan& s : lanes.communication)
            data.anyHidden = data.anyHidden || s.hidden;
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
