// SPDX-License-Identifier: MIT
#include "model/modelcost.h"

#include "model/modelsymbols.h"

#include <algorithm>

namespace stagecraft {

int64_t microBatchesPerIteration(const Config& config)
{
    if (isInference(config)) // each replica's requests in pp pipeline micro-batches (validation: batch % (dp*pp))
        return std::max<int64_t>(1, config.parallelism.pp);
    const int64_t perStep = config.training.microBatch * config.parallelism.dp;
    return perStep > 0 ? config.training.globalBatch / perStep : 0;
}

int64_t paddedVocab(int64_t vocab, int64_t tp)
{
    const int64_t multiple = 128 * (tp > 0 ? tp : 1);
    return (vocab + multiple - 1) / multiple * multiple;
}

Binding modelBinding(const Config& config, bool padVocabForTp)
{
    const auto& s = ModelSymbols::get();
    const ModelConfig& m = config.model;
    const ParallelismConfig& p = config.parallelism;
    Binding b;
    if (isInference(config)) {
        // Batch is a pipeline micro-batch of requests over all replicas; Seq the prompt.
        b.set(s.batch, config.inference.batch / microBatchesPerIteration(config));
        b.set(s.seq, promptTokens(config));
    } else {
        b.set(s.batch, config.training.microBatch * p.dp);
        b.set(s.seq, m.seqLen);
    }
    b.set(s.dmodel, m.hidden);
    b.set(s.dff, m.ffnHidden);
    b.set(s.head, m.heads);
    b.set(s.kvhead, m.kvHeads);
    b.set(s.dvocal, padVocabForTp ? paddedVocab(m.vocab, p.tp) : m.vocab);
    b.set(s.experts, m.experts > 0 ? m.experts : 1);
    b.set(s.kexperts, m.topK > 0 ? m.topK : 1);
    b.set(s.dffExpert, m.expertFfnHidden);
    b.set(s.dffShared, m.sharedExpertFfnHidden);
    b.set(s.dhead, qkHeadDim(m));
    b.set(s.dvhead, valueHeadDim(m));
    b.set(s.dqlora, m.qLoraRank);
    b.set(s.dkvlora, m.kvLoraRank);
    b.set(s.drope, m.qkRopeHeadDim);
    b.set(s.dp, p.dp);
    b.set(s.tp, p.tp);
    b.set(s.cp, p.cp);
    b.set(s.ep, p.ep);
    b.set(s.edp, p.ep > 0 ? p.dp / p.ep : p.dp);
    return b;
}

namespace {
    bool evalInto(const Expr& e, const Binding& b, int64_t& out, std::string& error, std::string& keyPath)
    {
        EvalResult r = e.evaluate(b);
        if (!r.ok()) {
            error = describeEvalError(e, r);
            const char* key = e.contains(r.symbol) ? configKeyOf(r.symbol) : "";
            keyPath = *key ? key : "model";
            if (r.status == EvalStatus::Overflow && *key) {
                // The key and its value, not the polynomial that overflowed (hundreds of characters of symbols
                // the user never wrote).
                const int64_t value = b.value(r.symbol);
                error = std::string(key).substr(std::string(key).find('.') + 1) + "=" + std::to_string(value)
                    + " is too large: a FLOP or byte count of the model passes 2^63";
            }
            return false;
        }
        out = r.value;
        return true;
    }
} // namespace

bool computeModelCost(
    const ModelGraph& graph, const Config& config, ModelCost& out, std::string& error, std::string* errorKeyPath)
{
    // Evaluate one sequence exactly (Batch = 1), then scale: every forward and backward op is linear in Batch.
    Binding b = modelBinding(config);
    const int64_t sequencesPerMicroBatch = isInference(config)
        ? config.inference.batch / microBatchesPerIteration(config)
        : config.training.microBatch * config.parallelism.dp;
    b.set(ModelSymbols::get().batch, 1);
    // Recompute: what the policy re-runs plus what fused attention kernels re-run in their backward; the
    // backward count below leaves the latter out, so forward + backward are model FLOPs (PaLM appendix B).
    Expr recompute = graph.kernelRecomputeFlops;
    if (config.training.recompute == Recompute::Full)
        recompute += graph.fullRecomputeFlops;
    else if (config.training.recompute == Recompute::Selective)
        for (const auto& [modules, flops] : graph.moduleRecomputeFlops)
            if (modules & config.training.recomputeModules)
                recompute += flops;
    ModelCost c;
    c.microBatches = microBatchesPerIteration(config);
    int64_t forward = 0, backward = 0, recomputed = 0;
    std::string keyPath;
    if (!evalInto(graph.parameterCount(), b, c.params, error, keyPath)
        || !evalInto(graph.mtpParameters, b, c.mtpParams, error, keyPath)
        || !evalInto(graph.flops(Pass::Forward), b, forward, error, keyPath)
        || !evalInto(graph.flops(Pass::Backward) - graph.kernelRecomputeFlops, b, backward, error, keyPath)
        || !evalInto(recompute, b, recomputed, error, keyPath)
        || !evalInto(graph.flops(Pass::Optimizer), b, c.optimizerFlops, error, keyPath)) {
        // Serving: Seq is the prompt, which inference.prompt_tokens sets when it is not 0.
        if (keyPath == "model.seq_len" && isInference(config) && config.inference.promptTokens > 0) {
            keyPath = "inference.prompt_tokens";
            if (error.rfind("seq_len=", 0) == 0)
                error = "prompt_tokens=" + error.substr(8);
        }
        if (errorKeyPath)
            *errorKeyPath = keyPath;
        return false;
    }
    const double perMicroBatch = static_cast<double>(sequencesPerMicroBatch);
    c.forwardFlopsPerMicroBatch = static_cast<double>(forward) * perMicroBatch;
    c.backwardFlopsPerMicroBatch = static_cast<double>(backward) * perMicroBatch;
    c.recomputeFlopsPerMicroBatch = static_cast<double>(recomputed) * perMicroBatch;
    c.flopsPerIteration = static_cast<double>(c.microBatches)
            * (c.forwardFlopsPerMicroBatch + c.backwardFlopsPerMicroBatch + c.recomputeFlopsPerMicroBatch)
        + static_cast<double>(c.optimizerFlops);
    out = c;
    return true;
}

} // namespace stagecraft
