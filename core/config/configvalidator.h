// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/diagnostic.h"

#include <vector>

namespace stagecraft {

/// Semantic checks of a resolved config: positive sizes, divisibility of heads/ffn/sequence by the parallel
/// degrees, head-count consistency, family-specific fields, batch divisibility, schedule and ZeRO settings,
/// rank order, name. Reports every problem, not just the first. Each diagnostic carries severity, `keyPath`
/// (the dotted YAML key it is about, e.g. "parallelism.tp") and a message naming the values involved; `file` is
/// empty and line/column are 0 (the config loader re-anchors them at the key in the file). Warnings mark settings
/// that are legal but have no effect. Pure function; thread-safe.
std::vector<Diagnostic> validateConfig(const Config& config);

/// Largest world size (dp * tp * pp * cp) validateConfig accepts; keeps rank arithmetic far from overflow.
inline constexpr int64_t kMaxWorldSize = int64_t(1) << 24;

} // namespace stagecraft
