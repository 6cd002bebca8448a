// SPDX-License-Identifier: MIT
#include "program/stageplan.h"

#include <algorithm>

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

StagePlan::StagePlan(int64_t layers, int64_t pp, int64_t virtualStages, const PipelineSplit& split)
    : m_pp(static_cast<int32_t>(std::max<int64_t>(1, pp)))
    , m_v(static_cast<int32_t>(std::max<int64_t>(1, virtualStages)))
    , m_layers(static_cast<int32_t>(layers))
{
    const int32_t chunks = m_pp * m_v;
    m_first.resize(static_cast<size_t>(chunks) + 1);
    const std::vector<int64_t> uneven = unevenChunkLayers(m_layers, m_pp, m_v, split);
    m_splitApplied = !uneven.empty();
    const int32_t base = m_layers / chunks, extra = m_layers % chunks;
    int32_t at = 0;
    for (int32_t c = 0; c < chunks; ++c) {
        m_first[static_cast<size_t>(c)] = at;
        at += m_splitApplied ? static_cast<int32_t>(uneven[static_cast<size_t>(c)]) : base + (c < extra ? 1 : 0);
    }
    m_first[static_cast<size_t>(chunks)] = at;
}

StagePlan StagePlan::forConfig(const Config& config)
{
    const ParallelismConfig& p = config.parallelism;
    return StagePlan(config.model.layers, p.pp, p.schedule == Schedule::Interleaved ? p.virtualStages : 1,
        PipelineSplit::fromConfig(p));
}

int32_t StagePlan::stageLayers(int32_t stage) const
{
    int32_t n = 0;
    for (int32_t c = 0; c < m_v; ++c)
        n += chunkLayers(c * m_pp + stage);
    return n;
}

int32_t StagePlan::chunkOfLayer(int32_t layer) const
{
    if (layer < 0)
        return 0;
    if (layer >= m_layers)
        return chunkCount() - 1;
    // The last boundary not above the layer: chunks without decoder layers share their boundary with the next.
    auto it = std::upper_bound(m_first.begin(), m_first.end(), layer);
    return static_cast<int32_t>(it - m_first.begin()) - 1;
}

std::vector<ScheduleUnit> scheduleOrder(
    Schedule schedule, int32_t pp, int32_t virtualStages, int32_t stage, int32_t microBatches)
{
    std::vector<ScheduleUnit> out;
    const int32_t m = microBatches;
    if (schedule == Schedule::GPipe) {
        for (int32_t c = 0; c < virtualStages; ++c)
            for (int32_t i = 0; i < m; ++i)
                out.push_back({ i, c, false });
        for (int32_t c = virtualStages - 1; c >= 0; --c)
            for (int32_t i = 0; i < m; ++i)
                out.push_back({ i, c, true });
        return out;
    }
    if (schedule == Schedule::OneFOneB || virtualStages <= 1) {
        const int32_t warmup = std::min(pp - stage - 1, m);
        for (int32_t i = 0; i < warmup; ++i)
            out.push_back({ i, 0, false });
        for (int32_t i = 0; i < m - warmup; ++i) {
            out.push_back({ warmup + i, 0, false });
            out.push_back({ i, 0, true });
        }
        for (int32_t i = m - warmup; i < m; ++i)
            out.push_back({ i, 0, true });
        return out;
    }
    // Interleaved 1F1B (Megatron-LM forward_backward_pipelining_with_interleaving): unit k of m*v forwards
    // visits chunk (k / pp) % v with micro-batch (k / (pp*v)) * pp + k % pp; backwards visit chunks in reverse.
    const int32_t v = virtualStages;
    const int32_t total = m * v;
    auto forwardUnit = [&](int32_t k) { return ScheduleUnit { (k / (pp * v)) * pp + k % pp, (k / pp) % v, false }; };
    auto backwardUnit = [&](int32_t k) {
        return ScheduleUnit { (k / (pp * v)) * pp + k % pp, v - 1 - (k / pp) % v, true };
    };
    const int32_t warmup = std::min((pp - stage - 1) * 2 + (v - 1) * pp, total);
    for (int32_t k = 0; k < warmup; ++k)
        out.push_back(forwardUnit(k));
    for (int32_t k = 0; k < total - warmup; ++k) {
        out.push_back(forwardUnit(warmup + k));
        out.push_back(backwardUnit(k));
    }
    for (int32_t k = total - warmup; k < total; ++k)
        out.push_back(backwardUnit(k));
    return out;
}

} // namespace stagecraft
