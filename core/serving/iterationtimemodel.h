// SPDX-License-Identifier: MIT
#pragma once

#include "estimate/costmodel.h"
#include "estimate/gpuspec.h"
#include "serving/iterationshape.h"
#include "synthesis/progress.h"

#include <cstdint>
#include <string>
#include <vector>

namespace stagecraft {

/// Measured iteration times of one replica's plan: the tables IterationTimeModel interpolates. Seconds. Plain
/// value type.
struct IterationTimeTables
{
    /// Decode: for each batch size of the grid, the step time at two contexts (a step's cache reads and attention
    /// are linear in its context, so the line through them is exact at every context).
    std::vector<int64_t> decodeBatches;
    std::vector<double> decodeAtLowS;
    std::vector<double> decodeAtHighS;
    int64_t contextLow = 0;
    int64_t contextHigh = 0;
    /// Prefill: the time to first token of `prefillSequences` prompts of each length of the grid.
    int64_t prefillSequences = 1;
    std::vector<int64_t> prefillLengths;
    std::vector<double> prefillS;
    std::vector<int64_t> prefillActivationPeakBytes; ///< each probe's largest transient peak over its ranks
    /// The intercept of the prefill times at 0 tokens (weights read once, kernel gaps, collective latencies):
    /// paid once by an iteration, whatever it mixes.
    double prefillFixedS = 0;
    /// The workload's own static batch, exact: `staticSequences` whole prompts of `staticPrompt` tokens at once take
    /// `staticPrefillS` (the synthesized programs' time to first token); 0 sequences when there is none.
    int64_t staticSequences = 0;
    int64_t staticPrompt = 0;
    double staticPrefillS = 0;
    /// One draft token's time as a fraction of a decode step (speculative decoding, MTP).
    double draftCost = 0;
    int64_t probes = 0; ///< syntheses run to fill the tables
};

/// The time of an iteration by its shape, interpolated in IterationTimeTables (see iterationS()). Immutable;
/// thread-safe.
class IterationTimeModel final : public IterationCost
{
public:
    explicit IterationTimeModel(IterationTimeTables tables);

    /// A decode step of `sequences` sequences attending over `contextTokens` positions in all: linear in the
    /// context between the two probed contexts (extrapolated beyond), linear in the batch between grid sizes
    /// (extrapolated from the last two above the grid; the smallest size's time below it).
    double decodeS(double sequences, double contextTokens) const;
    /// The prefill of the chunks alone: prefillFixedS + the sum over chunks of h(offset + tokens) - h(offset), h(n)
    /// the time per prompt of n tokens above the intercept (piecewise linear in the probed lengths); the static
    /// batch's exact time when the chunks are that batch.
    double prefillS(const std::vector<PrefillChunk>& chunks) const;
    /// prefillS(chunks) + decode + drafts - min(prefillFixedS, decode): one pass over all the iteration's tokens
    /// reads the weights once. A decode step with k drafts verifies k + 1 tokens per sequence: the step of (k + 1)
    /// times the sequences, minus the context part of the extra ones (each sequence's cache is read once), plus k
    /// draft steps of draftCost each.
    double iterationS(const IterationShape& shape) const override;

    const IterationTimeTables& tables() const
    {
        return m_tables;
    }

private:
    double perPromptS(double tokens) const; ///< h(n)
    IterationTimeTables m_tables;
};

/// Fills IterationTimeTables for one replica of `replica` (an inference config with dp 1) by synthesizing probes:
/// decode steps (probeDecodeStepTime()) at batch sizes `step`, 2 step, 4 step, ... up to
/// inference.max_sequences and the config's own batch, each at the contexts prompt + 1 and prompt + output - 1 of its
/// nominal lengths (prompt + 65 when output < 3); prefills of `step` prompts (step: inferenceBatchStep() of a prefill)
/// of 16, 32, ... tokens up to max(longestPrompt, max_batched_tokens); and the config's own batch's prefill. Returns
/// false and sets `error` when a probe fails. `progress` (may be null) is told each probe and may cancel.
bool buildIterationTimes(const Config& replica, int64_t longestPrompt, const GpuSpec& gpu,
    const EstimateOptions& options, IterationTimeTables& out, std::string& error, ProgressSink* progress = nullptr);

} // namespace stagecraft
