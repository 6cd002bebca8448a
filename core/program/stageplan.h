// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

/// How the decoder layers are divided over the pipeline stages when not evenly (Megatron-LM's
/// `--decoder-first/last-pipeline-num-layers` and `--account-for-embedding/loss-in-pipeline-split`).
/// The default is the even split.
struct PipelineSplit
{
    int64_t firstStageLayers = 0; ///< decoder layers on the first stage (all its chunks together); 0 = not set
    int64_t lastStageLayers = 0; ///< decoder layers on the last stage; 0 = not set
    bool embeddingInSplit = false; ///< the embedding takes one layer's place in the first chunk
    bool lossInSplit = false; ///< the LM head and loss take one layer's place in the last chunk

    /// The split a parallelism section asks for.
    static PipelineSplit fromConfig(const ParallelismConfig& parallelism);
    bool uneven() const
    {
        return firstStageLayers > 0 || lastStageLayers > 0;
    }
    friend bool operator==(const PipelineSplit&, const PipelineSplit&) = default;
};

/// Layers cut into pipeline chunks. With v virtual stages there are pp*v global chunks; global chunk g runs on
/// stage g % pp as its local chunk g / pp (Megatron-LM's interleaved assignment; v = 1 is the plain split).
/// Global chunks hold consecutive decoder layers in the order of g. The embedding (layer -1) belongs to chunk 0
/// and the final norm, LM head and loss (layer L) to the last chunk.
///
/// The sizes follow Megatron-LM (megatron/core/transformer/transformer_block.py get_num_layers_to_build and
/// transformer_layer.py get_transformer_layer_offset):
/// - even: L / (pp*v) per chunk; a remainder (which Megatron-LM rejects, Stagecraft accepts for v = 1) goes to
///   the earliest chunks.
/// - first/last stage layers: the first (last) stage holds F (Λ) layers, F/v in each of its chunks; the
///   other ("middle") stages share L - F - Λ evenly, (L - F - Λ) / middle / v per chunk. A stage whose count is
///   not set is a middle stage.
/// - account for embedding/loss: N = L + [embedding] + [loss] slots, N / (pp*v) per chunk, where chunk 0 gives
///   one slot to the embedding and the last chunk one to the loss (either may be left with no decoder layer).
/// A split that is impossible (configvalidator reports why) falls back to the even split; splitApplied() tells.
/// Immutable; thread-safe to read.
class StagePlan
{
public:
    StagePlan()
        : StagePlan(0, 1, 1)
    {
    }
    StagePlan(int64_t layers, int64_t pp, int64_t virtualStages, const PipelineSplit& split = {});
    /// The plan of a config: model.layers, parallelism.pp, virtual_stages (with the interleaved schedule only)
    /// and the split keys.
    static StagePlan forConfig(const Config& config);

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
    int32_t layerCount() const
    {
        return m_layers;
    }
    /// Whether the requested uneven split is in effect (false for the even split and for an impossible split).
    bool splitApplied() const
    {
        return m_splitApplied;
    }
    /// Global chunk of a layer index (-1 .. L). A chunk without decoder layers holds none of 0 .. L-1.
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
    /// Decoder layers of a global chunk.
    int32_t chunkLayers(int32_t chunk) const
    {
        return endLayer(chunk) - firstLayer(chunk);
    }
    /// Decoder layers of a stage, all its chunks together.
    int32_t stageLayers(int32_t stage) const;

private:
    int32_t m_pp = 1;
    int32_t m_v = 1;
    int32_t m_layers = 0;
    bool m_splitApplied = false;
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
