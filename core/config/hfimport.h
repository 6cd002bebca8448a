// SPDX-License-Identifier: MIT
#pragma once

#include "config/config.h"
#include "config/configloader.h"
#include "config/confignode.h"
#include "config/diagnostic.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stagecraft {

/// Largest Hugging Face config.json accepted, in bytes (published configs are 0.5 to 3 KB).
inline constexpr size_t kMaxHfConfigBytes = 64 * 1024;

/// The sequence length of an imported model when none is asked for: min(max_position_embeddings, this). 4096 is
/// what most of these models were pretrained at (Llama 2, Mistral, Mixtral, DeepSeek-V3, the Qwen3 base stage);
/// their longer windows come from later long-context stages.
inline constexpr int64_t kHfDefaultSeqLen = 4096;

/// training.global_batch of a config made by loadHfConfig(); every other training, parallelism and cluster key
/// keeps its config.h default (one GPU).
inline constexpr int64_t kHfImportGlobalBatch = 8;

struct HfImportOptions
{
    /// model.seq_len; 0 = min(max_position_embeddings, kHfDefaultSeqLen) (GPT-2: n_positions).
    int64_t seqLen = 0;
    SourceLocation seqLenLocation { kCommandLineFile, 0, 0 }; ///< where seqLen was given, for diagnostics
};

/// A Hugging Face config.json mapped onto our model keys.
struct HfImport
{
    std::optional<ModelConfig> model; ///< nullopt when `diagnostics` holds an error; `preset` is empty
    std::string architecture; ///< the `architectures` entry that was mapped, e.g. "LlamaForCausalLM"
    /// A Map of the model keys (YAML names, the loader's canonical order), each value located at the config.json
    /// field it was mapped from (a default at the `architectures` entry, seq_len at HfImportOptions::seqLenLocation
    /// when given). model.hf_config merges these like a preset's keys.
    ConfigNode modelKeys;
    /// Errors: malformed JSON, an unknown architecture, a missing or mistyped field, a value we cannot represent
    /// (attention or MLP biases in Llama, sliding-window attention shorter than seq_len, MoE layers that are not
    /// every layer, ...); all at the file, 1-based line and column of the field's value (its key for a key that
    /// must not be there; 1:1 for a missing field), keyPath = the JSON field name. Warnings: fields that are
    /// neither mapped nor known to be informational (they are ignored).
    std::vector<Diagnostic> diagnostics;
};

/// Maps config.json text. Supported `architectures`: hfArchitectures(). The text must be strict JSON (RFC 8259)
/// of at most kMaxHfConfigBytes, nested at most 64 levels. Never throws (except std::bad_alloc); reentrant.
HfImport importHfConfigText(
    std::string_view jsonText, const std::string& fileName, const HfImportOptions& options = {});

/// As importHfConfigText, from a file: only a regular file of at most kMaxHfConfigBytes is read (a directory or
/// FIFO is refused without blocking; such problems have line 0).
HfImport importHfConfigFile(const std::string& path, const HfImportOptions& options = {});

/// The `architectures` values importHfConfigText() maps, in the order of its documentation.
const std::vector<std::string_view>& hfArchitectures();

/// A whole config from a config.json: the YAML document {name, model.hf_config: path, model.seq_len (when
/// seqLen > 0), training.global_batch: kHfImportGlobalBatch} loaded with loadConfigText(), so the model is read
/// and validated exactly as model.hf_config in a config file; `name` and seq_len are reported as given on the
/// command line. Never throws; reentrant.
ConfigResult loadHfConfig(const std::string& path, const std::string& name, int64_t seqLen = 0);

/// The default workload name for a config.json at `path`: its folder's name when the file is called config.json
/// (a model download), else the file name without ".json" (and without a ".config" before it); characters other
/// than letters, digits, '.', '-' and '_' become '-'.
std::string hfDefaultName(const std::string& path);

} // namespace stagecraft
