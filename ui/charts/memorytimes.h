// SPDX-License-Identifier: MIT
#pragma once

#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

namespace stagecraft {

struct SynthesisResult;

/// When each step of one class's memory timeline happens in the step-time estimate: step i is node i of the
/// program, and it runs over [startS[i], endS[i]) on the estimate's clock (seconds from the iteration's start, the
/// Timeline tab's clock). Plain values; immutable once built, shared between the worker and the GUI thread.
struct MemoryClassTimes
{
    std::vector<double> startS; ///< per step
    std::vector<double> endS; ///< per step
    /// The steps ordered by start (ties in step order). Steps of different streams overlap in time, so node order
    /// is not time order; the time axis draws the steps in this order.
    std::vector<int64_t> byStart;
    double finishS = 0; ///< the latest end: the rank's estimated step time (ClassEstimate::stepTimeS)

    /// The step running at `timeS`: the last one in start order that started at or before it (the first step before
    /// any start). -1 when there are no steps.
    int64_t stepAt(double timeS) const;
};

/// The estimate's times of every class of one result, or why there are none.
struct MemoryTimes
{
    bool ok = false;
    QString error; ///< why not: the estimate failed, or its schedule does not match the memory timelines
    std::vector<std::shared_ptr<const MemoryClassTimes>> classes; ///< index = class (pipeline stage)
};

/// Runs the step-time estimate the Timeline tab runs (estimateStep() with its schedule, default options, the preset
/// GPU of result.config.cluster.gpu), so that both tabs put a node at the same instant, and keeps each node's start
/// and end. Pure; any thread.
MemoryTimes computeMemoryTimes(const SynthesisResult& result);

} // namespace stagecraft
