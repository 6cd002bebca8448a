// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "estimate/costmodel.h"
#include "estimate/gpuspec.h"
#include "synthesis/progress.h"

#include <cstdint>
#include <optional>
#include <string>

namespace stagecraft {

/// One scheduler iteration of a serving simulation, picked for export, and the configs whose programs stand for it.
/// Plain value type.
struct ServingIterationPick
{
    int64_t iteration = 0; ///< within the run of the first decode (or colocated) replica, from 0
    int64_t iterations = 0; ///< the replica's run has this many
    double startS = 0; ///< when it started in the simulation
    double durationS = 0; ///< what the simulation's iteration-time model gave it
    int64_t prefillChunks = 0; ///< requests computing prompt tokens in it
    int64_t prefillTokens = 0;
    int64_t decodeSequences = 0;
    double decodeContextTokens = 0; ///< the positions their attention reads, summed over them
    /// The iteration's prompt chunks as a prefill-only workload of one replica: `prefill->inference.batch` prompts
    /// of `inference.prompt_tokens` each (the chunks' count rounded up to the plan's batch step, each of the mean
    /// chunk length rounded up). Absent when the iteration computes no prompt tokens.
    std::optional<Config> prefill;
    /// The iteration's decoding sequences as a decode-only workload of one replica: `inference.batch` sequences (the
    /// count rounded up to the batch step) over a resident prompt of (mean context - window) positions, running
    /// `window` decode steps. Absent when nothing decodes in it.
    std::optional<Config> decode;
};

/// Picks the longest iteration (pickServingIteration()).
inline constexpr int64_t kLongestIteration = -1;

/// Simulates serving `config` (simulateServing()) and returns iteration `iteration` (kLongestIteration: the one the
/// simulation timed longest, the first of equals) of the first decode (or colocated) replica with the two workloads
/// that stand for it, for an export of its traces. A chunk at offset o computes its t tokens as a prompt of t tokens:
/// its attention over the o cached positions is left out (the iteration-time model counts it). `window` (>= 1) decode
/// steps of the same batch make the decode part a window of iterations. Returns false and sets `error` for a training
/// config, a failed simulation, an iteration past the run's end, or a window out of [1, 4096]. Thread-safe.
bool pickServingIteration(const Config& config, const GpuSpec& gpu, const EstimateOptions& options, int64_t iteration,
    int64_t window, ServingIterationPick& out, std::string& error, ProgressSink* progress = nullptr);

/// Reads the --serving-iteration argument: a decimal iteration number from 0, or `longest` (kLongestIteration).
/// False when it is neither.
bool parseServingIteration(const std::string& text, int64_t& iteration);

/// One line describing `pick` for a terminal (ends in a newline).
std::string servingIterationText(const ServingIterationPick& pick);

} // namespace stagecraft
