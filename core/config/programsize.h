// SPDX-License-Identifier: MIT
// What a plan will cost to synthesize, known before anything is built, so that validation can refuse a plan whose
// programs would not fit in memory or time (a config that validates is always answered in seconds).
#pragma once

#include "config/config.h"

#include <cstdint>
#include <string>

namespace stagecraft {

/// Default limit on estimatedProgramNodes(): `report` on a plan this size peaks under 200 MB and takes about two
/// seconds (tests/bench/run measures both). It admits every shipped preset's own plan (deepseek-v3, 61 layers x
/// 120 micro-batches on 16 stages, is the largest at about 0.98 M) and refuses the plans that exhausted memory or
/// never finished (2^31 layers, a million micro-batches); --max-nodes raises it.
inline constexpr int64_t kDefaultMaxProgramNodes = 1000000;

/// An upper estimate of the nodes synthesis creates: the model graph's ops (about 45 per decoder layer) plus the
/// nodes of every stage's program. A stage runs each of its m micro-batches through its layers: per layer and
/// micro-batch about 47 nodes (forward and backward ops of a Llama/GPT/MoE layer), plus 11 with tensor
/// parallelism (its collectives), 8 with context parallelism, 30 with full and 8 with selective recompute, 4 with
/// ZeRO-3 gathers, 10 for an MoE layer's router, dispatch and combine; plus 30 per stage and micro-batch
/// (embedding, head, loss, sends, receives) and 20 per layer per iteration (reductions, optimizer). Fitted as an
/// upper bound over the presets and their parallel variants (tests/core/tst_distribution). The layers count once
/// over all stages, so an uneven split (first/last stage layers, account_for_*) leaves the estimate as it is.
/// Saturates at INT64_MAX.
int64_t estimatedProgramNodes(const Config& config);

/// The same estimate for the program of one stage that holds `stageLayers` layers (the last stage may also hold
/// the prediction modules, so every stage is given room for them). Synthesis reserves this much.
int64_t estimatedStageNodes(const Config& config, int64_t stageLayers);

/// The micro-batches per rank a compressed synthesis (SynthesisOptions::compressMicroBatches) keeps for `config`,
/// and in `period` the micro-batches after which its steady state repeats; 0 when the plan is synthesized in
/// full: GPipe (whose memory grows with the micro-batches), or too few micro-batches to gain (m <= 2 kept + period,
/// since a probe one period longer is built too). 1F1B keeps pp + 1 (every stage's warm-up of up to pp - 1
/// forwards, at least two steady micro-batches, the cool-down) with period 1; interleaved keeps 3*pp (whole groups of
/// pp micro-batches, Megatron-LM's unit, beyond its warm-up of up to 2*pp - 2 + (v - 1)*pp passes) with period pp.
/// Both leave m - kept a multiple of the period. tests/core/tst_compression checks on plans with pp up to 16, uneven
/// stages among them, that the extended figures equal a full synthesis (pp alone is not enough for interleaved).
int64_t compressedMicroBatches(const Config& config, int64_t* period = nullptr);

/// The estimated nodes a synthesis of `config` builds: estimatedProgramNodes(), or with `compressed` and a plan
/// that compresses, that of the kept programs plus the probe's (whatever the iteration's micro-batch count).
int64_t builtProgramNodes(const Config& config, bool compressed);

/// Decoder layers (and MTP modules) of the pipeline stage that holds the most: from the pipeline layout when one is
/// given (a DualPipe stage holds two chunks), else from the even split or the first/last-stage and account-for
/// keys. Never more than the model's layers and MTP modules; 0 for a model without layers.
int64_t largestStageLayers(const Config& config);

/// The nodes a synthesis of `config` materializes for its largest stage, the unit the program-size limit bounds
/// (stages are built, summarized and measured one by one): estimatedStageNodes() of that stage with every
/// micro-batch, or with `compressed` and a plan that compresses, of its kept programs plus the probe's.
int64_t builtStageNodes(const Config& config, bool compressed);

/// What the program-size message advises for raising the limit, set once at start-up by a front end that has a
/// way to raise it (the command line: "raise the limit with --max-nodes"); empty (the default): no advice.
void setProgramLimitAdvice(std::string advice);
std::string programLimitAdvice();

/// `value` with a comma between thousands ("1,000,000"), as messages print counts.
std::string groupedCount(int64_t value);

/// Process-wide, settable once at start-up: whether validation (validateConfig(), hence the loaders) limits
/// builtProgramNodes(config, true), the nodes a compressed synthesis builds, instead of the whole plan's. The
/// GUI sets it, since its views synthesize compressed; synthesize() without compression still refuses a plan
/// whose every node exceeds the limit (export, `synth`), whatever this says. Default false.
void setValidateCompressedProgramSize(bool compressed);
bool validateCompressedProgramSize();

} // namespace stagecraft
