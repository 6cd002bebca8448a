// SPDX-License-Identifier: MIT
#pragma once

#include "serving/iterationshape.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

/// How one replica schedules (vLLM's V1 scheduler, see simulateReplica()). Plain value type.
struct SchedulerSettings
{
    int64_t maxBatchedTokens = 8192; ///< tokens computed per iteration at most
    int64_t maxSequences = 256; ///< running requests at most
    bool chunkedPrefill = true; ///< false: a prompt is admitted only when the budget holds the rest of it whole
    int64_t blockSize = 16; ///< KV-cache block, tokens
    int64_t kvBlocks = 0; ///< blocks the replica's cache holds (per rank: every rank holds its share of each block)
    bool preemptBySwap = false; ///< false: recompute a preempted request from its tokens; true: swap its blocks out
    double swapSPerBlock = 0; ///< seconds to move one block to or from host memory (swap)
    int64_t speculativeTokens = 0; ///< draft tokens per decode step
    double acceptanceRate = 0; ///< of each draft token
    /// A prefill replica of a disaggregated deployment: a request is done when its first token is sampled (its
    /// cache then leaves for a decode replica).
    bool prefillOnly = false;
};

/// One request as a replica receives it. A decode replica's requests arrive with their prompt's cache computed
/// and the first token sampled (`computedTokens` = prompt, `generatedTokens` = 1, `firstTokenS` given).
struct ReplicaRequest
{
    int64_t id = 0; ///< index in the workload
    double readyS = 0; ///< when the replica can start it
    int64_t promptTokens = 0;
    int64_t outputTokens = 0;
    int64_t computedTokens = 0;
    int64_t generatedTokens = 0;
    double firstTokenS = -1;
};

/// What became of one request on a replica. Plain value type.
struct RequestOutcome
{
    int64_t id = 0;
    double readyS = 0;
    double firstTokenS = -1; ///< when its first token was sampled
    double finishS = -1; ///< when its last token was sampled; -1 when it was rejected
    int32_t preemptions = 0;
    int64_t generatedTokens = 0; ///< tokens sampled (outputTokens when finished)
    bool rejected = false; ///< its cache can never fit the replica's blocks (prompt + output too long)
};

/// The replica's state after one iteration. Plain value type.
struct ServingSample
{
    double startS = 0; ///< when the iteration started
    double durationS = 0;
    int32_t running = 0; ///< requests holding cache (scheduled or not) after scheduling
    int32_t waiting = 0; ///< arrived requests not running (queued or preempted)
    int64_t kvBlocksUsed = 0;
    int64_t preemptions = 0; ///< since the start
    int64_t prefillTokens = 0; ///< prompt tokens computed in the iteration
    int64_t decodeSequences = 0;
    int32_t prefillChunks = 0; ///< requests whose prompt (or a chunk of it) was computed
    double decodeContextTokens = 0; ///< IterationShape::decodeContextTokens of the iteration
};

/// One replica's run. Plain value type.
struct ReplicaRun
{
    std::vector<RequestOutcome> outcomes; ///< in the order of the input
    std::vector<ServingSample> samples; ///< one per iteration
    int64_t preemptions = 0;
    int64_t peakKvBlocks = 0;
    int64_t iterations = 0;
    bool cancelled = false;
};

/// Simulates one replica serving `requests` (sorted by readyS) with continuous batching, as vLLM's V1 scheduler does
/// it (vllm-project/vllm: vllm/v1/core/sched/scheduler.py, Scheduler.schedule(), at commit b4622cf9):
/// each iteration first gives every running request, in admission order, the tokens it still needs (its prompt
/// rest, or one token per decode step plus the drafts), capped by the token budget; a request whose new blocks do
/// not fit preempts the most recently admitted running request (running.pop()), repeatedly, itself last; a
/// preempted request frees its blocks and returns to the front of the waiting queue, to recompute its prompt and the
/// tokens it generated (V1's only mode; `swap` keeps them in host memory at swapSPerBlock per block each way). Only
/// when nothing was preempted are waiting requests admitted, first come first served, while the budget, the
/// sequence limit and the free blocks allow (a prompt chunked to the remaining budget with chunked prefill). A
/// request samples a token when all its known tokens are computed; with drafts a decode step yields
/// (1 - a^(k+1)) / (1 - a) tokens on average (Leviathan et al. 2023, eq. 1), accumulated as a fraction.
/// The iteration takes `cost.iterationS()` (plus any swap transfers). A request whose cache cannot fit even an empty
/// replica is rejected. `cancelled`, when it returns true (checked every 4096 iterations), stops the run. Pure.
ReplicaRun simulateReplica(const std::vector<ReplicaRequest>& requests, const SchedulerSettings& settings,
    const IterationCost& cost, bool (*cancelled)(void*) = nullptr, void* context = nullptr);

} // namespace stagecraft
