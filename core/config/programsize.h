// SPDX-License-Identifier: MIT
// What a plan will cost to synthesize, known before anything is built, so that validation can refuse a plan whose
// programs would not fit in memory or time (a config that validates is always answered in seconds).
#pragma once

#include "config/config.h"

#include <cstdint>

namespace stagecraft {

/// Default limit on estimatedProgramNodes(): about 11 GB and a minute of synthesis at roughly 550 bytes per node.
/// It admits every shipped preset's own plan (llama3-405b on one GPU, 2,048 micro-batches, is the largest at about
/// 12 M) and refuses the plans that exhausted memory or never finished (2^31 layers, a million micro-batches).
inline constexpr int64_t kDefaultMaxProgramNodes = 20000000;

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

} // namespace stagecraft
