// SPDX-License-Identifier: MIT
#include "charts/memorytimes.h"

#include "estimate/servingestimate.h"
#include "estimate/stepestimate.h"
#include "synthesis/synthesis.h"

#include <algorithm>
#include <numeric>

namespace stagecraft {

int64_t MemoryClassTimes::stepAt(double timeS) const
{
    if (byStart.empty())
        return -1;
    const auto it = std::upper_bound(byStart.begin(), byStart.end(), timeS,
        [this](double t, int64_t step) { return t < startS[static_cast<size_t>(step)]; });
    return it == byStart.begin() ? byStart.front() : *(it - 1);
}

MemoryTimes computeMemoryTimes(const SynthesisResult& result)
{
    MemoryTimes times;
    try {
        std::string error;
        const std::optional<GpuSpec> gpu = gpuForConfig(result.config, error);
        StepEstimate estimate;
        ServingEstimate serving;
        EstimateSchedule schedule;
        // A serving plan is timed by the serving estimate's schedule of its prefill and decode steps.
        const bool timed = gpu
            && (isInference(result.config)
                    ? estimateServing(result, *gpu, EstimateOptions {}, serving, error, &schedule)
                    : estimateStep(result, *gpu, EstimateOptions {}, estimate, error, &schedule));
        if (!timed) {
            times.error = QString::fromStdString(error);
            return times;
        }
        for (size_t c = 0; c < schedule.classes.size() && c < result.memory.size(); ++c) {
            const std::vector<ScheduledNode>& nodes = schedule.classes[c];
            if (nodes.size() != result.memory[c].series.size()) {
                times.error = QStringLiteral("the estimate schedules %1 nodes of stage %2, its memory timeline has %3")
                                  .arg(nodes.size())
                                  .arg(c)
                                  .arg(result.memory[c].series.size());
                times.classes.clear();
                return times;
            }
            auto ct = std::make_shared<MemoryClassTimes>();
            ct->startS.resize(nodes.size());
            ct->endS.resize(nodes.size());
            for (size_t i = 0; i < nodes.size(); ++i) {
                ct->startS[i] = nodes[i].startS;
                ct->endS[i] = nodes[i].endS;
                ct->finishS = std::max(ct->finishS, nodes[i].endS);
            }
            ct->byStart.resize(nodes.size());
            std::iota(ct->byStart.begin(), ct->byStart.end(), int64_t { 0 });
            std::stable_sort(ct->byStart.begin(), ct->byStart.end(), [&ct](int64_t a, int64_t b) {
                return ct->startS[static_cast<size_t>(a)] < ct->startS[static_cast<size_t>(b)];
            });
            times.classes.push_back(std::move(ct));
        }
        times.ok = true;
    } catch (...) {
        times = MemoryTimes {};
        times.error = QStringLiteral("internal error in the step-time estimate");
    }
    return times;
}

} // namespace stagecraft
