// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

/// Layers cut into pipeline chunks. With v virtual stages there are pp*v global chunks; global chunk g runs on
/// stage g % pp as its local chunk g / pp (Megatron-LM's interleaved assignment; v = 1 is the plain split).
/// Layers are split evenly, the remainder going to the earliest chunks. The embedding (layer -1) belongs to
/// chunk 0 and the final norm, LM head and loss (layer L) to the last chunk.
class StagePlan
{
public:
    StagePlan()
        : StagePlan(0, 1, 1)
    {
    }
    StagePlan(int64_t layers, int64_t pp, int64_t virtualStages);

    int32_t pp() const
    {
        return m_pp;
    }
    int32_t virtualStages() const
    {
        return m_v;
    }
    int32_t chunkCount() const
    {
        return m_pp * m_v;
    }
    /// Global chunk of a layer index (-1 .. L).
    int32_t chunkOfLayer(int32_t layer) const;
    int32_t stageOfChunk(int32_t chunk) const
    {
        return chunk % m_pp;
    }
    int32_t localChunk(int32_t chunk) const
    {
        return chunk / m_pp;
    }
    /// First and one-past-last decoder layer of a global chunk.
    int32_t firstLayer(int32_t chunk) const
    {
        return m_first[static_cast<size_t>(chunk)];
    }
    int32_t endLayer(int32_t chunk) const
    {
        return m_first[static_cast<size_t>(chunk) + 1];
    }

private:
    int32_t m_pp = 1;
    int32_t m_v = 1;
    int32_t m_layers = 0;
    std::vector<int32_t> m_first; ///< chunkCount()+1 boundaries
};

/// One entry of a stage's schedule: the forward or backward pass of one micro-batch through one local chunk.
struct ScheduleUnit
{
    int32_t microBatch = 0;
    int32_t localChunk = 0;
    bool backward = false;
    friend bool operator==(const ScheduleUnit&, const ScheduleUnit&) = default;
};

/// The order of passes on `stage` for m micro-batches (Narayanan et al. 2021 §2.2):
/// GPipe: all forwards, then all backwards. 1F1B: pp - stage - 1 warm-up forwards, then one forward one
/// backward, then the remaining backwards. Interleaved: Megatron-LM's interleaved 1F1B over v local chunks
/// (requires m % pp == 0; warm-up (pp - stage - 1) * 2 + (v - 1) * pp).
std::vector<ScheduleUnit> scheduleOrder(
    Schedule schedule, int32_t pp, int32_t virtualStages, int32_t stage, int32_t microBatches);

} // namespace stagecraft
