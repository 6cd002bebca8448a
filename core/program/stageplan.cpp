// SPDX-License-Identifier: MIT
#include "program/stageplan.h"

#include "model/modelcost.h"

#include <algorithm>
#include <array>

namespace stagecraft {

namespace {

    /// Decoder layers per global chunk under an uneven split, or empty when there is none or it is impossible.
    std::vector<int64_t> unevenChunkLayers(int64_t layers, int64_t pp, int64_t v, const PipelineSplit& split)
    {
        const bool accounted = split.embeddingInSplit || split.lossInSplit;
        if (layers < 0 || (split.uneven() && accounted) || (!split.uneven() && !accounted))
            return {};
        const int64_t chunks = pp * v;
        std::vector<int64_t> sizes(static_cast<size_t>(chunks), 0);
        if (split.uneven()) {
            if (pp < 2)
                return {};
            const int64_t first = split.firstStageLayers, last = split.lastStageLayers;
            const int64_t middleStages = pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
            const int64_t middleLayers = layers - first - last;
            // Megatron-LM: middle stages and middle layers exist together or not at all, and divide evenly.
            if (middleLayers < 0 || (middleStages == 0) != (middleLayers == 0)
                || (middleStages > 0 && middleLayers % middleStages != 0))
                return {};
            const int64_t perMiddle = middleStages > 0 ? middleLayers / middleStages : 0;
            for (int64_t stage = 0; stage < pp; ++stage) {
                const int64_t n = stage == 0 && first > 0 ? first : stage == pp - 1 && last > 0 ? last : perMiddle;
                if (n % v != 0)
                    return {};
                for (int64_t c = 0; c < v; ++c)
                    sizes[static_cast<size_t>(c * pp + stage)] = n / v;
            }
            return sizes;
        }
        const int64_t slots = layers + (split.embeddingInSplit ? 1 : 0) + (split.lossInSplit ? 1 : 0);
        if (slots % chunks != 0)
            return {};
        std::fill(sizes.begin(), sizes.end(), slots / chunks);
        if (split.embeddingInSplit)
            --sizes.front();
        if (split.lossInSplit)
            --sizes.back();
        if (*std::min_element(sizes.begin(), sizes.end()) < 0)
            return {};
        return sizes;
    }

} // namespace

PipelineSplit PipelineSplit::fromConfig(const ParallelismConfig& p)
{
    return PipelineSplit { p.firstStageLayers, p.lastStageLayers, p.embeddingInSplit, p.lossInSplit };
}

PipelineLayout shorthandLayout(
    int64_t layers, int64_t mtpModules, int64_t pp, int64_t virtualStages, const PipelineSplit& split, bool* applied)
{
    pp = std::max<int64_t>(1, pp);
    const int64_t v = std::max<int64_t>(1, virtualStages);
    layers = std::max<int64_t>(0, layers);
    const int64_t chunks = pp * v;
    std::vector<int64_t> sizes = unevenChunkLayers(layers, pp, v, split);
    if (applied)
        *applied = !sizes.empty();
    if (sizes.empty()) {
        sizes.assign(static_cast<size_t>(chunks), layers / chunks);
        for (int64_t c = 0; c < layers % chunks; ++c)
            ++sizes[static_cast<size_t>(c)];
    }
    return layoutOfChunks(sizes, mtpModules);
}

PipelineLayout layoutOfChunks(const std::vector<int64_t>& decoders, int64_t mtpModules)
{
    PipelineLayout layout;
    layout.chunks.resize(decoders.size());
    for (size_t c = 0; c < decoders.size(); ++c) {
        std::vector<LayoutItem>& chunk = layout.chunks[c];
        if (c == 0)
            chunk.push_back(LayoutItem::Embedding);
        chunk.insert(chunk.end(), static_cast<size_t>(std::max<int64_t>(0, decoders[c])), LayoutItem::Decoder);
        if (c + 1 == decoders.size()) {
            chunk.insert(chunk.end(), static_cast<size_t>(std::max<int64_t>(0, mtpModules)), LayoutItem::Mtp);
            chunk.push_back(LayoutItem::Loss);
        }
    }
    layout.chunkOffsets.assign(layout.chunks.size(), 0);
    for (const auto& chunk : layout.chunks)
        layout.itemOffsets.emplace_back(chunk.size(), 0);
    return layout;
}

std::optional<PipelineLayout> balancedLayout(int64_t layers, int64_t mtpModules, int64_t pp, int64_t virtualStages)
{
    if (layers < 1 || mtpModules < 0 || pp < 1 || virtualStages < 1 || pp > (int64_t(1) << 20)
        || virtualStages > (int64_t(1) << 20) || layers > (int64_t(1) << 30) || mtpModules > (int64_t(1) << 20))
        return std::nullopt;
    const int64_t chunks = pp * virtualStages;
    const int64_t slots = layers + 2 + mtpModules;
    if (slots / chunks < 1 || chunks > (int64_t(1) << 20))
        return std::nullopt;
    std::vector<int64_t> size(static_cast<size_t>(chunks), slots / chunks);
    // Stages in the order they take an extra slot: middle ones from the last, then the last, then the first.
    std::vector<int64_t> stages;
    for (int64_t s = pp - 2; s >= 1; --s)
        stages.push_back(s);
    if (pp > 1)
        stages.push_back(pp - 1);
    stages.push_back(0);
    int64_t extra = slots % chunks;
    for (int64_t round = 0; extra > 0 && round < virtualStages; ++round)
        for (int64_t s : stages) {
            if (extra == 0)
                break;
            // Local chunk v-1-round of stage s is global chunk (v-1-round) * pp + s.
            ++size[static_cast<size_t>((virtualStages - 1 - round) * pp + s)];
            --extra;
        }
    const size_t last = static_cast<size_t>(chunks - 1);
    if (size[0] < 1 || size[last] < 1 + mtpModules + (chunks == 1 ? 1 : 0))
        return std::nullopt;
    // The slots less the embedding's and the MTP modules' and loss's places are decoder layers.
    size[0] -= 1;
    size[last] -= 1 + mtpModules;
    return layoutOfChunks(size, mtpModules);
}

StagePlan::StagePlan(int64_t layers, int64_t pp, int64_t virtualStages, const PipelineSplit& split, int64_t mtpModules,
    ChunkPlacement placement)
    : m_pp(static_cast<int32_t>(std::max<int64_t>(1, pp)))
    , m_v(static_cast<int32_t>(std::max<int64_t>(1, virtualStages)))
    , m_placement(placement)
{
    bool applied = false;
    const PipelineLayout layout = shorthandLayout(layers, mtpModules, m_pp, m_v, split, &applied);
    build(layout);
    m_splitApplied = applied;
}

StagePlan::StagePlan(const PipelineLayout& layout, int64_t pp, ChunkPlacement placement)
    : m_pp(static_cast<int32_t>(std::max<int64_t>(1, pp)))
    , m_placement(placement)
{
    m_v = static_cast<int32_t>(std::max<int64_t>(1, layout.chunkCount() / m_pp));
    build(layout);
    const PipelineLayout even = shorthandLayout(m_layers, layout.count(LayoutItem::Mtp), m_pp, m_v, {});
    m_splitApplied = !(layout == even);
}

void StagePlan::build(const PipelineLayout& layout)
{
    m_layout = layout;
    const auto chunks = static_cast<int32_t>(layout.chunks.size());
    m_first.assign(static_cast<size_t>(chunks) + 1, 0);
    int32_t at = 0;
    m_embeddingChunk = 0;
    m_lossChunk = m_mtpChunk = chunks - 1;
    bool mtpSeen = false;
    for (int32_t c = 0; c < chunks; ++c) {
        m_first[static_cast<size_t>(c)] = at;
        for (LayoutItem item : layout.chunks[static_cast<size_t>(c)]) {
            switch (item) {
            case LayoutItem::Embedding:
                m_embeddingChunk = c;
                break;
            case LayoutItem::Decoder:
                ++at;
                break;
            case LayoutItem::Mtp:
                if (!mtpSeen)
                    m_mtpChunk = c;
                mtpSeen = true;
                break;
            case LayoutItem::Loss:
                m_lossChunk = c;
                break;
            }
        }
    }
    m_first[static_cast<size_t>(chunks)] = at;
    m_layers = at;
    if (!mtpSeen)
        m_mtpChunk = m_lossChunk;
}

StagePlan StagePlan::forConfig(const Config& config)
{
    const ParallelismConfig& p = config.parallelism;
    const ChunkPlacement placement = p.schedule == Schedule::DualPipeV ? ChunkPlacement::VShape
        : p.schedule == Schedule::DualPipe                             ? ChunkPlacement::Mirror
                                                                       : ChunkPlacement::Cyclic;
    if (!p.pipelineLayout.empty()) {
        LayoutError error;
        if (const std::optional<PipelineLayout> layout = PipelineLayout::parse(p.pipelineLayout, error);
            layout && !checkLayout(*layout, config.model.layers, config.model.mtpModules, p.pp))
            return StagePlan(*layout, p.pp, placement);
    }
    return StagePlan(config.model.layers, p.pp, pipelineVirtualStages(p), PipelineSplit::fromConfig(p),
        config.model.mtpModules, placement);
}

int32_t StagePlan::stageLayers(int32_t stage) const
{
    int32_t n = 0;
    for (int32_t c = 0; c < localChunks(); ++c)
        n += chunkLayers(chunkOf(stage, c));
    return n;
}

int32_t StagePlan::chunkOfLayer(int32_t layer) const
{
    if (layer < 0)
        return m_embeddingChunk;
    if (layer == m_layers)
        return m_lossChunk;
    if (layer > m_layers)
        return m_mtpChunk;
    // The last boundary not above the layer: chunks without decoder layers share their boundary with the next.
    auto it = std::upper_bound(m_first.begin(), m_first.end(), layer);
    return static_cast<int32_t>(it - m_first.begin()) - 1;
}

namespace {

    ScheduleUnit forwardUnit(int32_t mb, int32_t chunk)
    {
        return ScheduleUnit { mb, chunk, UnitPass::Forward, false };
    }
    ScheduleUnit backwardUnit(int32_t mb, int32_t chunk, UnitPass pass = UnitPass::Backward)
    {
        return ScheduleUnit { mb, chunk, pass, false };
    }

    std::vector<ScheduleUnit> gpipeOrder(int32_t v, int32_t m)
    {
        std::vector<ScheduleUnit> out;
        for (int32_t c = 0; c < v; ++c)
            for (int32_t i = 0; i < m; ++i)
                out.push_back(forwardUnit(i, c));
        for (int32_t c = v - 1; c >= 0; --c)
            for (int32_t i = 0; i < m; ++i)
                out.push_back(backwardUnit(i, c));
        return out;
    }

    /// 1F1B, and with `split` ZB-H1's split of the backward (see scheduleOrder).
    std::vector<ScheduleUnit> oneFOneBOrder(int32_t pp, int32_t stage, int32_t m, bool split, bool paired)
    {
        std::vector<ScheduleUnit> out;
        const int32_t warmup = std::min(std::max(pp - stage - 1, paired ? 1 : 0), m);
        const int32_t remaining = m - warmup;
        std::vector<int32_t> queued; // micro-batches whose W waits, oldest first
        auto backward = [&](int32_t mb, bool splitHere) {
            out.push_back(backwardUnit(mb, 0, splitHere ? UnitPass::BackwardInput : UnitPass::Backward));
            if (splitHere)
                queued.push_back(mb);
        };
        auto popWeight = [&] {
            out.push_back(backwardUnit(queued.front(), 0, UnitPass::BackwardWeight));
            queued.erase(queued.begin());
        };
        for (int32_t i = 0; i < warmup; ++i)
            out.push_back(forwardUnit(i, 0));
        for (int32_t i = 0; i < remaining; ++i) {
            const bool last = i == remaining - 1;
            out.push_back(forwardUnit(warmup + i, 0));
            out.back().pairedWithNext = paired;
            backward(i, split && stage > 0 && (i < stage || last));
            if (split && last && stage > 0 && i >= stage)
                popWeight();
        }
        for (int32_t i = 0; i < warmup; ++i) {
            backward(remaining + i, split && stage > 0);
            if (split && stage > 0 && remaining + i >= stage)
                popWeight();
        }
        while (!queued.empty())
            popWeight();
        return out;
    }

    std::vector<ScheduleUnit> interleavedOrder(const ScheduleShape& shape, int32_t stage)
    {
        const int32_t pp = shape.pp, v = shape.virtualStages, m = shape.microBatches;
        const int32_t n = interleavedGroupSize(pp, m, shape.groupSize);
        // Megatron-LM's schedule table: (micro-batch, chunk) of each virtual micro-batch, group by group.
        std::vector<std::pair<int32_t, int32_t>> table;
        for (int32_t first = 0; first < m; first += n) {
            const int32_t end = first + n >= m ? m : first + n;
            for (int32_t c = 0; c < v; ++c)
                for (int32_t mb = first; mb < end; ++mb)
                    table.emplace_back(mb, c);
            if (end == m)
                break;
        }
        const auto total = static_cast<int32_t>(table.size());
        int32_t warmup = (pp - stage - 1) * 2 + (v - 1) * n + (shape.pairForwardBackward ? 1 : 0);
        warmup = std::min(warmup, total);
        auto fwd = [&](int32_t k) {
            return forwardUnit(table[static_cast<size_t>(k)].first, table[static_cast<size_t>(k)].second);
        };
        auto bwd = [&](int32_t k) {
            return backwardUnit(table[static_cast<size_t>(k)].first, v - 1 - table[static_cast<size_t>(k)].second);
        };
        std::vector<ScheduleUnit> out;
        for (int32_t k = 0; k < warmup; ++k)
            out.push_back(fwd(k));
        for (int32_t k = 0; k < total - warmup; ++k) {
            out.push_back(fwd(warmup + k));
            out.back().pairedWithNext = shape.pairForwardBackward;
            out.push_back(bwd(k));
        }
        for (int32_t k = total - warmup; k < total; ++k)
            out.push_back(bwd(k));
        return out;
    }

    /// DualPipe (mirror = true) and DualPipeV: the eight steps of DualPipe.step / DualPipeV.step. `phase` 0/1 is the
    /// reference's module index, which under DualPipe's second half of the ranks is the other direction.
    std::vector<ScheduleUnit> dualPipeOrder(int32_t pp, int32_t stage, int32_t m, bool mirror)
    {
        std::vector<ScheduleUnit> out;
        const bool secondHalf = mirror && stage >= pp / 2;
        const int32_t ranks = mirror ? pp / 2 : pp; // the reference's num_half_ranks, or num_ranks for DualPipeV
        const int32_t rank = mirror ? std::min(stage, pp - 1 - stage) : stage; // half_rank, or rank
        const int32_t chunks = mirror ? m / 2 : m; // micro-batches per direction (DualPipe) or in all (DualPipeV)
        // Under DualPipe the step's special first pair is on the middle ranks; under DualPipeV on the last rank.
        const bool special = mirror ? (stage == pp / 2 - 1 || stage == pp / 2) : stage == pp - 1;
        std::array<int32_t, 2> nextF { 0, 0 }, nextB { 0, 0 };
        std::vector<ScheduleUnit> queued; // split backwards whose W waits, oldest first
        auto unitMb = [&](int32_t direction, int32_t id) { return mirror ? direction * chunks + id : id; };
        auto F = [&](int32_t phase) {
            const int32_t d = phase ^ (secondHalf ? 1 : 0);
            out.push_back(forwardUnit(unitMb(d, nextF[static_cast<size_t>(d)]++), d));
        };
        auto B = [&](int32_t phase, bool zeroBubble) {
            const int32_t d = phase ^ (secondHalf ? 1 : 0);
            const int32_t mb = unitMb(d, nextB[static_cast<size_t>(d)]++);
            out.push_back(backwardUnit(mb, d, zeroBubble ? UnitPass::BackwardInput : UnitPass::Backward));
            if (zeroBubble)
                queued.push_back(backwardUnit(mb, d, UnitPass::BackwardWeight));
        };
        auto W = [&] {
            out.push_back(queued.front());
            queued.erase(queued.begin());
        };
        auto pair = [&](int32_t phase0, int32_t phase1) {
            F(phase0);
            out.back().pairedWithNext = true;
            B(phase1, false);
        };
        for (int32_t i = 0; i < (ranks - rank - 1) * 2; ++i) // step 1: nF0
            F(0);
        for (int32_t i = 0; i < rank + 1; ++i) { // step 2: nF0F1
            F(0);
            F(1);
        }
        for (int32_t i = 0; i < ranks - rank - 1; ++i) { // step 3: nB1W1F1
            B(1, true);
            W();
            F(1);
        }
        const int32_t main = chunks - (mirror ? pp : 2 * pp) + rank + 1;
        for (int32_t i = 0; i < main; ++i) { // step 4: nF0B1F1B0
            if (i == 0 && special) {
                F(0);
                B(1, false);
            } else {
                pair(0, 1);
            }
            pair(1, 0);
        }
        for (int32_t i = 0; i < ranks - rank - 1; ++i) { // step 5: nB1F1B0
            B(1, false);
            pair(1, 0);
        }
        bool zeroBubble = false; // step 6: nB1B0, the second half with zero bubble
        const int32_t step6 = rank + 1;
        for (int32_t i = 0; i < step6; ++i) {
            if (i == step6 / 2 && rank % 2 == 1)
                zeroBubble = true;
            B(1, zeroBubble);
            if (i == step6 / 2 && rank % 2 == 0)
                zeroBubble = true;
            B(0, zeroBubble);
        }
        for (int32_t i = 0; i < ranks - rank - 1; ++i) { // step 7: nWB0
            W();
            B(0, true);
        }
        while (!queued.empty()) // step 8: nW
            W();
        return out;
    }

} // namespace

std::vector<ScheduleUnit> scheduleOrder(const ScheduleShape& shape, int32_t stage)
{
    const int32_t pp = std::max(1, shape.pp), m = shape.microBatches;
    if (m <= 0)
        return {};
    switch (shape.schedule) {
    case Schedule::GPipe:
        return gpipeOrder(std::max(1, shape.virtualStages), m);
    case Schedule::Interleaved:
        if (shape.virtualStages > 1)
            return interleavedOrder(shape, stage);
        return oneFOneBOrder(pp, stage, m, false, shape.pairForwardBackward && pp == 1);
    case Schedule::OneFOneB:
        return oneFOneBOrder(pp, stage, m, false, shape.pairForwardBackward && pp == 1);
    case Schedule::ZeroBubbleH1:
        return oneFOneBOrder(pp, stage, m, true, false);
    case Schedule::DualPipe:
        if (pp % 2 != 0 || m % 2 != 0 || m < 2 * pp)
            return {};
        return dualPipeOrder(pp, stage, m, true);
    case Schedule::DualPipeV:
        if (m < 2 * pp)
            return {};
        return dualPipeOrder(pp, stage, m, false);
    }
    return {};
}

ScheduleShape scheduleShapeOf(const Config& config)
{
    const ParallelismConfig& p = config.parallelism;
    ScheduleShape shape;
    shape.schedule = p.schedule;
    shape.pp = static_cast<int32_t>(std::max<int64_t>(1, p.pp));
    shape.virtualStages = static_cast<int32_t>(pipelineVirtualStages(p));
    shape.microBatches = static_cast<int32_t>(microBatchesPerIteration(config));
    shape.groupSize = static_cast<int32_t>(std::max<int64_t>(0, p.microBatchGroupSize));
    shape.pairForwardBackward =
        p.overlapMoeExpertParallelComm && (p.schedule == Schedule::Interleaved || p.schedule == Schedule::OneFOneB);
    return shape;
}

} // namespace stagecraft
