// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/pipelinelayout.h"

#include <cstdint>
#include <optional>
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

/// How global pipeline chunks are placed on stages.
enum class ChunkPlacement : uint8_t
{
    Cyclic, ///< chunk g on stage g % pp as local chunk g / pp (Megatron-LM's interleaved assignment)
    VShape, ///< DualPipeV: chunk g < pp on stage g (local 0), chunk g >= pp on stage 2pp-1-g (local 1)
    /// DualPipe: pp chunks, each on two stages: micro-batches of the forward direction run chunk g on stage g,
    /// those of the reverse direction on stage pp-1-g. A stage holds chunks s (local 0) and pp-1-s (local 1).
    Mirror
};

/// Layers cut into pipeline chunks, from a pipeline layout (config/pipelinelayout.h: the config's
/// `parallelism.pipeline_layout`, or the layout its shorthands make, shorthandLayout()). There are pp*v global
/// chunks (pp for DualPipe), placed on stages by a ChunkPlacement. Global chunks hold consecutive decoder layers
/// in the order of g. The embedding (layer -1), the final norm, LM head and loss (layer L) and the MTP modules
/// (layers L+1 ..) sit in the chunks the layout names.
/// Immutable; thread-safe to read.
class StagePlan
{
public:
    StagePlan()
        : StagePlan(0, 1, 1)
    {
    }
    /// The plan of the even split or of the shorthand `split` (shorthandLayout()).
    StagePlan(int64_t layers, int64_t pp, int64_t virtualStages, const PipelineSplit& split = {},
        int64_t mtpModules = 0, ChunkPlacement placement = ChunkPlacement::Cyclic);
    /// The plan of a layout that checkLayout() accepted for `pp` (pp * v chunks).
    StagePlan(const PipelineLayout& layout, int64_t pp, ChunkPlacement placement = ChunkPlacement::Cyclic);
    /// The plan of a config: its pipeline_layout, else the layout of model.layers, parallelism.pp,
    /// virtual_stages (with the interleaved schedule only; 2 with dualpipev) and the split keys; the placement of its
    /// schedule. A layout the validator rejects falls back to the even split.
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
        return static_cast<int32_t>(m_first.size()) - 1;
    }
    int32_t layerCount() const
    {
        return m_layers;
    }
    ChunkPlacement placement() const
    {
        return m_placement;
    }
    /// Whether the requested uneven split is in effect (false for the even split and for an impossible split; true
    /// for a layout that is not the even split).
    bool splitApplied() const
    {
        return m_splitApplied;
    }
    /// Global chunk of a layer index: -1 the embedding, 0 .. L-1 decoder layers, L the loss, L+k MTP module k.
    /// A chunk without decoder layers holds none of 0 .. L-1.
    int32_t chunkOfLayer(int32_t layer) const;
    int32_t embeddingChunk() const
    {
        return m_embeddingChunk;
    }
    int32_t lossChunk() const
    {
        return m_lossChunk;
    }
    int32_t mtpChunk() const
    {
        return m_mtpChunk;
    }
    /// The stage of a chunk (for Mirror: of the forward direction).
    int32_t stageOfChunk(int32_t chunk) const
    {
        switch (m_placement) {
        case ChunkPlacement::VShape:
            return chunk < m_pp ? chunk : 2 * m_pp - 1 - chunk;
        case ChunkPlacement::Mirror:
        case ChunkPlacement::Cyclic:
            break;
        }
        return chunk % m_pp;
    }
    /// The local chunk of a chunk on stageOfChunk() (for Mirror: 0; the reverse direction runs it as local 1).
    int32_t localChunk(int32_t chunk) const
    {
        switch (m_placement) {
        case ChunkPlacement::VShape:
            return chunk < m_pp ? 0 : 1;
        case ChunkPlacement::Mirror:
            return 0;
        case ChunkPlacement::Cyclic:
            break;
        }
        return chunk / m_pp;
    }
    /// Local chunks per stage: virtualStages(), or 2 under Mirror.
    int32_t localChunks() const
    {
        return m_placement == ChunkPlacement::Mirror ? 2 : m_v;
    }
    /// The global chunk that stage `stage` runs as local chunk `local`.
    int32_t chunkOf(int32_t stage, int32_t local) const
    {
        switch (m_placement) {
        case ChunkPlacement::VShape:
            return local == 0 ? stage : 2 * m_pp - 1 - stage;
        case ChunkPlacement::Mirror:
            return local == 0 ? stage : m_pp - 1 - stage;
        case ChunkPlacement::Cyclic:
            break;
        }
        return local * m_pp + stage;
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
    /// The layout of this plan (what it was built from, or what its split made).
    const PipelineLayout& layout() const
    {
        return m_layout;
    }

private:
    void build(const PipelineLayout& layout);

    int32_t m_pp = 1;
    int32_t m_v = 1;
    int32_t m_layers = 0;
    ChunkPlacement m_placement = ChunkPlacement::Cyclic;
    bool m_splitApplied = false;
    int32_t m_embeddingChunk = 0, m_lossChunk = 0, m_mtpChunk = 0;
    std::vector<int32_t> m_first; ///< chunkCount()+1 boundaries
    PipelineLayout m_layout;
};

/// The layout of the even split (layers / chunks per chunk, a remainder to the earliest chunks) or of a shorthand
/// split, for `chunks` = pp * v global chunks: the embedding in chunk 0, the loss and the MTP modules in the last
/// chunk. The sizes follow Megatron-LM (megatron/core/transformer/transformer_block.py get_num_layers_to_build and
/// transformer_layer.py get_transformer_layer_offset):
/// - even: L / (pp*v) per chunk; a remainder (which Megatron-LM rejects, Stagecraft accepts for v = 1) goes to
///   the earliest chunks.
/// - first/last stage layers: the first (last) stage holds F (Λ) layers, F/v in each of its chunks; the
///   other ("middle") stages share L - F - Λ evenly, (L - F - Λ) / middle / v per chunk. A stage whose count is
///   not set is a middle stage.
/// - account for embedding/loss: N = L + [embedding] + [loss] slots, N / (pp*v) per chunk, where chunk 0 gives
///   one slot to the embedding and the last chunk one to the loss (either may be left with no decoder layer).
/// `applied` tells whether the uneven split was possible (else the even split is returned).
PipelineLayout shorthandLayout(int64_t layers, int64_t mtpModules, int64_t pp, int64_t virtualStages,
    const PipelineSplit& split, bool* applied = nullptr);

/// The layout of `decoders[g]` decoder layers in global chunk g: the embedding opens chunk 0, the `mtpModules`
/// MTP modules and the loss close the last chunk (the form shorthandLayout() and balancedLayout() make).
PipelineLayout layoutOfChunks(const std::vector<int64_t>& decoders, int64_t mtpModules);

/// A layout that balances the slots of `pp` * `virtualStages` chunks placed cyclically (1F1B, GPipe, interleaved)
/// where no shorthand split is even (the sweep's --balanced-split): the embedding, the loss and every MTP module
/// take one layer's place each (Megatron-LM's account-for-embedding/loss rule; DeepSeek-V3's Megatron-Core layouts
/// put `m` in a layer's place too), so N = layers + 2 + mtpModules slots, and every chunk holds N / chunks slots
/// or one more. The extra slots go one to each stage before any stage gets a second, to the middle stages from
/// the last towards the first, then to the last stage, then to the first (the first stage keeps the most
/// micro-batches' activations in flight, the last the logits); within a stage to its later chunks first (whose
/// activations the interleaved schedule keeps for a shorter time). The embedding opens chunk 0, the MTP modules
/// and the loss close the last chunk. nullopt when a chunk would hold no slot, or the first or last chunk too few
/// slots for what it must hold.
std::optional<PipelineLayout> balancedLayout(int64_t layers, int64_t mtpModules, int64_t pp, int64_t virtualStages);

/// What one schedule unit runs of a micro-batch's pass through a chunk.
enum class UnitPass : uint8_t
{
    Forward, ///< F
    Backward, ///< the whole backward, input and weight gradients together (1F1B's B, zero-bubble's "BW")
    BackwardInput, ///< zero-bubble's B: the input gradients only; the weight-gradient GEMMs wait for a W unit
    BackwardWeight ///< zero-bubble's W: the weight-gradient GEMMs of an earlier BackwardInput (FIFO)
};

/// One entry of a stage's schedule: one pass of one micro-batch through one local chunk.
struct ScheduleUnit
{
    int32_t microBatch = 0;
    int32_t localChunk = 0;
    UnitPass pass = UnitPass::Forward;
    /// This forward and the backward after it form one overlapped forward-backward pair (DualPipe's
    /// _forward_backward_chunk, Megatron-Core's combined 1F1B step): run interleaved when the expert all-to-all is
    /// overlapped (parallelism.overlap_moe_expert_parallel_comm), else one after the other.
    bool pairedWithNext = false;
    bool backward() const
    {
        return pass != UnitPass::Forward;
    }
    friend bool operator==(const ScheduleUnit&, const ScheduleUnit&) = default;
};

/// What a schedule is built from.
struct ScheduleShape
{
    Schedule schedule = Schedule::OneFOneB;
    int32_t pp = 1;
    int32_t virtualStages = 1; ///< local chunks of the interleaved schedule (2 for dualpipev)
    int32_t microBatches = 1;
    /// Interleaved: micro-batches per group (Megatron-LM's microbatch_group_size_per_vp_stage); 0 = pp.
    int32_t groupSize = 0;
    /// Megatron-Core's EP all-to-all overlap: the interleaved schedule runs one more warm-up forward and pairs
    /// every steady-state forward with the backward after it; pp 1 pairs forward k+1 with backward k.
    bool pairForwardBackward = false;
};

/// The order of passes on `stage`:
/// - GPipe: all forwards, then all backwards (Narayanan et al. 2021 §2.2).
/// - 1F1B: pp - stage - 1 warm-up forwards, then one forward one backward, then the remaining backwards.
/// - Interleaved: Megatron-LM's interleaved 1F1B over v local chunks (megatron/core/pipeline_parallel/schedules.py,
///   get_schedule_table and get_pp_rank_microbatches, commit d98e8a64): micro-batches in groups of N, each group
///   through every chunk before the next; warm-up (pp - stage - 1) * 2 + (v - 1) * N (+1 with the EP overlap).
/// - ZB-H1: the 1F1B order of sail-sg/zero-bubble-pipeline-parallelism's quick implementation (commit 95212f7,
///   branch zb-h1-quick-start): on stages > 0 the backwards of the first `stage` steady micro-batches, of the last
///   one and of the cool-down are split into B and W; a W runs after the last steady backward and after each
///   cool-down backward once `stage` of them are queued, the rest at the end.
/// - DualPipe / DualPipeV: the eight steps of deepseek-ai/DualPipe's DualPipe.step / DualPipeV.step (commit
///   3da1bbea). DualPipe: micro-batches 0 .. m/2-1 enter at stage 0 (local chunk 0), m/2 .. m-1 at stage pp-1
///   (local chunk 1). DualPipeV: every micro-batch runs local chunk 0 down the stages and local chunk 1 back up.
/// Returns an empty order when the shape is one the schedule refuses (the validator says why).
std::vector<ScheduleUnit> scheduleOrder(const ScheduleShape& shape, int32_t stage);
/// The shape of a config's schedule (StagePlan::forConfig's virtual stages; its micro-batches per iteration).
ScheduleShape scheduleShapeOf(const Config& config);
} // namespace stagecraft
