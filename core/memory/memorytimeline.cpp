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

MemoryTimeline computeMemoryTimeline(const ClassProgram& program)
{
    MemoryTimeline tl;
    const size_t n = program.nodes.size();
    const size_t buffers = program.buffers.size();
    tl.firstUse.assign(buffers, -1);
    tl.lastUse.assign(buffers, -1);
    for (size_t i = 0; i < n; ++i) {
        const ProgramNode& node = program.nodes[i];
        for (int32_t b : node.writes) {
            if (tl.firstUse[static_cast<size_t>(b)] < 0)
                tl.firstUse[static_cast<size_t>(b)] = static_cast<int32_t>(i);
            tl.lastUse[static_cast<size_t>(b)] = static_cast<int32_t>(i);
        }
        for (int32_t b : node.reads)
            tl.lastUse[static_cast<size_t>(b)] = static_cast<int32_t>(i);
    }
    // A collective runs on the communication stream while later compute goes on: its buffers stay in use until
    // the first node that waits for it (a consumer that runs nodes as soon as they are ready, such as ASTRA-sim,
    // frees them no earlier). A collective nothing waits for, and a send, release them where they are issued.
    std::vector<int32_t> firstWaiter(n, -1);
    for (size_t j = 0; j < n; ++j) {
        const ProgramNode& node = program.nodes[j];
        for (const std::vector<NodeId>* deps : { &node.dataDeps, &node.ctrlDeps })
            for (NodeId d : *deps)
                if (d.value < j && firstWaiter[d.value] < 0)
                    firstWaiter[d.value] = static_cast<int32_t>(j);
    }
    for (size_t i = 0; i < n; ++i) {
        const ProgramNode& node = program.nodes[i];
        if (node.kind != NodeKind::Collective || firstWaiter[i] <= static_cast<int32_t>(i) + 1)
            continue;
        const int32_t until = firstWaiter[i] - 1;
        for (const std::vector<int32_t>* list : { &node.reads, &node.writes })
            for (int32_t b : *list)
                tl.lastUse[static_cast<size_t>(b)] = std::max(tl.lastUse[static_cast<size_t>(b)], until);
    }
    // Sweep allocation (+) and free (-) events per category.
    std::vector<CategoryBytes> delta(n + 1, CategoryBytes {});
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
        delta[static_cast<size_t>(tl.firstUse[b])][c] += buf.bytes;
        delta[static_cast<size_t>(tl.lastUse[b]) + 1][c] -= buf.bytes;
    }
    tl.series.resize(n);
    CategoryBytes live = tl.resident;
    for (size_t i = 0; i < n; ++i) {
        int64_t total = 0;
        for (size_t c = 0; c < kMemoryCategoryCount; ++c) {
            live[c] += delta[i][c];
            total += live[c];
        }
        tl.series[i] = live;
        if (total > tl.peakBytes) {
            tl.peakBytes = total;
            tl.peakStep = static_cast<int64_t>(i);
            tl.atPeak = live;
        }
        const int64_t work =
            live[static_cast<size_t>(MemoryCategory::Activations)] + live[static_cast<size_t>(MemoryCategory::Other)];
        tl.activationPeakBytes = std::max(tl.activationPeakBytes, work);
    }
    for (size_t b = 0; b < buffers; ++b)
        if (tl.firstUse[b] >= 0 && tl.firstUse[b] <= tl.peakStep && tl.lastUse[b] >= tl.peakStep)
            tl.liveAtPeak.push_back(static_cast<int32_t>(b));
    std::stable_sort(tl.liveAtPeak.begin(), tl.liveAtPeak.end(), [&](int32_t a, int32_t b) {
        return program.buffers[static_cast<size_t>(a)].bytes > program.buffers[static_cast<size_t>(b)].bytes;
    });
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
