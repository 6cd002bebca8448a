// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "model/modelgraph.h"
#include "symbolic/expr.h"

#include <cstdint>
#include <string>

namespace stagecraft {

/// Micro-batches each data-parallel replica runs per iteration: global_batch / (micro_batch * dp). Inference: the
/// pipeline micro-batches of requests, pp (one per stage in flight).
int64_t microBatchesPerIteration(const Config& config);

/// Binding of the model symbols for `config` with every mesh symbol bound to its degree. `Batch` is the global
/// micro-batch micro_batch * dp (inference: inference.batch / pp, and `Seq` the prompt). `Dvocal` is the published
/// vocabulary unless `padVocabForTp`, in which case it is padded up to a multiple of 128 * tp as Megatron-LM does
/// (make_vocab_size_divisible_by = 128).
Binding modelBinding(const Config& config, bool padVocabForTp = false);

/// Megatron-LM's padded vocabulary: the smallest multiple of 128 * tp that is >= vocab.
int64_t paddedVocab(int64_t vocab, int64_t tp);

/// Whole-model totals of one training iteration, unsharded.
struct ModelCost
{
    int64_t params = 0; ///< trainable parameters of the main model (published vocabulary)
    /// Own parameters of the multi-token prediction modules, reported apart (they share the embedding and the
    /// output head, which `params` counts); their FLOPs are in the totals below.
    int64_t mtpParams = 0;
    // Per global micro-batch (micro_batch * dp sequences); doubles because large models exceed int64 there
    // (llama3-405b, 1024 sequences of 8192 tokens: 2e19). Exact per sequence, scaled (FLOPs are linear in batch).
    double forwardFlopsPerMicroBatch = 0;
    double backwardFlopsPerMicroBatch = 0;
    double recomputeFlopsPerMicroBatch = 0; ///< forward work re-run by the recompute policy
    int64_t optimizerFlops = 0;
    int64_t microBatches = 0;
    /// microBatches * (fwd + bwd + recompute) + optimizer; FLOPs, not MACs. A double because a large model's
    /// iteration exceeds int64 (llama3-405b at 16M tokens: 4.4e19); per micro-batch values above are exact.
    double flopsPerIteration = 0;
};

/// Evaluates the graph's costs for `config`. Returns false and sets `error` when an extent does not evaluate
/// (a non-integer or overflowing value; the message names the expression and the values), and then, when given,
/// `errorKeyPath` to the config key to change: for an overflow the one whose value contributes most (e.g.
/// "model.hidden" for Dmodel^2); "model" when no single key is to blame.
bool computeModelCost(const ModelGraph& graph, const Config& config, ModelCost& out, std::string& error,
    std::string* errorKeyPath = nullptr);

} // namespace stagecraft
