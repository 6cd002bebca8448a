// SPDX-License-Identifier: MIT
#include "program/stageplan.h"

#include <algorithm>

namespace stagecraft {

StagePlan::StagePlan(int64_t layers, int64_t pp, int64_t virtualStages)
    : m_pp(static_cast<int32_t>(std::max<int64_t>(1, pp)))
    , m_v(static_cast<int32_t>(std::max<int64_t>(1, virtualStages)))
    , m_layers(static_cast<int32_t>(layers))
{
    const int32_t chunks = m_pp * m_v;
    const int32_t base = m_layers / chunks, extra = m_layers % chunks;
    m_first.resize(static_cast<size_t>(chunks) + 1);
    int32_t at = 0;
    for (int32_t c = 0; c < chunks; ++c) {
        m_first[static_cast<size_t>(c)] = at;
        at += base + (c < extra ? 1 : 0);
    }
    m_first[static_cast<size_t>(chunks)] = at;
}

int32_t StagePlan::chunkOfLayer(int32_t layer) const
{
    if (layer < 0)
        return 0;
    if (layer >= m_layers)
        return chunkCount() - 1;
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
