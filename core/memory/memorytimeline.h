// SPDX-License-Identifier: MIT
#pragma once

#include "program/program.h"

#include <array>
#include <cstdint>
#include <vector>

namespace stagecraft {

using CategoryBytes = std::array<int64_t, kMemoryCategoryCount>;

/// A rank class's tensor memory over its schedule. Step i is the moment node i of the program runs (steps are
/// positions in schedule order; a timing model is separate). A buffer is allocated at the node that first writes
/// it and freed after the last node that reads or writes it; resident buffers (weights, gradients, optimizer
/// state) live for the whole iteration. Communication outputs count while in flight, like any buffer.
/// Bytes per rank. Immutable after computeMemoryTimeline(); thread-safe to read.
struct MemoryTimeline
{
    std::vector<CategoryBytes> series; ///< series[i] = live bytes by category while node i runs (may be empty)
    CategoryBytes resident {}; ///< bytes of resident buffers by category (alive at every step)
    int64_t peakBytes = 0; ///< max over steps of the total
    int64_t peakStep = 0; ///< first step reaching the peak
    CategoryBytes atPeak {};
    std::vector<int32_t> liveAtPeak; ///< buffer ids alive at the peak, largest first
    int64_t activationPeakBytes = 0; ///< max over steps of activations + other (non-resident work memory)
    std::vector<int32_t> firstUse; ///< per buffer: step of its first write (0 for resident)
    std::vector<int32_t> lastUse; ///< per buffer: step of its last read or write (last step for resident)

    int64_t total(size_t step) const;
};

/// Per buffer of `program`, the step of its first write (`firstUse`, -1 when it is never written: then it is no
/// memory of this program) and of its last read or write (`lastUse`): a buffer lives from one to the other. Resident
/// buffers get the steps of their uses too (computeMemoryTimeline() then stretches them over the whole program).
void bufferLifetimes(const ClassProgram& program, std::vector<int32_t>& firstUse, std::vector<int32_t>& lastUse);

/// Walks the program once: O(nodes + buffers). The series has one entry per node.
/// `keepSeries` false leaves `series`, `firstUse` and `lastUse` empty; the peaks, `atPeak` and `liveAtPeak` are
/// the same either way (tests/core/tst_memory compares the two).
MemoryTimeline computeMemoryTimeline(const ClassProgram& program, bool keepSeries = true);

/// Bytes of the buffers that `layer`'s forward pass of micro-batch `microBatch` produced (not recomputed) and
/// that are still read after that micro-batch's forward pass through the stage ended: what the layer keeps for
/// backward (Korthikanti et al. 2022's "activation memory per layer"). Activation-category buffers only.
int64_t savedActivationBytes(
    const ClassProgram& program, const MemoryTimeline& timeline, int32_t layer, int32_t microBatch);

} // namespace stagecraft
