// SPDX-License-Identifier: MIT
#include "config/programsize.h"

#include "config/pipelinelayout.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <vector>

namespace stagecraft {

namespace {
    std::atomic<int64_t> s_defaultMaxProgramNodes { kDefaultMaxProgramNodes };
    std::atomic<bool> s_validateCompressed { false };
    std::mutex s_adviceMutex;
    std::string s_advice;
} // namespace

void setProgramLimitAdvice(std::string advice)
{
    const std::lock_guard lock(s_adviceMutex);
    s_advice = std::move(advice);
}

std::string programLimitAdvice()
{
    const std::lock_guard lock(s_adviceMutex);
    return s_advice;
}

std::string groupedCount(int64_t value)
{
    const uint64_t magnitude = value < 0 ? uint64_t(0) - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
    const std::string digits = std::to_string(magnitude);
    std::string out = value < 0 ? "-" : "";
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

void setValidateCompressedProgramSize(bool compressed)
{
    s_validateCompressed.store(compressed, std::memory_order_relaxed);
}

bool validateCompressedProgramSize()
{
    return s_validateCompressed.load(std::memory_order_relaxed);
}

int64_t defaultMaxProgramNodes()
{
    return s_defaultMaxProgramNodes.load(std::memory_order_relaxed);
}

void setDefaultMaxProgramNodes(int64_t nodes)
{
    s_defaultMaxProgramNodes.store(nodes, std::memory_order_relaxed);
}

namespace {

    __extension__ typedef __int128 Wide;

    /// Nodes per layer and micro-batch (forward, backward and their collectives), measured on the shipped model
    /// families with each feature switched on alone (tests/core/tst_distribution checks the bound on presets).
    Wide nodesPerLayer(const Config& config)
    {
        const ParallelismConfig& p = config.parallelism;
        const TrainingConfig& t = config.training;
        const ModelConfig& m = config.model;
        Wide perLayer = 39; // a Llama layer with flash attention and no parallelism (GPT has 35)
        if (m.attention == AttentionKernel::Eager)
            perLayer += t.recompute == Recompute::Selective ? 9 : 6;
        else if (t.recompute == Recompute::Selective)
            perLayer += 1;
        if (p.tp > 1)
            perLayer += p.sequenceParallel ? 10 : 4;
        if (p.cp > 1)
            perLayer += 6;
        if (p.zero >= 3)
            perLayer += 3;
        else if (p.zero == 2)
            perLayer += 1;
        if (m.qkNorm)
            perLayer += 4;
        if (m.qkvBias)
            perLayer += 2;
        if (m.family == Family::Moe) { // every layer counted as an MoE layer: dense ones have fewer nodes
            perLayer += p.ep > 1 ? 14 : 10;
            if (m.sharedExpertFfnHidden > 0)
                perLayer += 12;
        }
        if (usesMla(m))
            perLayer += m.qLoraRank > 0 ? 18 : 12;
        // The forward once more: 1.39x to 1.41x measured under full; selective modules beyond core_attn re-run a
        // part of it, bounded by the same factor.
        if (t.recompute == Recompute::Full
            || (t.recompute == Recompute::Selective && (t.recomputeModules & ~recompute_module::kCoreAttn) != 0))
            perLayer = perLayer * 29 / 20;
        return perLayer * 21 / 20; // 5 % above every measurement
    }

    Wide microBatchesPerRank(const Config& config)
    {
        // Inference: every pipeline micro-batch passes once per phase (the prefill and each decode step), forward
        // only; counted as whole training passes, an upper bound.
        if (config.workload == Workload::Inference)
            return Wide(std::max<int64_t>(1, config.parallelism.pp))
                * std::max<int64_t>(1, (runsPrefill(config.inference) ? 1 : 0) + decodeSteps(config.inference));
        const TrainingConfig& t = config.training;
        const Wide perStep = Wide(std::max<int64_t>(1, t.microBatch)) * std::max<int64_t>(1, config.parallelism.dp);
        return std::max<Wide>(1, Wide(std::max<int64_t>(0, t.globalBatch)) / perStep);
    }

    int64_t saturate(Wide nodes)
    {
        return static_cast<int64_t>(std::min<Wide>(nodes, std::numeric_limits<int64_t>::max()));
    }

} // namespace

int64_t estimatedProgramNodes(const Config& config)
{
    const Wide layers = std::max<int64_t>(0, config.model.layers);
    const Wide stages = std::max<int64_t>(1, config.parallelism.pp);
    const Wide allLayers = layers + std::max<int64_t>(0, config.model.mtpModules); // a prediction module: a layer
    // Serving: each decode step's attention reads the KV cache of every step before it, so memory and time grow
    // with the square of the steps beyond the node count. Measured with `report tiny` (2 layers, workload
    // inference, output_tokens 4000) under /usr/bin/time -v on 2026-12-06: 157 MB at 800 decode steps, 525 MB at
    // 1600, i.e. about 82 bytes per layer and squared step, some 0.41 nodes' worth at ~200 bytes a node; counted as
    // 0.5 node per layer, squared step and pipeline micro-batch.
    Wide quadratic = 0;
    if (config.workload == Workload::Inference) {
        const Wide steps = std::max<int64_t>(0, decodeSteps(config.inference));
        quadratic = allLayers * steps * steps * stages / 2;
    }
    return saturate(microBatchesPerRank(config) * (allLayers * nodesPerLayer(config) + stages * 30)
        + allLayers * (20 + 45) + quadratic);
}

int64_t estimatedStageNodes(const Config& config, int64_t stageLayers)
{
    const Wide layers = std::max<int64_t>(0, stageLayers) + std::max<int64_t>(0, config.model.mtpModules);
    return saturate(microBatchesPerRank(config) * (layers * nodesPerLayer(config) + 30) + layers * 20);
}

int64_t largestStageLayers(const Config& config)
{
    const ParallelismConfig& p = config.parallelism;
    const int64_t layers = std::max<int64_t>(0, config.model.layers);
    const int64_t mtp = std::max<int64_t>(0, config.model.mtpModules);
    const int64_t pp = std::max<int64_t>(1, p.pp);
    auto ceilDiv = [](int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : a; };
    int64_t largest = 0;
    if (!p.pipelineLayout.empty()) {
        LayoutError error;
        const std::optional<PipelineLayout> layout = PipelineLayout::parse(p.pipelineLayout, error);
        if (!layout || layout->chunkCount() == 0)
            return layers + mtp; // validation reports the layout; bound by the whole model meanwhile
        const int64_t chunks = layout->chunkCount();
        std::vector<int64_t> perStage(static_cast<size_t>(pp), 0);
        for (int64_t g = 0; g < chunks; ++g) {
            int64_t held = 0;
            for (LayoutItem item : layout->chunks[static_cast<size_t>(g)])
                held += item == LayoutItem::Decoder || item == LayoutItem::Mtp ? 1 : 0;
            // Where chunk g runs (program/stageplan.h ChunkPlacement): DualPipe holds chunks s and pp-1-s on stage
            // s, DualPipeV chunk g >= pp on stage 2pp-1-g, every other schedule chunk g on stage g % pp.
            int64_t stage = g % pp;
            if (p.schedule == Schedule::DualPipeV && g >= pp)
                stage = std::max<int64_t>(0, 2 * pp - 1 - g);
            perStage[static_cast<size_t>(std::min(stage, pp - 1))] += held;
            if (p.schedule == Schedule::DualPipe && pp - 1 - g >= 0 && pp - 1 - g != g)
                perStage[static_cast<size_t>(pp - 1 - g)] += held;
        }
        largest = *std::max_element(perStage.begin(), perStage.end());
    } else if (p.firstStageLayers > 0 || p.lastStageLayers > 0) {
        const int64_t ends = (p.firstStageLayers > 0 ? 1 : 0) + (p.lastStageLayers > 0 ? 1 : 0);
        const int64_t rest = std::max<int64_t>(0, layers - p.firstStageLayers - p.lastStageLayers);
        largest =
            std::max({ p.firstStageLayers, p.lastStageLayers, ceilDiv(rest, std::max<int64_t>(1, pp - ends)) }) + mtp;
    } else {
        const int64_t slots = layers + (p.embeddingInSplit ? 1 : 0) + (p.lossInSplit ? 1 : 0);
        largest = ceilDiv(slots, pp) * (p.schedule == Schedule::DualPipe ? 2 : 1) + mtp;
    }
    return std::clamp<int64_t>(largest, 0, layers + mtp);
}

int64_t compressedMicroBatches(const Config& config, int64_t* period)
{
    if (config.workload == Workload::Inference)
        return 0; // a handful of micro-batches: always synthesized in full
    const int64_t m = static_cast<int64_t>(microBatchesPerRank(config));
    const int64_t pp = std::max<int64_t>(1, config.parallelism.pp);
    int64_t kept = 0;
    int64_t step = 1;
    if (config.parallelism.schedule == Schedule::OneFOneB) {
        kept = pp + 1;
    } else if (config.parallelism.schedule == Schedule::Interleaved) {
        kept = 3 * pp;
        step = pp;
        if (m % pp != 0)
            return 0; // validation refuses it: synthesize in full to say so
    }
    if (period)
        *period = step;
    return kept > 0 && m > 2 * kept + step ? kept : 0;
}

int64_t builtProgramNodes(const Config& config, bool compressed)
{
    int64_t period = 1;
    const int64_t kept = compressed ? compressedMicroBatches(config, &period) : 0;
    if (kept == 0)
        return estimatedProgramNodes(config);
    auto with = [&](int64_t microBatches) {
        Config c = config;
        c.training.globalBatch = microBatches * std::max<int64_t>(1, config.training.microBatch)
            * std::max<int64_t>(1, config.parallelism.dp);
        return estimatedProgramNodes(c);
    };
    return saturate(Wide(with(kept)) + with(kept + period));
}

int64_t builtStageNodes(const Config& config, bool compressed)
{
    // estimatedStageNodes() adds the MTP modules to every stage; largestStageLayers() has counted them already.
    const int64_t layers =
        std::max<int64_t>(0, largestStageLayers(config) - std::max<int64_t>(0, config.model.mtpModules));
    int64_t period = 1;
    const int64_t kept = compressed ? compressedMicroBatches(config, &period) : 0;
    if (kept == 0)
        return estimatedStageNodes(config, layers);
    auto with = [&](int64_t microBatches) {
        Config c = config;
        c.training.globalBatch = microBatches * std::max<int64_t>(1, config.training.microBatch)
            * std::max<int64_t>(1, config.parallelism.dp);
        return estimatedStageNodes(c, layers);
    };
    return saturate(Wide(with(kept)) + with(kept + period));
}

} // namespace stagecraft
