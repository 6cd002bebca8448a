// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/diagnostic.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stagecraft {

/// Semantic checks of a resolved config: positive sizes, divisibility of heads/ffn/sequence by the parallel
/// degrees, head-count consistency, family-specific fields, batch divisibility, schedule and ZeRO settings,
/// rank order, name. Reports every problem, not just the first. Each diagnostic carries severity, `keyPath`
/// (the dotted YAML key it is about, e.g. "parallelism.tp") and a message naming the values involved; `file` is
/// empty and line/column are 0 (the config loader re-anchors them at the key in the file). Warnings mark settings
/// that are legal but have no effect. Pure function; thread-safe.
std::vector<Diagnostic> validateConfig(const Config& config);

/// The step of the serving batches validateConfig() accepts for `config`'s plan: inference.batch must be a multiple
/// of it. dp * pp (each data-parallel replica splits its sequences into pp pipeline micro-batches) and, for an MoE
/// model with decode steps, pp * lcm(dp, experts * dp / gcd(top_k, experts * dp)) (a decode step's routed tokens,
/// (batch / pp) * top_k, spread evenly over the experts of every data-parallel rank). 0 when a degree is not
/// positive or the product overflows. Pure function.
int64_t inferenceBatchStep(const Config& config);

/// Longest config name, in bytes. Output files are named NAME.RANK.et or NAME.RANK.json (core/export), written
/// through a temporary .NAME.RANK.json.tmp-PID-N (core/chakra/chakrawriter.cpp), and a file name has at most
/// 255 bytes (NAME_MAX on Linux file systems). The longest suffix: "." + ".16777215" (the last rank of
/// kMaxWorldSize, 8 digits) + ".json" + ".tmp-" + 7 digits of a PID (pid_max <= 2^22) + "-" + 10 digits of a
/// 32-bit counter = 1 + 9 + 5 + 5 + 7 + 1 + 10 = 38 bytes.
inline constexpr size_t kMaxNameBytes = 255 - 38;

/// Largest world size (dp * tp * pp * cp) validateConfig accepts; keeps rank arithmetic far from overflow.
inline constexpr int64_t kMaxWorldSize = int64_t(1) << 24;

} // namespace stagecraft
