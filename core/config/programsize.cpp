// SPDX-License-Identifier: MIT
#include "config/programsize.h"

#include <algorithm>
#include <atomic>
#include <limits>

namespace stagecraft {

namespace {
    std::atomic<int64_t> s_defaultMaxProgramNodes { kDefaultMaxProgramNodes };
}

int64_t defaultMaxProgramNodes()
{
    return s_defaultMaxProgramNodes.load(std::memory_order_relaxed);
}

void setDefaultMaxProgramNodes(int64_t nodes)
{
    s_defaultMaxProgramNodes.store(nodes, std::memory_order_relaxed);
}

int64_t estimatedProgramNodes(const Config& config)
{
    __extension__ typedef __int128 Wide;
    const ParallelismConfig& p = config.parallelism;
    const TrainingConfig& t = config.training;
    const Wide layers = std::max<int64_t>(0, config.model.layers);
    const Wide perStep = Wide(std::max<int64_t>(1, t.microBatch)) * std::max<int64_t>(1, p.dp);
    const Wide microBatches = std::max<Wide>(1, Wide(std::max<int64_t>(0, t.globalBatch)) / perStep);
    const Wide stages = std::max<int64_t>(1, p.pp);
    Wide perLayer = 47;
    if (p.tp > 1)
        perLayer += 11;
    if (p.cp > 1)
        perLayer += 8;
    if (t.recompute == Recompute::Full)
        perLayer += 30;
    else if (t.recompute == Recompute::Selective)
        perLayer += 8;
    if (p.zero >= 3)
        perLayer += 4;
    if (config.model.family == Family::Moe)
        perLayer += 10;
    const Wide nodes = microBatches * (layers * perLayer + stages * 30) + layers * (20 + 45);
    const Wide cap = std::numeric_limits<int64_t>::max();
    return static_cast<int64_t>(std::min(nodes, cap));
}

} // namespace stagecraft
