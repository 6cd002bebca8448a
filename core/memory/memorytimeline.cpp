// SPDX-License-Identifier: MIT
#include "memory/memorytimeline.h"

#include <algorithm>

namespace stagecraft {

int64_t MemoryTimeline::total(size_t step) const
{
    int64_t t = 0;
    for (int64_t b : series[step])
        t += b;
    return t;
}

void bufferLifetimes(const ClassProgram& program, std::vector<int32_t>& firstUse, std::vector<int32_t>& lastUse)
{
    firstUse.assign(program.buffers.size(), -1);
    lastUse.assign(program.buffers.size(), -1);
    for (size_t i = 0; i < program.nodes.size(); ++i) {
        const ProgramNode& node = program.nodes[i];
        for (int32_t b : node.writes) {
            if (firstUse[static_cast<size_t>(b)] < 0)
                firstUse[static_cast<size_t>(b)] = static_cast<int32_t>(i);
            lastUse[static_cast<size_t>(b)] = static_cast<int32_t>(i);
        }
        for (int32_t b : node.reads)
            lastUse[static_cast<size_t>(b)] = static_cast<int32_t>(i);
    }
}

MemoryTimeline computeMemoryTimeline(const ClassProgram& program, bool keepSeries)
{
    MemoryTimeline tl;
    const size_t n = program.nodes.size();
    const size_t buffers = program.buffers.size();
    bufferLifetimes(program, tl.firstUse, tl.lastUse);
    // Sweep allocation (+) and free (-) events: per category when the series is kept, otherwise only the total
    // and the work memory (activations + other), 16 bytes a node instead of 40; the categories at the peak are
    // then summed from the buffers live there.
    const auto isWork = [](MemoryCategory c) { return c == MemoryCategory::Activations || c == MemoryCategory::Other; };
    std::vector<CategoryBytes> delta(keepSeries ? n + 1 : 0, CategoryBytes {});
    std::vector<std::array<int64_t, 2>> leanDelta(keepSeries ? 0 : n + 1, std::array<int64_t, 2> {});
    for (size_t b = 0; b < buffers; ++b) {
        const Buffer& buf = program.buffers[b];
        const size_t c = static_cast<size_t>(buf.category);
        if (buf.resident) {
            tl.resident[c] += buf.bytes;
            tl.firstUse[b] = 0;
            tl.lastUse[b] = n > 0 ? static_cast<int32_t>(n - 1) : 0;
            continue;
        }
        if (tl.firstUse[b] < 0)
            continue; // never written: not part of this program's memory
        const auto first = static_cast<size_t>(tl.firstUse[b]);
        const auto end = static_cast<size_t>(tl.lastUse[b]) + 1;
        if (keepSeries) {
            delta[first][c] += buf.bytes;
            delta[end][c] -= buf.bytes;
        } else {
            const int64_t work = isWork(buf.category) ? buf.bytes : 0;
            leanDelta[first][0] += buf.bytes;
            leanDelta[first][1] += work;
            leanDelta[end][0] -= buf.bytes;
            leanDelta[end][1] -= work;
        }
    }
    if (keepSeries) {
        // delta[i] becomes the live bytes while node i runs: the series.
        CategoryBytes live = tl.resident;
        for (size_t i = 0; i < n; ++i) {
            int64_t total = 0;
            for (size_t c = 0; c < kMemoryCategoryCount; ++c) {
                live[c] += delta[i][c];
                total += live[c];
            }
            delta[i] = live;
            if (total > tl.peakBytes) {
                tl.peakBytes = total;
                tl.peakStep = static_cast<int64_t>(i);
                tl.atPeak = live;
            }
            const int64_t work = live[static_cast<size_t>(MemoryCategory::Activations)]
                + live[static_cast<size_t>(MemoryCategory::Other)];
            tl.activationPeakBytes = std::max(tl.activationPeakBytes, work);
        }
        delta.pop_back();
        tl.series = std::move(delta);
    } else {
        int64_t total = 0;
        int64_t work = 0;
        for (size_t c = 0; c < kMemoryCategoryCount; ++c) {
            total += tl.resident[c];
            work += isWork(static_cast<MemoryCategory>(c)) ? tl.resident[c] : 0;
        }
        for (size_t i = 0; i < n; ++i) {
            total += leanDelta[i][0];
            work += leanDelta[i][1];
            if (total > tl.peakBytes) {
                tl.peakBytes = total;
                tl.peakStep = static_cast<int64_t>(i);
            }
            tl.activationPeakBytes = std::max(tl.activationPeakBytes, work);
        }
    }
    for (size_t b = 0; b < buffers; ++b)
        if (tl.firstUse[b] >= 0 && tl.firstUse[b] <= tl.peakStep && tl.lastUse[b] >= tl.peakStep)
            tl.liveAtPeak.push_back(static_cast<int32_t>(b));
    if (!keepSeries) // the categories at the peak: the buffers live there, resident ones included
        for (int32_t b : tl.liveAtPeak) {
            const Buffer& buf = program.buffers[static_cast<size_t>(b)];
            tl.atPeak[static_cast<size_t>(buf.category)] += buf.bytes;
        }
    std::stable_sort(tl.liveAtPeak.begin(), tl.liveAtPeak.end(), [&](int32_t a, int32_t b) {
        return program.buffers[static_cast<size_t>(a)].bytes > program.buffers[static_cast<size_t>(b)].bytes;
    });
    if (!keepSeries) {
        tl.firstUse = {};
        tl.lastUse = {};
    }
    return tl;
}

int64_t savedActivationBytes(
    const ClassProgram& program, const MemoryTimeline& timeline, int32_t layer, int32_t microBatch)
{
    // The end of that micro-batch's forward pass through this stage: its last forward (not recomputed) node.
    int32_t forwardEnd = -1;
    for (size_t i = 0; i < program.nodes.size(); ++i) {
        const ProgramNode& n = program.nodes[i];
        if (n.kind == NodeKind::Compute && n.pass == Pass::Forward && !n.recompute && n.microBatch == microBatch)
            forwardEnd = static_cast<int32_t>(i);
    }
    if (forwardEnd < 0)
        return 0;
    int64_t bytes = 0;
    for (size_t i = 0; i <= static_cast<size_t>(forwardEnd); ++i) {
        const ProgramNode& n = program.nodes[i];
        if (n.kind != NodeKind::Compute || n.pass != Pass::Forward || n.recompute || n.layer != layer
            || n.microBatch != microBatch)
            continue;
        for (int32_t b : n.writes) {
            const Buffer& buf = program.buffers[static_cast<size_t>(b)];
            if (buf.resident || buf.category != MemoryCategory::Activations)
                continue;
            // Still read after the forward pass finished: kept for backward (or for its recomputation).
            if (timeline.lastUse[static_cast<size_t>(b)] > forwardEnd)
                bytes += buf.bytes;
        }
    }
    return bytes;
}

} // namespace stagecraft
