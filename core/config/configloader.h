// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/diagnostic.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// Largest value of an integer key. Far above any real model or cluster, and it keeps products of a few sizes
/// inside int64.
inline constexpr int64_t kMaxConfigInteger = std::numeric_limits<int32_t>::max();

/// The values a decimal key of `cluster` takes: above 0 (or from 0 with `zeroAllowed`) and at most `maximum`.
struct DecimalRange
{
    bool zeroAllowed = false;
    double maximum = std::numeric_limits<double>::max();
};

/// The range the loader checks for the decimal key `keyPath` of `cluster` ("cluster.gemm_efficiency"), for editors
/// that must accept exactly what a file may hold; nullopt for any other key.
std::optional<DecimalRange> clusterDecimalRange(std::string_view keyPath);

/// Outcome of loading a config: the config when it has no errors (warnings allowed), and every problem found.
struct ConfigResult
{
    std::optional<Config> config; ///< nullopt when `diagnostics` holds an error
    std::vector<Diagnostic> diagnostics; ///< all problems at once, in the order found (syntax, keys, semantics)
};

/// Loads a YAML config file (DESIGN.md section 2). Only a regular file of at most kMaxConfigBytes is read (a FIFO,
/// device or directory is refused without blocking). `overrides` are `--set` assignments "dotted.key=value"
/// (e.g. "training.recompute=full", "parallelism.rank_order=[dp,tp,cp,ep,pp]"); they are applied onto the YAML
/// tree before it is read, so they are checked exactly like the file. `model.preset: NAME` takes the model keys of
/// preset NAME, and keys given in the file override them. Sections may be omitted (defaults of config.h), but the
/// model (preset or family, layers, hidden, ffn_hidden, heads, kv_heads (except gpt: defaults to heads), vocab,
/// seq_len; experts and top_k for moe) and training.global_batch are required.
/// Every diagnostic names the file, the 1-based line and column of the offending value (of the key for unknown
/// keys), the dotted key path and the reason; values from `overrides` are reported with file "<command line>" and
/// line 0; semantic problems (validateConfig) are anchored at the key they concern, or at its section, or at
/// `model.preset` when the value came from the preset. Never throws; reentrant.
ConfigResult loadConfigFile(const std::string& path, const std::vector<std::string>& overrides = {});

/// As loadConfigFile, from text; `fileName` is only used in diagnostics.
ConfigResult loadConfigText(
    std::string_view yamlText, const std::string& fileName, const std::vector<std::string>& overrides = {});

/// Loads `pathOrPresetName` as a file when such a file exists, else the built-in preset of that name (reported as
/// file "<preset NAME>", and `name` defaults to the preset name); else one error that lists the presets.
ConfigResult loadConfigOrPreset(const std::string& pathOrPresetName, const std::vector<std::string>& overrides = {});

/// The file name used in diagnostics about a built-in preset: "<preset NAME>".
std::string presetFileName(std::string_view presetName);

} // namespace stagecraft
