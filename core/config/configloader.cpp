// SPDX-License-Identifier: MIT
#include "config/configloader.h"

#include "config/boundedfile.h"
#include "config/clusterpresets.h"
#include "config/configlocations.h"
#include "config/confignode.h"
#include "config/configvalidator.h"
#include "config/hfimport.h"
#include "config/presets.h"
#include "config/suggestion.h"
#include "config/topologypresets.h"
#include "output/messagetext.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <limits>
#include <utility>

namespace stagecraft {

namespace {

    using Entry = ConfigNode::Entry;
    using Kind = ConfigNode::Kind;

    constexpr int64_t kMaxInteger = kMaxConfigInteger;
    /// Largest gradient bucket (1 TiB), so that the size in bytes fits int64 comfortably.
    constexpr double kMaxBucketMiB = double(1 << 20);
    /// Largest MoE capacity or imbalance factor (a factor above the expert count cannot matter).
    constexpr double kMaxFactor = 1e6;
    /// Preset chains (a preset whose model names another preset) longer than this are reported as a cycle.
    constexpr size_t kMaxPresetDepth = 8;

    const std::vector<std::string_view> kTopKeys { "name", "workload", "model", "training", "inference", "parallelism",
        "cluster" };
    const std::vector<std::string_view> kModelKeys { "preset", "hf_config", "family", "layers", "hidden", "ffn_hidden",
        "heads", "kv_heads", "vocab", "seq_len", "experts", "top_k", "expert_ffn_hidden", "shared_expert_ffn_hidden",
        "causal_mask", "tied_embeddings", "rope_theta", "attention", "head_dim", "qk_norm", "qkv_bias", "q_lora_rank",
        "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "first_dense_layers", "mtp_modules",
        "moe_capacity_factor", "moe_routing_imbalance" };
    const std::vector<std::string_view> kTrainingKeys { "global_batch", "micro_batch", "precision", "optimizer",
        "recompute", "recompute_modules", "main_grad_dtype", "grad_reduce_dtype", "gradient_accumulation_fusion" };
    const std::vector<std::string_view> kParallelismKeys { "dp", "tp", "pp", "cp", "ep", "sequence_parallel", "zero",
        "schedule", "virtual_stages", "rank_order", "gradient_bucket_mb", "expert_tp", "first_stage_layers",
        "last_stage_layers", "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
        "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap", "overlap_p2p_comm", "pipeline_layout",
        "microbatch_group_size", "overlap_moe_expert_parallel_comm", "reduce_gradients_per_microbatch" };
    const std::vector<std::string_view> kInferenceKeys { "batch", "prompt_tokens", "output_tokens", "phases",
        "decode_steps", "kv_cache_dtype", "block_size", "arrival", "request_rate", "arrival_cv", "requests",
        "length_distribution", "length_cv", "trace", "seed", "max_batched_tokens", "max_sequences", "chunked_prefill",
        "preemption", "kv_memory_fraction", "prefill_replicas", "prefill_tp", "prefill_pp", "speculative_tokens",
        "acceptance_rate", "draft_cost", "weight_dtype", "slo_ttft_ms", "slo_tpot_ms" };
    const std::vector<std::string_view> kClusterKeys { "preset", "gpu", "gpus_per_node", "intra_node_bandwidth_gbps",
        "inter_node_bandwidth_gbps", "intra_node_efficiency", "inter_node_efficiency", "intra_node_latency_us",
        "inter_node_latency_us", "kernel_launch_us", "gemm_efficiency", "attention_efficiency", "hbm_efficiency",
        "kernel_table", "topology", "nvlink_domain", "nvlink_bandwidth_gbps", "nvls_efficiency", "nics_per_node",
        "nic_bandwidth_gbps", "nic_efficiency", "rails", "leaf_radix", "leaf_oversubscription", "spine_radix",
        "spine_oversubscription", "planes" };

    /// Names other tools use for our keys (Hugging Face config.json, Megatron-LM flags): suggested for unknown keys.
    const std::vector<std::pair<std::string_view, std::string_view>> kAliases {
        { "num_layers", "layers" },
        { "num_hidden_layers", "layers" },
        { "hidden_size", "hidden" },
        { "intermediate_size", "ffn_hidden" },
        { "ffn_hidden_size", "ffn_hidden" },
        { "num_attention_heads", "heads" },
        { "num_heads", "heads" },
        { "num_key_value_heads", "kv_heads" },
        { "num_kv_heads", "kv_heads" },
        { "num_query_groups", "kv_heads" },
        { "vocab_size", "vocab" },
        { "seq_length", "seq_len" },
        { "max_position_embeddings", "seq_len" },
        { "num_experts", "experts" },
        { "num_local_experts", "experts" },
        { "num_experts_per_tok", "top_k" },
        { "moe_router_topk", "top_k" },
        { "moe_ffn_hidden_size", "expert_ffn_hidden" },
        { "global_batch_size", "global_batch" },
        { "micro_batch_size", "micro_batch" },
        { "tensor_model_parallel_size", "tp" },
        { "tensor_parallel", "tp" },
        { "pipeline_model_parallel_size", "pp" },
        { "pipeline_parallel", "pp" },
        { "data_parallel", "dp" },
        { "context_parallel_size", "cp" },
        { "context_parallel", "cp" },
        { "expert_model_parallel_size", "ep" },
        { "expert_parallel", "ep" },
        { "zero_stage", "zero" },
        { "virtual_pipeline_model_parallel_size", "virtual_stages" },
        { "expert_tensor_parallel_size", "expert_tp" },
        { "decoder_first_pipeline_num_layers", "first_stage_layers" },
        { "decoder_last_pipeline_num_layers", "last_stage_layers" },
        { "first_k_dense_replace", "first_dense_layers" },
        { "num_nextn_predict_layers", "mtp_modules" },
        { "mtp_num_layers", "mtp_modules" },
        { "kv_channels", "head_dim" },
        { "qk_layernorm", "qk_norm" },
        { "moe_intermediate_size", "expert_ffn_hidden" },
    };

    template <typename Enum> struct EnumName
    {
        std::string_view text;
        Enum value;
    };

    const std::vector<EnumName<Family>> kFamilies { { "gpt", Family::Gpt }, { "llama", Family::Llama },
        { "moe", Family::Moe } };
    const std::vector<EnumName<Precision>> kPrecisions { { "fp32", Precision::Fp32 }, { "fp16", Precision::Fp16 },
        { "bf16", Precision::Bf16 }, { "fp8", Precision::Fp8 } };
    const std::vector<EnumName<AttentionKernel>> kAttentionKernels { { "flash", AttentionKernel::Flash },
        { "eager", AttentionKernel::Eager } };
    const std::vector<EnumName<Recompute>> kRecomputes { { "none", Recompute::None },
        { "selective", Recompute::Selective }, { "full", Recompute::Full } };
    const std::vector<EnumName<uint8_t>> kRecomputeModules = [] {
        std::vector<EnumName<uint8_t>> names;
        for (const RecomputeModuleName& m : recomputeModuleTable())
            names.push_back({ m.name, m.bit });
        return names;
    }();
    const std::vector<EnumName<Schedule>> kSchedules { { "gpipe", Schedule::GPipe }, { "1f1b", Schedule::OneFOneB },
        { "interleaved", Schedule::Interleaved }, { "zb1p", Schedule::ZeroBubbleH1 },
        { "dualpipe", Schedule::DualPipe }, { "dualpipev", Schedule::DualPipeV } };
    const std::vector<EnumName<Workload>> kWorkloads { { "training", Workload::Training },
        { "inference", Workload::Inference } };
    const std::vector<EnumName<InferencePhases>> kPhases { { "prefill", InferencePhases::Prefill },
        { "decode", InferencePhases::Decode }, { "both", InferencePhases::Both } };
    const std::vector<EnumName<KvCacheDtype>> kKvCacheDtypes { { "bf16", KvCacheDtype::Bf16 },
        { "fp8", KvCacheDtype::Fp8 } };
    const std::vector<EnumName<RequestArrival>> kArrivals { { "batch", RequestArrival::Batch },
        { "poisson", RequestArrival::Poisson }, { "gamma", RequestArrival::Gamma },
        { "trace", RequestArrival::Trace } };
    const std::vector<EnumName<LengthDistribution>> kLengthDistributions { { "fixed", LengthDistribution::Fixed },
        { "uniform", LengthDistribution::Uniform }, { "lognormal", LengthDistribution::Lognormal } };
    const std::vector<EnumName<bool>> kPreemptions { { "recompute", false }, { "swap", true } };
    const std::vector<EnumName<bool>> kWeightDtypes { { "bf16", false }, { "fp8", true } };
    const std::vector<EnumName<MeshAxis>> kAxes { { "dp", MeshAxis::Dp }, { "tp", MeshAxis::Tp },
        { "cp", MeshAxis::Cp }, { "ep", MeshAxis::Ep }, { "pp", MeshAxis::Pp } };

    std::string joined(const std::vector<std::string_view>& words, std::string_view separator = ", ")
    {
        std::string out;
        for (std::string_view word : words) {
            if (!out.empty())
                out += separator;
            out += word;
        }
        return out;
    }

    std::string joinedNames(const std::vector<std::string>& words)
    {
        return joined(std::vector<std::string_view>(words.begin(), words.end()));
    }

    /// Decimal number syntax: [+-] digits [. digits] [e [+-] digits] (also ".5" and "5."). No inf/nan/hex.
    bool isDecimalNumber(std::string_view s, bool integerOnly)
    {
        size_t i = 0;
        auto digits = [&] {
            const size_t start = i;
            while (i < s.size() && s[i] >= '0' && s[i] <= '9')
                ++i;
            return i - start;
        };
        if (i < s.size() && (s[i] == '+' || s[i] == '-'))
            ++i;
        size_t mantissa = digits();
        if (integerOnly)
            return mantissa > 0 && i == s.size();
        if (i < s.size() && s[i] == '.') {
            ++i;
            mantissa += digits();
        }
        if (mantissa == 0)
            return false;
        if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
            ++i;
            if (i < s.size() && (s[i] == '+' || s[i] == '-'))
                ++i;
            if (digits() == 0)
                return false;
        }
        return i == s.size();
    }

    /// How a value is shown after "found": numbers bare, other scalars quoted, collections by kind.
    std::string describe(const ConfigNode& node)
    {
        switch (node.kind) {
        case Kind::Null:
            return "nothing (empty value)";
        case Kind::Scalar:
            // At most a short, escaped excerpt of the user's text (output/messagetext.h).
            if (isDecimalNumber(node.scalar, false) && node.scalar.size() <= kMessageExcerptChars)
                return node.scalar;
            {
                const std::string quoted = quotedText(node.scalar); // `"` and `\` escaped, then cut and escaped
                return "\"" + messageExcerpt(std::string_view(quoted).substr(1, quoted.size() - 2)) + "\"";
            }
        case Kind::Sequence:
            return "a list";
        case Kind::Map:
            return "a mapping";
        }
        return "?";
    }

    std::string lowercase(std::string_view text)
    {
        std::string out(text);
        for (char& c : out)
            c = char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        return out;
    }

    /// Reads one YAML tree into a Config, collecting diagnostics.
    class ConfigReader
    {
    public:
        ConfigReader(std::string fileName, std::vector<Diagnostic>& diagnostics)
            : m_fileName(std::move(fileName))
            , m_diagnostics(diagnostics)
        {
        }

        /// Merges the model keys mapped from the Hugging Face config.json named by `model.hf_config` (relative to the
        /// folder of the config file) into the model section, like a preset's: keys given in the file win. The keys
        /// keep the positions of the config.json fields they came from, so problems with them point into it.
        void resolveModelHfConfig(ConfigNode& root)
        {
            Entry* model = root.kind == Kind::Map ? root.findEntry("model") : nullptr;
            if (!model || model->value.kind != Kind::Map)
                return;
            Entry* hfEntry = model->value.findEntry("hf_config");
            if (!hfEntry)
                return;
            const ConfigNode& value = hfEntry->value;
            const std::string keyPath = "model.hf_config";
            if (value.kind != Kind::Scalar || value.scalar.empty()) {
                error(value.location, keyPath,
                    "expected the path of a Hugging Face config.json, found " + describe(value));
                m_unresolvedPreset = true;
                return;
            }
            if (const Entry* preset = model->value.findEntry("preset")) {
                error(preset->keyLocation, "model.preset",
                    "give model.preset or model.hf_config, not both (both supply the model keys)");
                m_unresolvedPreset = true;
                return;
            }
            std::filesystem::path path(value.scalar);
            const std::string& base = value.location.file;
            if (path.is_relative() && !base.empty() && base.front() != '<')
                path = (std::filesystem::path(base).parent_path() / path).lexically_normal();
            HfImportOptions options;
            if (const Entry* seqLen = model->value.findEntry("seq_len");
                seqLen && seqLen->value.kind == Kind::Scalar && isDecimalNumber(seqLen->value.scalar, true)) {
                int64_t parsed = 0;
                const std::string& digits = seqLen->value.scalar;
                const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), parsed);
                if (result.ec == std::errc() && parsed > 0) {
                    options.seqLen = parsed;
                    options.seqLenLocation = seqLen->value.location;
                }
            }
            HfImport imported = importHfConfigFile(path.string(), options);
            for (Diagnostic& d : imported.diagnostics) {
                if (d.severity == Severity::Error)
                    m_errorPaths.push_back(keyPath);
                m_diagnostics.push_back(std::move(d));
            }
            if (!imported.model) {
                m_unresolvedPreset = true;
                return;
            }
            for (Entry& entry : imported.modelKeys.entries) {
                if (!model->value.findEntry(entry.key))
                    model->value.entries.push_back(std::move(entry));
            }
        }

        /// Merges the model keys of `model.preset` (recursively) into the model section. Keys taken from a preset are
        /// located at the `model.preset` value, so problems with them point there.
        void resolveModelPreset(ConfigNode& root, std::vector<std::string> chain = {})
        {
            Entry* model = root.kind == Kind::Map ? root.findEntry("model") : nullptr;
            if (!model || model->value.kind != Kind::Map)
                return;
            Entry* presetEntry = model->value.findEntry("preset");
            if (!presetEntry)
                return;
            const ConfigNode& value = presetEntry->value;
            const std::string keyPath = "model.preset";
            if (value.kind != Kind::Scalar) {
                error(value.location, keyPath,
                    "expected a preset name (one of " + joinedNames(presetNames()) + "), found " + describe(value));
                m_unresolvedPreset = true;
                return;
            }
            const std::optional<std::string_view> text = presetText(value.scalar);
            if (!text) {
                const std::vector<std::string> names = presetNames();
                error(value.location, keyPath,
                    "unknown preset " + quotedText(value.scalar) + " (presets: " + joinedNames(names) + ")"
                        + didYouMean(value.scalar, std::vector<std::string_view>(names.begin(), names.end())));
                m_unresolvedPreset = true;
                return;
            }
            if (std::find(chain.begin(), chain.end(), value.scalar) != chain.end() || chain.size() >= kMaxPresetDepth) {
                std::string path;
                for (const std::string& name : chain)
                    path += name + " -> ";
                error(value.location, keyPath,
                    "presets refer to each other in a cycle or too deeply: " + path + value.scalar);
                m_unresolvedPreset = true;
                return;
            }
            std::optional<ConfigNode> preset = parseConfigYaml(*text, presetFileName(value.scalar), m_diagnostics);
            if (!preset) {
                m_unresolvedPreset = true;
                return;
            }
            chain.push_back(value.scalar);
            resolveModelPreset(*preset, chain);
            const Entry* presetModel = preset->kind == Kind::Map ? preset->findEntry("model") : nullptr;
            if (!presetModel || presetModel->value.kind != Kind::Map)
                return;
            const SourceLocation anchor = value.location;
            for (const Entry& entry : presetModel->value.entries) {
                if (entry.key == "preset" || model->value.findEntry(entry.key))
                    continue;
                Entry copy = entry;
                copy.keyLocation = anchor;
                copy.value.relocate(anchor);
                model->value.entries.push_back(std::move(copy));
            }
        }

        Config read(const ConfigNode& root, const std::string& defaultName)
        {
            Config config;
            if (root.kind != Kind::Null && root.kind != Kind::Map) {
                error(root.location, {},
                    "expected a mapping with the sections model, training, parallelism, cluster at the top level, "
                    "found "
                        // A file without a single `key: value` line is no config: nothing of it is quoted.
                        + (root.kind == Kind::Scalar ? std::string("text without any 'key: value' line")
                                                     : describe(root)));
                return config;
            }
            // A mapping without a single key of ours is no config at all (a password file's "user:...:" lines
            // read as YAML keys): it is described, and nothing of it is quoted.
            if (root.kind == Kind::Map && !root.entries.empty()
                && std::none_of(root.entries.begin(), root.entries.end(), [](const Entry& e) {
                       return std::find(kTopKeys.begin(), kTopKeys.end(), e.key) != kTopKeys.end();
                   })) {
                error(root.location, {},
                    "not a Stagecraft config: none of its " + std::to_string(root.entries.size())
                        + " top-level keys is one of " + joined(kTopKeys));
                return config;
            }
            const auto top = section(root, {}, kTopKeys);
            const Entry* modelSection = top.get("model");
            std::string modelPreset;
            if (modelSection && modelSection->value.kind == Kind::Map) {
                if (const Entry* preset = modelSection->value.findEntry("preset");
                    preset && preset->value.kind == Kind::Scalar)
                    modelPreset = preset->value.scalar;
            }

            config.name = !defaultName.empty() ? defaultName : !modelPreset.empty() ? modelPreset : config.name;
            readString(top.get("name"), "name", config.name);
            readEnum(top.get("workload"), "workload", kWorkloads, config.workload);

            if (modelSection)
                readModel(*modelSection, config.model);
            else
                error(documentStart(root), "model",
                    "missing required section 'model' (give model.preset: NAME or the model keys)");
            readTraining(top.get("training"), documentStart(root), isInference(config), config.training);
            readInference(top.get("inference"), config.inference);
            readParallelism(top.get("parallelism"), config.parallelism);
            readCluster(top.get("cluster"), config.cluster);
            return config;
        }

        /// Whether a validator diagnostic about `keyPath` repeats a problem already reported while reading.
        bool alreadyReported(const std::string& keyPath) const
        {
            for (const std::string& path : m_errorPaths) {
                if (path.empty() || keyPath == path
                    || (keyPath.size() > path.size() && keyPath.compare(0, path.size(), path) == 0
                        && keyPath[path.size()] == '.'))
                    return true;
            }
            return false;
        }

    private:
        /// The keys of one section, first occurrence of each.
        struct Section
        {
            std::vector<const Entry*> entries;
            const Entry* get(std::string_view key) const
            {
                for (const Entry* entry : entries) {
                    if (entry->key == key)
                        return entry;
                }
                return nullptr;
            }
        };

        static std::string join(const std::string& path, std::string_view key)
        {
            return path.empty() ? std::string(key) : path + "." + std::string(key);
        }

        SourceLocation documentStart(const ConfigNode& root) const
        {
            return root.location.line > 0 ? root.location : SourceLocation { m_fileName, 1, 1 };
        }

        void error(const SourceLocation& where, const std::string& keyPath, std::string message)
        {
            m_diagnostics.push_back(
                { Severity::Error, where.file, where.line, where.column, keyPath, std::move(message) });
            m_errorPaths.push_back(keyPath);
        }

        /// Checks that `node` is a mapping (or empty) of known keys without duplicates.
        Section section(const ConfigNode& node, const std::string& path, const std::vector<std::string_view>& allowed)
        {
            Section out;
            if (node.kind == Kind::Null)
                return out;
            if (node.kind != Kind::Map) {
                error(node.location, path,
                    "expected a section (a mapping of " + joined(allowed) + "), found " + describe(node));
                return out;
            }
            for (const Entry& entry : node.entries) {
                const bool known = std::find(allowed.begin(), allowed.end(), entry.key) != allowed.end();
                // An unknown key is the user's text: shown as a short excerpt (output/messagetext.h).
                const std::string keyPath = join(path, known ? entry.key : messageExcerpt(entry.key, 40));
                if (!known) {
                    std::string hint;
                    for (const auto& [alias, key] : kAliases) {
                        if (alias == lowercase(entry.key)
                            && std::find(allowed.begin(), allowed.end(), key) != allowed.end())
                            hint = "; did you mean '" + std::string(key) + "'?";
                    }
                    if (hint.empty())
                        hint = didYouMean(entry.key, allowed);
                    if (hint.empty())
                        hint = "; expected one of " + joined(allowed);
                    error(entry.keyLocation, keyPath,
                        "unknown key '" + messageExcerpt(entry.key, 40) + "'"
                            + (path.empty() ? std::string(" at the top level") : " in " + path) + hint);
                    continue;
                }
                if (const Entry* first = out.get(entry.key)) {
                    error(entry.keyLocation, keyPath,
                        "duplicate key '" + entry.key + "'"
                            + (first->keyLocation.line > 0
                                    ? " (first given at line " + std::to_string(first->keyLocation.line) + ")"
                                    : std::string()));
                    continue;
                }
                out.entries.push_back(&entry);
            }
            return out;
        }

        bool readInteger(const Entry* entry, const std::string& keyPath, int64_t minimum, int64_t& out)
        {
            if (!entry)
                return false;
            const ConfigNode& value = entry->value;
            const std::string expected = minimum == 1 ? "a positive integer"
                : minimum == 0                        ? "a non-negative integer"
                                                      : "an integer >= " + std::to_string(minimum);
            int64_t parsed = 0;
            bool ok = value.kind == Kind::Scalar && isDecimalNumber(value.scalar, true);
            if (ok) {
                std::string_view digits = value.scalar;
                if (digits.front() == '+')
                    digits.remove_prefix(1);
                const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), parsed);
                if (result.ec != std::errc() || parsed > kMaxInteger) {
                    error(value.location, keyPath,
                        "expected " + expected + " no larger than " + std::to_string(kMaxInteger) + ", found "
                            + describe(value));
                    return false;
                }
                ok = parsed >= minimum;
            }
            if (!ok) {
                error(value.location, keyPath, "expected " + expected + ", found " + describe(value));
                return false;
            }
            out = parsed;
            return true;
        }

        bool readNumber(const Entry* entry, const std::string& keyPath, bool zeroAllowed, double maximum,
            const std::string& unit, double& out)
        {
            if (!entry)
                return false;
            const ConfigNode& value = entry->value;
            const std::string expected =
                std::string(zeroAllowed ? "a non-negative number" : "a positive number") + unit;
            double parsed = 0;
            bool ok = value.kind == Kind::Scalar && isDecimalNumber(value.scalar, false);
            if (ok) {
                std::string_view text = value.scalar;
                if (text.front() == '+')
                    text.remove_prefix(1);
                const auto result = std::from_chars(text.data(), text.data() + text.size(), parsed);
                ok = result.ec == std::errc() && std::isfinite(parsed) && (zeroAllowed ? parsed >= 0 : parsed > 0);
                if (ok && parsed > maximum) {
                    error(value.location, keyPath,
                        "expected " + expected + " no larger than " + std::to_string(int64_t(maximum)) + ", found "
                            + describe(value));
                    return false;
                }
            }
            if (!ok) {
                error(value.location, keyPath, "expected " + expected + ", found " + describe(value));
                return false;
            }
            out = parsed;
            return true;
        }

        bool readBool(const Entry* entry, const std::string& keyPath, bool& out)
        {
            if (!entry)
                return false;
            const ConfigNode& value = entry->value;
            if (value.kind == Kind::Scalar) {
                const std::string text = lowercase(value.scalar);
                if (text == "true" || text == "yes" || text == "on") {
                    out = true;
                    return true;
                }
                if (text == "false" || text == "no" || text == "off") {
                    out = false;
                    return true;
                }
            }
            error(value.location, keyPath, "expected true or false, found " + describe(value));
            return false;
        }

        bool readString(const Entry* entry, const std::string& keyPath, std::string& out)
        {
            if (!entry)
                return false;
            const ConfigNode& value = entry->value;
            if (value.kind != Kind::Scalar) {
                error(value.location, keyPath, "expected a string, found " + describe(value));
                return false;
            }
            out = value.scalar;
            return true;
        }

        template <typename Enum>
        bool readEnum(const Entry* entry, const std::string& keyPath, const std::vector<EnumName<Enum>>& names,
            Enum& out, bool suggest = true)
        {
            if (!entry)
                return false;
            const ConfigNode& value = entry->value;
            std::vector<std::string_view> texts;
            for (const EnumName<Enum>& name : names) {
                if (value.kind == Kind::Scalar && value.scalar == name.text) {
                    out = name.value;
                    return true;
                }
                texts.push_back(name.text);
            }
            const std::string hint =
                suggest && value.kind == Kind::Scalar ? didYouMean(value.scalar, texts) : std::string();
            error(value.location, keyPath, "expected one of " + joined(texts) + ", found " + describe(value) + hint);
            return false;
        }

        void missing(const Entry& sectionEntry, const std::string& keyPath, std::string_view key, std::string_view why)
        {
            error(sectionEntry.keyLocation, keyPath,
                "missing required key '" + std::string(key) + "'" + std::string(why));
        }

        void readModel(const Entry& sectionEntry, ModelConfig& m)
        {
            const Section s = section(sectionEntry.value, "model", kModelKeys);
            if (sectionEntry.value.kind != Kind::Null && sectionEntry.value.kind != Kind::Map)
                return;
            readString(s.get("preset"), "model.preset", m.preset);
            std::string hfConfig; // resolved into the model keys already (resolveModelHfConfig)
            readString(s.get("hf_config"), "model.hf_config", hfConfig);
            const bool familyRead = readEnum(s.get("family"), "model.family", kFamilies, m.family);
            if (!familyRead && s.get("family")) {
                // The family decides which other model checks apply; do not guess.
                for (const char* path : { "model.kv_heads", "model.experts", "model.top_k", "model.expert_ffn_hidden",
                         "model.shared_expert_ffn_hidden" })
                    m_errorPaths.emplace_back(path);
            }
            readInteger(s.get("layers"), "model.layers", 1, m.layers);
            readInteger(s.get("hidden"), "model.hidden", 1, m.hidden);
            readInteger(s.get("ffn_hidden"), "model.ffn_hidden", 1, m.ffnHidden);
            readInteger(s.get("heads"), "model.heads", 1, m.heads);
            readInteger(s.get("kv_heads"), "model.kv_heads", 1, m.kvHeads);
            readInteger(s.get("vocab"), "model.vocab", 1, m.vocab);
            readInteger(s.get("seq_len"), "model.seq_len", 1, m.seqLen);
            readInteger(s.get("experts"), "model.experts", 0, m.experts);
            readInteger(s.get("top_k"), "model.top_k", 0, m.topK);
            readInteger(s.get("expert_ffn_hidden"), "model.expert_ffn_hidden", 0, m.expertFfnHidden);
            readInteger(
                s.get("shared_expert_ffn_hidden"), "model.shared_expert_ffn_hidden", 0, m.sharedExpertFfnHidden);
            readBool(s.get("causal_mask"), "model.causal_mask", m.causalMask);
            readBool(s.get("tied_embeddings"), "model.tied_embeddings", m.tiedEmbeddings);
            readNumber(
                s.get("rope_theta"), "model.rope_theta", true, std::numeric_limits<double>::max(), {}, m.ropeTheta);
            readEnum(s.get("attention"), "model.attention", kAttentionKernels, m.attention);
            readInteger(s.get("head_dim"), "model.head_dim", 0, m.headDim);
            readBool(s.get("qk_norm"), "model.qk_norm", m.qkNorm);
            readBool(s.get("qkv_bias"), "model.qkv_bias", m.qkvBias);
            readInteger(s.get("q_lora_rank"), "model.q_lora_rank", 0, m.qLoraRank);
            readInteger(s.get("kv_lora_rank"), "model.kv_lora_rank", 0, m.kvLoraRank);
            readInteger(s.get("qk_nope_head_dim"), "model.qk_nope_head_dim", 0, m.qkNopeHeadDim);
            readInteger(s.get("qk_rope_head_dim"), "model.qk_rope_head_dim", 0, m.qkRopeHeadDim);
            readInteger(s.get("v_head_dim"), "model.v_head_dim", 0, m.vHeadDim);
            readInteger(s.get("first_dense_layers"), "model.first_dense_layers", 0, m.firstDenseLayers);
            readInteger(s.get("mtp_modules"), "model.mtp_modules", 0, m.mtpModules);
            readNumber(
                s.get("moe_capacity_factor"), "model.moe_capacity_factor", true, kMaxFactor, {}, m.moeCapacityFactor);
            readNumber(s.get("moe_routing_imbalance"), "model.moe_routing_imbalance", false, kMaxFactor, {},
                m.moeRoutingImbalance);

            if (m_unresolvedPreset) {
                m_errorPaths.emplace_back("model"); // the model keys are unknown, so checks of them would only mislead
                return;
            }
            const std::string why = s.get("preset") || s.get("hf_config") ? std::string() : " (no model.preset given)";
            std::vector<std::string_view> required { "family", "layers", "hidden", "ffn_hidden", "heads", "vocab",
                "seq_len" };
            if (familyRead && m.family != Family::Gpt)
                required.push_back("kv_heads");
            if (familyRead && m.family == Family::Moe) {
                required.push_back("experts");
                required.push_back("top_k");
            }
            for (std::string_view key : required) {
                if (!s.get(key) && !alreadyReported("model." + std::string(key)))
                    missing(sectionEntry, "model." + std::string(key), key, why);
            }
            if (m.family == Family::Gpt && !s.get("kv_heads"))
                m.kvHeads = m.heads; // GPT is multi-head attention
            if (m.family == Family::Moe && !s.get("expert_ffn_hidden"))
                m.expertFfnHidden = m.ffnHidden;
        }

        void readTraining(
            const Entry* sectionEntry, const SourceLocation& documentStart, bool inference, TrainingConfig& t)
        {
            if (!sectionEntry && inference)
                return; // serving reads only training.precision, which has a default
            if (!sectionEntry) {
                error(documentStart, "training.global_batch",
                    "missing required key 'global_batch' (no training section)");
                return;
            }
            const Section s = section(sectionEntry->value, "training", kTrainingKeys);
            if (!readInteger(s.get("global_batch"), "training.global_batch", 1, t.globalBatch) && !s.get("global_batch")
                && !alreadyReported("training") && !inference)
                missing(*sectionEntry, "training.global_batch", "global_batch", {});
            readInteger(s.get("micro_batch"), "training.micro_batch", 1, t.microBatch);
            readEnum(s.get("precision"), "training.precision", kPrecisions, t.precision);
            readString(s.get("optimizer"), "training.optimizer", t.optimizer);
            readEnum(s.get("recompute"), "training.recompute", kRecomputes, t.recompute);
            if (const Entry* modules = s.get("recompute_modules"))
                readRecomputeModules(modules->value, t.recomputeModules);
            readEnum(s.get("main_grad_dtype"), "training.main_grad_dtype", kPrecisions, t.mainGradDtype);
            readEnum(s.get("grad_reduce_dtype"), "training.grad_reduce_dtype", kPrecisions, t.gradReduceDtype);
            readBool(s.get("gradient_accumulation_fusion"), "training.gradient_accumulation_fusion",
                t.gradientAccumulationFusion);
        }

        /// The inference section; read (and checked) whatever the workload, used only for inference.
        void readInference(const Entry* sectionEntry, InferenceConfig& i)
        {
            if (!sectionEntry)
                return;
            const Section s = section(sectionEntry->value, "inference", kInferenceKeys);
            readInteger(s.get("batch"), "inference.batch", 1, i.batch);
            readInteger(s.get("prompt_tokens"), "inference.prompt_tokens", 0, i.promptTokens);
            readInteger(s.get("output_tokens"), "inference.output_tokens", 1, i.outputTokens);
            readEnum(s.get("phases"), "inference.phases", kPhases, i.phases);
            readInteger(s.get("decode_steps"), "inference.decode_steps", 0, i.decodeSteps);
            readEnum(s.get("kv_cache_dtype"), "inference.kv_cache_dtype", kKvCacheDtypes, i.kvCacheDtype);
            readInteger(s.get("block_size"), "inference.block_size", 1, i.blockSize);
            readEnum(s.get("arrival"), "inference.arrival", kArrivals, i.arrival);
            readNumber(
                s.get("request_rate"), "inference.request_rate", false, 1e9, " (requests per second)", i.requestRate);
            readNumber(s.get("arrival_cv"), "inference.arrival_cv", false, 100, "", i.arrivalCv);
            readInteger(s.get("requests"), "inference.requests", 0, i.requests);
            readEnum(s.get("length_distribution"), "inference.length_distribution", kLengthDistributions,
                i.lengthDistribution);
            readNumber(s.get("length_cv"), "inference.length_cv", true, 10, "", i.lengthCv);
            readString(s.get("trace"), "inference.trace", i.trace);
            readInteger(s.get("seed"), "inference.seed", 0, i.seed);
            readInteger(s.get("max_batched_tokens"), "inference.max_batched_tokens", 1, i.maxBatchedTokens);
            readInteger(s.get("max_sequences"), "inference.max_sequences", 1, i.maxSequences);
            readBool(s.get("chunked_prefill"), "inference.chunked_prefill", i.chunkedPrefill);
            readEnum(s.get("preemption"), "inference.preemption", kPreemptions, i.preemptBySwap);
            readNumber(s.get("kv_memory_fraction"), "inference.kv_memory_fraction", false, 1, "", i.kvMemoryFraction);
            readInteger(s.get("prefill_replicas"), "inference.prefill_replicas", 0, i.prefillReplicas);
            readInteger(s.get("prefill_tp"), "inference.prefill_tp", 0, i.prefillTp);
            readInteger(s.get("prefill_pp"), "inference.prefill_pp", 0, i.prefillPp);
            readInteger(s.get("speculative_tokens"), "inference.speculative_tokens", 0, i.speculativeTokens);
            readNumber(s.get("acceptance_rate"), "inference.acceptance_rate", true, 1, "", i.acceptanceRate);
            readNumber(s.get("draft_cost"), "inference.draft_cost", true, 10, "", i.draftCost);
            readEnum(s.get("weight_dtype"), "inference.weight_dtype", kWeightDtypes, i.fp8Weights);
            readNumber(s.get("slo_ttft_ms"), "inference.slo_ttft_ms", true, 1e9, " (milliseconds)", i.sloTtftMs);
            readNumber(s.get("slo_tpot_ms"), "inference.slo_tpot_ms", true, 1e9, " (milliseconds)", i.sloTpotMs);
        }

        void readParallelism(const Entry* sectionEntry, ParallelismConfig& p)
        {
            if (!sectionEntry)
                return;
            const Section s = section(sectionEntry->value, "parallelism", kParallelismKeys);
            readInteger(s.get("dp"), "parallelism.dp", 1, p.dp);
            readInteger(s.get("tp"), "parallelism.tp", 1, p.tp);
            readInteger(s.get("pp"), "parallelism.pp", 1, p.pp);
            readInteger(s.get("cp"), "parallelism.cp", 1, p.cp);
            readInteger(s.get("ep"), "parallelism.ep", 1, p.ep);
            readBool(s.get("sequence_parallel"), "parallelism.sequence_parallel", p.sequenceParallel);
            readBool(s.get("overlap_grad_reduce"), "parallelism.overlap_grad_reduce", p.overlapGradReduce);
            readBool(s.get("overlap_param_gather"), "parallelism.overlap_param_gather", p.overlapParamGather);
            readBool(s.get("tp_comm_overlap"), "parallelism.tp_comm_overlap", p.tpCommOverlap);
            readBool(s.get("overlap_p2p_comm"), "parallelism.overlap_p2p_comm", p.overlapP2pComm);
            if (const Entry* zero = s.get("zero")) {
                const std::vector<EnumName<int>> stages { { "0", 0 }, { "1", 1 }, { "2", 2 }, { "3", 3 } };
                readEnum(zero, "parallelism.zero", stages, p.zero, false);
            }
            readEnum(s.get("schedule"), "parallelism.schedule", kSchedules, p.schedule);
            readInteger(s.get("virtual_stages"), "parallelism.virtual_stages", 1, p.virtualStages);
            if (const Entry* order = s.get("rank_order"))
                readRankOrder(order->value, p.rankOrder);
            double bucketMiB = 0;
            if (readNumber(s.get("gradient_bucket_mb"), "parallelism.gradient_bucket_mb", true, kMaxBucketMiB, " (MiB)",
                    bucketMiB))
                p.gradientBucketBytes = std::llround(bucketMiB * double(1 << 20));
            readInteger(s.get("expert_tp"), "parallelism.expert_tp", 0, p.expertTp);
            readInteger(s.get("first_stage_layers"), "parallelism.first_stage_layers", 0, p.firstStageLayers);
            readInteger(s.get("last_stage_layers"), "parallelism.last_stage_layers", 0, p.lastStageLayers);
            readBool(s.get("account_for_embedding_in_pipeline_split"),
                "parallelism.account_for_embedding_in_pipeline_split", p.embeddingInSplit);
            readBool(s.get("account_for_loss_in_pipeline_split"), "parallelism.account_for_loss_in_pipeline_split",
                p.lossInSplit);
            // Checked by the validator (syntax and fit to the model), which points at the character.
            readString(s.get("pipeline_layout"), "parallelism.pipeline_layout", p.pipelineLayout);
            readInteger(s.get("microbatch_group_size"), "parallelism.microbatch_group_size", 0, p.microBatchGroupSize);
            readBool(s.get("overlap_moe_expert_parallel_comm"), "parallelism.overlap_moe_expert_parallel_comm",
                p.overlapMoeExpertParallelComm);
            readBool(s.get("reduce_gradients_per_microbatch"), "parallelism.reduce_gradients_per_microbatch",
                p.reduceGradientsPerMicroBatch);
        }

        void readRecomputeModules(const ConfigNode& value, uint8_t& out)
        {
            const std::string keyPath = "training.recompute_modules";
            if (value.kind != Kind::Sequence) {
                error(value.location, keyPath,
                    "expected a list of Megatron-LM recompute module names like [core_attn, mlp], found "
                        + describe(value));
                return;
            }
            uint8_t mask = 0;
            bool ok = true;
            for (const ConfigNode& item : value.items) {
                const Entry element { {}, item.location, item };
                uint8_t bit = 0;
                if (readEnum(&element, keyPath, kRecomputeModules, bit))
                    mask |= bit;
                else
                    ok = false;
            }
            if (ok)
                out = mask;
        }

        void readRankOrder(const ConfigNode& value, std::vector<MeshAxis>& out)
        {
            const std::string keyPath = "parallelism.rank_order";
            if (value.kind != Kind::Sequence) {
                error(value.location, keyPath,
                    "expected a list of the axes dp, tp, cp, ep, pp like [tp, cp, ep, dp, pp], found "
                        + describe(value));
                return;
            }
            std::vector<MeshAxis> axes;
            bool ok = true;
            for (const ConfigNode& item : value.items) {
                const Entry element { {}, item.location, item };
                MeshAxis axis {};
                if (readEnum(&element, keyPath, kAxes, axis))
                    axes.push_back(axis);
                else
                    ok = false;
            }
            if (ok)
                out = std::move(axes);
        }

        void readCluster(const Entry* sectionEntry, ClusterConfig& c)
        {
            if (!sectionEntry)
                return;
            const Section s = section(sectionEntry->value, "cluster", kClusterKeys);
            // A preset fills every figure first; the keys given next to it override its figures.
            if (const Entry* preset = s.get("preset"); preset && readString(preset, "cluster.preset", c.preset)) {
                if (const ClusterConfig* figures = clusterPreset(c.preset))
                    c = *figures;
                else if (!c.preset.empty())
                    error(preset->value.location, "cluster.preset", unknownClusterPresetText(c.preset));
            }
            readString(s.get("gpu"), "cluster.gpu", c.gpu);
            readInteger(s.get("gpus_per_node"), "cluster.gpus_per_node", 1, c.gpusPerNode);
            auto decimal = [&](const char* key, const std::string& unit, double& out) {
                const std::string keyPath = std::string("cluster.") + key;
                const DecimalRange range = *clusterDecimalRange(keyPath);
                readNumber(s.get(key), keyPath, range.zeroAllowed, range.maximum, unit, out);
            };
            decimal("intra_node_bandwidth_gbps", " (GB/s)", c.intraNodeBandwidthGbps);
            decimal("inter_node_bandwidth_gbps", " (GB/s)", c.interNodeBandwidthGbps);
            const std::string fraction = " (a fraction, at most 1)";
            decimal("intra_node_efficiency", fraction, c.intraNodeEfficiency);
            decimal("inter_node_efficiency", fraction, c.interNodeEfficiency);
            decimal("intra_node_latency_us", " (microseconds)", c.intraNodeLatencyUs);
            decimal("inter_node_latency_us", " (microseconds)", c.interNodeLatencyUs);
            decimal("kernel_launch_us", " (microseconds)", c.kernelLaunchUs);
            const std::string orPreset = " (a fraction, at most 1; 0 = the GPU preset's)";
            decimal("gemm_efficiency", orPreset, c.gemmEfficiency);
            decimal("attention_efficiency", orPreset, c.attentionEfficiency);
            decimal("hbm_efficiency", orPreset, c.hbmEfficiency);
            if (const Entry* table = s.get("kernel_table");
                table && readString(table, "cluster.kernel_table", c.kernelTable)) {
                // Relative to the config file, as model.hf_config.
                std::filesystem::path path(c.kernelTable);
                const std::string& base = table->value.location.file;
                if (!c.kernelTable.empty() && path.is_relative() && !base.empty() && base.front() != '<')
                    c.kernelTable = (std::filesystem::path(base).parent_path() / path).lexically_normal().string();
            }
            readTopology(s, c.topology);
        }

        /// cluster.topology (a preset that fills the fabric's keys) and the fabric's keys, which override it.
        void readTopology(const Section& s, TopologyConfig& t)
        {
            const Entry* preset = s.get("topology");
            if (preset && preset->value.kind == Kind::Null) // `topology:` with nothing: no topology
                t = TopologyConfig {};
            else if (preset && readString(preset, "cluster.topology", t.preset)) {
                if (const TopologyConfig* figures = topologyPreset(t.preset))
                    t = *figures;
                else if (!t.preset.empty())
                    error(preset->value.location, "cluster.topology", unknownTopologyPresetText(t.preset));
                else
                    t = TopologyConfig {};
            }
            readInteger(s.get("nvlink_domain"), "cluster.nvlink_domain", 0, t.nvlinkDomain);
            readInteger(s.get("nics_per_node"), "cluster.nics_per_node", 1, t.nicsPerNode);
            readInteger(s.get("rails"), "cluster.rails", 0, t.rails);
            readInteger(s.get("leaf_radix"), "cluster.leaf_radix", 2, t.leafRadix);
            readInteger(s.get("spine_radix"), "cluster.spine_radix", 1, t.spineRadix);
            readInteger(s.get("planes"), "cluster.planes", 1, t.planes);
            auto decimal = [&](const char* key, const std::string& unit, double& out) {
                const std::string keyPath = std::string("cluster.") + key;
                const DecimalRange range = *clusterDecimalRange(keyPath);
                readNumber(s.get(key), keyPath, range.zeroAllowed, range.maximum, unit, out);
            };
            decimal("nvlink_bandwidth_gbps", " (GB/s; 0 without a topology)", t.nvlinkBandwidthGbps);
            decimal("nvls_efficiency", " (a fraction, at most 1; 0 = no NVLink SHARP)", t.nvlsEfficiency);
            decimal("nic_bandwidth_gbps", " (GB/s)", t.nicBandwidthGbps);
            decimal("nic_efficiency", " (a fraction, at most 1)", t.nicEfficiency);
            decimal("leaf_oversubscription", " (down:up ports, 1 or more)", t.leafOversubscription);
            decimal("spine_oversubscription", " (pod:core bandwidth, 1 or more)", t.spineOversubscription);
        }

        std::string m_fileName;
        std::vector<Diagnostic>& m_diagnostics;
        std::vector<std::string> m_errorPaths; ///< key paths with a reported error; validator repeats are dropped
        bool m_unresolvedPreset = false;
    };

    ConfigResult load(std::string_view text, const std::string& fileName, const std::vector<std::string>& overrides,
        const std::string& defaultName)
    {
        ConfigResult result;
        std::optional<ConfigNode> root = parseConfigYaml(text, fileName, result.diagnostics);
        if (!root)
            return result;
        for (const std::string& assignment : overrides)
            applyConfigOverride(*root, assignment, result.diagnostics);

        ConfigReader reader(fileName, result.diagnostics);
        reader.resolveModelHfConfig(*root);
        reader.resolveModelPreset(*root);
        Config config = reader.read(*root, defaultName);
        config.origin.locations = std::make_shared<const ConfigLocations>(fileName, std::move(*root));
        std::vector<Diagnostic> semantic = validateConfig(config);
        anchorDiagnostics(config, semantic);
        for (Diagnostic& d : semantic) {
            if (!reader.alreadyReported(d.keyPath))
                result.diagnostics.push_back(std::move(d));
        }
        if (!hasErrors(result.diagnostics))
            result.config = std::move(config);
        return result;
    }

    /// Runs a load; anything that escapes (std::bad_alloc, a bug) becomes an error diagnostic: loading never throws.
    template <typename Load> ConfigResult guarded(const std::string& fileName, Load&& loadIt)
    {
        try {
            return loadIt();
        } catch (const std::exception& e) {
            return { std::nullopt,
                { { Severity::Error, fileName, 0, 0, {}, std::string("internal error while loading: ") + e.what() } } };
        } catch (...) {
            return { std::nullopt, { { Severity::Error, fileName, 0, 0, {}, "internal error while loading" } } };
        }
    }

} // namespace

std::string presetFileName(std::string_view presetName)
{
    return "<preset " + std::string(presetName) + ">";
}

ConfigResult loadConfigText(
    std::string_view yamlText, const std::string& fileName, const std::vector<std::string>& overrides)
{
    return guarded(fileName, [&] { return load(yamlText, fileName, overrides, {}); });
}

std::optional<DecimalRange> clusterDecimalRange(std::string_view keyPath)
{
    constexpr DecimalRange positive {}, fraction { false, 1 }, fractionOrPreset { true, 1 }, microseconds { true, 1e6 };
    static constexpr std::pair<std::string_view, DecimalRange> kRanges[] = {
        { "cluster.intra_node_bandwidth_gbps", positive },
        { "cluster.inter_node_bandwidth_gbps", positive },
        { "cluster.intra_node_efficiency", fraction },
        { "cluster.inter_node_efficiency", fraction },
        { "cluster.intra_node_latency_us", microseconds },
        { "cluster.inter_node_latency_us", microseconds },
        { "cluster.kernel_launch_us", microseconds },
        { "cluster.gemm_efficiency", fractionOrPreset }, // 0 = the GPU preset's figure
        { "cluster.attention_efficiency", fractionOrPreset },
        { "cluster.hbm_efficiency", fractionOrPreset },
        { "cluster.nvlink_bandwidth_gbps", DecimalRange { true } },
        { "cluster.nvls_efficiency", fractionOrPreset },
        { "cluster.nic_bandwidth_gbps", positive },
        { "cluster.nic_efficiency", fraction },
        { "cluster.leaf_oversubscription", positive },
        { "cluster.spine_oversubscription", positive },
    };
    for (const auto& [key, range] : kRanges)
        if (key == keyPath)
            return range;
    return std::nullopt;
}

ConfigResult loadConfigFile(const std::string& path, const std::vector<std::string>& overrides)
{
    return guarded(path, [&] {
        std::string text;
        std::string problem =
            readBoundedFile(path, kMaxConfigBytes, { "config file", "a YAML config file", "a config" }, text);
        if (!problem.empty())
            return ConfigResult { std::nullopt, { { Severity::Error, path, 0, 0, {}, std::move(problem) } } };
        if (!looksLikeText(text))
            return ConfigResult { std::nullopt,
                { { Severity::Error, path, 0, 0, {},
                    "not a YAML config: the file holds binary data (NUL or control bytes, or text that is not "
                    "UTF-8)" } } };
        ConfigResult result = load(text, path, overrides, {});
        // A relative request trace is read from the config's folder.
        if (result.config && !result.config->inference.trace.empty()) {
            const std::filesystem::path trace(result.config->inference.trace);
            if (trace.is_relative())
                result.config->inference.trace =
                    (std::filesystem::path(path).parent_path() / trace).lexically_normal().string();
        }
        return result;
    });
}

ConfigResult loadConfigOrPreset(const std::string& pathOrPresetName, const std::vector<std::string>& overrides)
{
    std::error_code ec;
    if (std::filesystem::exists(pathOrPresetName, ec))
        return loadConfigFile(pathOrPresetName, overrides);
    if (const std::optional<std::string_view> text = presetText(pathOrPresetName)) {
        const std::string fileName = presetFileName(pathOrPresetName);
        return guarded(fileName, [&] { return load(*text, fileName, overrides, pathOrPresetName); });
    }
    const std::vector<std::string> names = presetNames();
    const std::string hint = didYouMean(pathOrPresetName, std::vector<std::string_view>(names.begin(), names.end()));
    return { std::nullopt,
        { { Severity::Error, pathOrPresetName, 0, 0, {},
            "no such config file or preset (presets: " + joinedNames(names) + ")" + hint } } };
}

} // namespace stagecraft
