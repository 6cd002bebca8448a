// SPDX-License-Identifier: MIT
#include "config/hfimport.h"

#include "config/boundedfile.h"
#include "config/configwriter.h"
#include "config/suggestion.h"
#include "output/messagetext.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <utility>

namespace stagecraft {

namespace {

    constexpr int kMaxJsonDepth = 64;
    constexpr int kMaxJsonValues = 10000;

    struct JsonMember;

    /// A parsed JSON value that remembers where it starts.
    struct JsonValue
    {
        enum class Kind
        {
            Null,
            Bool,
            Number,
            String,
            Array,
            Object
        };
        Kind kind = Kind::Null;
        std::string text; ///< Bool: "true"/"false"; Number: the literal; String: the decoded UTF-8 text
        SourceLocation location;
        std::vector<JsonValue> items;
        std::vector<JsonMember> members; ///< in document order

        const JsonMember* member(std::string_view key) const;
    };

    struct JsonMember
    {
        std::string key;
        SourceLocation keyLocation;
        JsonValue value;
    };

    const JsonMember* JsonValue::member(std::string_view key) const
    {
        for (const JsonMember& m : members) {
            if (m.key == key)
                return &m;
        }
        return nullptr;
    }

    struct JsonError
    {
        SourceLocation where;
        std::string message;
    };

    /// Strict RFC 8259 JSON with 1-based line and column (in bytes) for every value and key.
    class JsonParser
    {
    public:
        JsonParser(std::string_view text, const std::string& fileName)
            : m_text(text)
            , m_fileName(fileName)
        {
            if (m_text.substr(0, 3) == "\xEF\xBB\xBF") // a UTF-8 byte order mark
                m_pos = m_lineStart = 3;
        }

        JsonValue parseDocument()
        {
            skipSpace();
            JsonValue root = value(0);
            skipSpace();
            if (m_pos < m_text.size())
                fail(here(), "expected the end of the file after the top-level value, found " + found());
            return root;
        }

    private:
        SourceLocation here() const
        {
            return { m_fileName, m_line, int(m_pos - m_lineStart) + 1 };
        }

        [[noreturn]] void fail(const SourceLocation& where, std::string message) const
        {
            throw JsonError { where, std::move(message) };
        }

        std::string found() const
        {
            if (m_pos >= m_text.size())
                return "the end of the file";
            const unsigned char c = static_cast<unsigned char>(m_text[m_pos]);
            if (c >= 0x20 && c < 0x7f)
                return std::string("'") + char(c) + "'";
            static const char* const hex = "0123456789abcdef";
            return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
        }

        void skipSpace()
        {
            while (m_pos < m_text.size()) {
                const char c = m_text[m_pos];
                if (c == '\n') {
                    ++m_line;
                    m_lineStart = ++m_pos;
                } else if (c == ' ' || c == '\t' || c == '\r') {
                    ++m_pos;
                } else {
                    break;
                }
            }
        }

        bool literal(std::string_view word)
        {
            if (m_text.substr(m_pos, word.size()) != word)
                return false;
            m_pos += word.size();
            return true;
        }

        JsonValue value(int depth)
        {
            JsonValue out;
            out.location = here();
            if (depth > kMaxJsonDepth)
                fail(out.location, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
            if (++m_values > kMaxJsonValues)
                fail(out.location, "JSON document has more than " + std::to_string(kMaxJsonValues) + " values");
            if (m_pos >= m_text.size())
                fail(out.location, "expected a JSON value, found the end of the file");
            const char c = m_text[m_pos];
            if (c == '{') {
                out.kind = JsonValue::Kind::Object;
                object(out, depth);
            } else if (c == '[') {
                out.kind = JsonValue::Kind::Array;
                array(out, depth);
            } else if (c == '"') {
                out.kind = JsonValue::Kind::String;
                out.text = string();
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                out.kind = JsonValue::Kind::Number;
                out.text = number();
            } else if (literal("true") || literal("false")) {
                out.kind = JsonValue::Kind::Bool;
                out.text = c == 't' ? "true" : "false";
            } else if (literal("null")) {
                out.kind = JsonValue::Kind::Null;
            } else {
                fail(out.location,
                    "expected a JSON value (an object, array, string, number, true, false or null), found " + found()
                        + (c == '\'' ? " (JSON strings use double quotes)" : ""));
            }
            return out;
        }

        void object(JsonValue& out, int depth)
        {
            ++m_pos; // '{'
            skipSpace();
            if (m_pos < m_text.size() && m_text[m_pos] == '}') {
                ++m_pos;
                return;
            }
            for (;;) {
                skipSpace();
                JsonMember member;
                member.keyLocation = here();
                if (m_pos >= m_text.size() || m_text[m_pos] != '"')
                    fail(here(),
                        "expected a member name in double quotes, found " + found()
                            + (m_pos < m_text.size() && m_text[m_pos] == '}' ? " (a trailing comma?)" : ""));
                member.key = string();
                for (const JsonMember& earlier : out.members) {
                    if (earlier.key == member.key)
                        fail(member.keyLocation,
                            "duplicate key \"" + member.key + "\" (first given at line "
                                + std::to_string(earlier.keyLocation.line) + ")");
                }
                skipSpace();
                if (m_pos >= m_text.size() || m_text[m_pos] != ':')
                    fail(here(), "expected ':' after the member name \"" + member.key + "\", found " + found());
                ++m_pos;
                skipSpace();
                member.value = value(depth + 1);
                out.members.push_back(std::move(member));
                skipSpace();
                if (m_pos < m_text.size() && m_text[m_pos] == ',') {
                    ++m_pos;
                    continue;
                }
                if (m_pos < m_text.size() && m_text[m_pos] == '}') {
                    ++m_pos;
                    return;
                }
                fail(here(), "expected ',' or '}' after an object member, found " + found());
            }
        }

        void array(JsonValue& out, int depth)
        {
            ++m_pos; // '['
            skipSpace();
            if (m_pos < m_text.size() && m_text[m_pos] == ']') {
                ++m_pos;
                return;
            }
            for (;;) {
                skipSpace();
                if (m_pos < m_text.size() && m_text[m_pos] == ']')
                    fail(here(), "expected a JSON value, found ']' (a trailing comma?)");
                out.items.push_back(value(depth + 1));
                skipSpace();
                if (m_pos < m_text.size() && m_text[m_pos] == ',') {
                    ++m_pos;
                    continue;
                }
                if (m_pos < m_text.size() && m_text[m_pos] == ']') {
                    ++m_pos;
                    return;
                }
                fail(here(), "expected ',' or ']' after an array element, found " + found());
            }
        }

        static void appendUtf8(std::string& out, uint32_t codePoint)
        {
            if (codePoint < 0x80) {
                out += char(codePoint);
            } else if (codePoint < 0x800) {
                out += char(0xC0 | (codePoint >> 6));
                out += char(0x80 | (codePoint & 0x3F));
            } else if (codePoint < 0x10000) {
                out += char(0xE0 | (codePoint >> 12));
                out += char(0x80 | ((codePoint >> 6) & 0x3F));
                out += char(0x80 | (codePoint & 0x3F));
            } else {
                out += char(0xF0 | (codePoint >> 18));
                out += char(0x80 | ((codePoint >> 12) & 0x3F));
                out += char(0x80 | ((codePoint >> 6) & 0x3F));
                out += char(0x80 | (codePoint & 0x3F));
            }
        }

        uint32_t hex4()
        {
            uint32_t value = 0;
            for (int i = 0; i < 4; ++i, ++m_pos) {
                const char c = m_pos < m_text.size() ? m_text[m_pos] : '\0';
                const int digit = c >= '0' && c <= '9' ? c - '0'
                    : c >= 'a' && c <= 'f'             ? c - 'a' + 10
                    : c >= 'A' && c <= 'F'             ? c - 'A' + 10
                                                       : -1;
                if (digit < 0)
                    fail(here(), "expected four hexadecimal digits after \\u, found " + found());
                value = value * 16 + uint32_t(digit);
            }
            return value;
        }

        std::string string()
        {
            const SourceLocation start = here();
            ++m_pos; // '"'
            std::string out;
            for (;;) {
                if (m_pos >= m_text.size() || m_text[m_pos] == '\n')
                    fail(start, "a string that does not close on its line (a '\"' is missing)");
                const char c = m_text[m_pos];
                if (c == '"') {
                    ++m_pos;
                    return out;
                }
                if (static_cast<unsigned char>(c) < 0x20)
                    fail(here(), "a control character in a string (write it as an escape such as \\t)");
                if (c != '\\') {
                    out += c;
                    ++m_pos;
                    continue;
                }
                ++m_pos;
                const char e = m_pos < m_text.size() ? m_text[m_pos] : '\0';
                const std::string_view simple = "\"\\/bfnrt";
                const std::string_view meaning = "\"\\/\b\f\n\r\t";
                if (const size_t i = simple.find(e); e != '\0' && i != std::string_view::npos) {
                    out += meaning[i];
                    ++m_pos;
                } else if (e == 'u') {
                    ++m_pos;
                    uint32_t codePoint = hex4();
                    if (codePoint >= 0xD800 && codePoint < 0xDC00 && m_text.substr(m_pos, 2) == "\\u") {
                        m_pos += 2;
                        const uint32_t low = hex4();
                        if (low < 0xDC00 || low >= 0xE000)
                            fail(here(), "a \\u escape of a high surrogate not followed by a low surrogate");
                        codePoint = 0x10000 + ((codePoint - 0xD800) << 10) + (low - 0xDC00);
                    }
                    appendUtf8(out, codePoint);
                } else {
                    fail(here(), "unknown escape \\" + std::string(1, e) + " in a string");
                }
            }
        }

        std::string number()
        {
            const SourceLocation start = here();
            const size_t begin = m_pos;
            auto digits = [&] {
                const size_t from = m_pos;
                while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9')
                    ++m_pos;
                return m_pos - from;
            };
            if (m_text[m_pos] == '-')
                ++m_pos;
            const size_t intStart = m_pos;
            if (digits() == 0)
                fail(here(), "expected a digit, found " + found());
            if (m_pos - intStart > 1 && m_text[intStart] == '0')
                fail(start, "a number with a leading zero (not JSON)");
            if (m_pos < m_text.size() && m_text[m_pos] == '.') {
                ++m_pos;
                if (digits() == 0)
                    fail(here(), "expected a digit after '.', found " + found());
            }
            if (m_pos < m_text.size() && (m_text[m_pos] == 'e' || m_text[m_pos] == 'E')) {
                ++m_pos;
                if (m_pos < m_text.size() && (m_text[m_pos] == '+' || m_text[m_pos] == '-'))
                    ++m_pos;
                if (digits() == 0)
                    fail(here(), "expected a digit in the exponent, found " + found());
            }
            return std::string(m_text.substr(begin, m_pos - begin));
        }

        std::string_view m_text;
        const std::string& m_fileName;
        size_t m_pos = 0;
        size_t m_lineStart = 0;
        int m_line = 1;
        int m_values = 0;
    };

    enum class Arch
    {
        Llama,
        Mistral,
        Mixtral,
        Qwen2,
        Qwen3,
        Qwen3Moe,
        DeepseekV3,
        Gpt2
    };

    const std::vector<std::pair<std::string_view, Arch>> kArchitectures {
        { "LlamaForCausalLM", Arch::Llama },
        { "MistralForCausalLM", Arch::Mistral },
        { "MixtralForCausalLM", Arch::Mixtral },
        { "Qwen2ForCausalLM", Arch::Qwen2 },
        { "Qwen3ForCausalLM", Arch::Qwen3 },
        { "Qwen3MoeForCausalLM", Arch::Qwen3Moe },
        { "DeepseekV3ForCausalLM", Arch::DeepseekV3 },
        { "GPT2LMHeadModel", Arch::Gpt2 },
    };

    /// Fields that do not change the parameters, FLOPs or memory we model (numerics, tokenizer ids, dropout,
    /// initialisation, inference, bookkeeping). Checked fields (biases, activations, sliding windows, MoE layout)
    /// are handled by the mapper and are not in this list.
    const std::vector<std::string_view> kInformational {
        "_name_or_path",
        "model_type",
        "torch_dtype",
        "dtype",
        "transformers_version",
        "bos_token_id",
        "eos_token_id",
        "pad_token_id",
        "rms_norm_eps",
        "layer_norm_epsilon",
        "layer_norm_eps",
        "initializer_range",
        "initializer_factor",
        "use_cache",
        "attention_dropout",
        "attn_pdrop",
        "embd_pdrop",
        "resid_pdrop",
        "summary_activation",
        "summary_first_dropout",
        "summary_proj_to_labels",
        "summary_type",
        "summary_use_proj",
        "task_specific_params",
        "rope_scaling", // stretches positions for long contexts; weights and FLOPs are unchanged
        "pretraining_tp", // a numerics option of the Llama reference code (split matmuls), same weights
        "auto_map",
        "tokenizer_class",
        "quantization_config", // how the checkpoint is stored (DeepSeek-V3: fp8 blocks), not what is trained
        "output_router_logits",
        "router_aux_loss_coef",
        "router_jitter_noise",
        "aux_loss_alpha",
        "seq_aux",
        "norm_topk_prob",
        "routed_scaling_factor",
        "scoring_func",
        "topk_method",
        "n_group",
        "topk_group",
        "ep_size",
        "max_window_layers", // only used with use_sliding_window, which is checked
        "scale_attn_weights",
        "scale_attn_by_inverse_layer_idx",
        "reorder_and_upcast_attn",
        "n_ctx", // GPT-2: the same as n_positions
        "tie_encoder_decoder",
        "is_encoder_decoder",
        "chat_template",
        "use_return_dict",
        "return_dict",
        "output_hidden_states",
        "output_attentions",
    };

    bool isInformational(std::string_view key)
    {
        return std::find(kInformational.begin(), kInformational.end(), key) != kInformational.end();
    }

    std::string describe(const JsonValue& v)
    {
        switch (v.kind) {
        case JsonValue::Kind::Null:
            return "null";
        case JsonValue::Kind::Bool:
            return v.text;
        case JsonValue::Kind::Number:
            return v.text;
        case JsonValue::Kind::String:
            return quotedText(v.text) + " (a string)";
        case JsonValue::Kind::Array:
            return "an array";
        case JsonValue::Kind::Object:
            return "an object";
        }
        return "?";
    }

    /// Maps one parsed config.json; collects all problems.
    class HfMapper
    {
    public:
        HfMapper(const JsonValue& root, const HfImportOptions& options, std::vector<Diagnostic>& diagnostics)
            : m_root(root)
            , m_options(options)
            , m_diagnostics(diagnostics)
        {
        }

        std::optional<ModelConfig> map(std::string& architecture, ConfigNode& keys)
        {
            if (m_root.kind != JsonValue::Kind::Object) {
                error(m_root.location, {},
                    "expected a JSON object (a Hugging Face config.json), found " + describe(m_root));
                return std::nullopt;
            }
            const std::optional<Arch> arch = readArchitecture(architecture);
            if (!arch)
                return std::nullopt;
            m_arch = *arch;
            if (m_arch == Arch::Gpt2)
                mapGpt2();
            else
                mapLlamaLike();
            warnUnknown();
            if (m_failed)
                return std::nullopt;
            emit(keys);
            return m_model;
        }

    private:
        void error(const SourceLocation& where, std::string_view key, std::string message)
        {
            m_diagnostics.push_back(
                { Severity::Error, where.file, where.line, where.column, std::string(key), std::move(message) });
            m_failed = true;
        }

        const JsonMember* field(std::string_view key)
        {
            const JsonMember* m = m_root.member(key);
            if (m)
                m_used.emplace_back(key);
            return m;
        }

        /// Reports a missing required field at the opening brace of the document.
        void missing(std::string_view key, std::string_view what)
        {
            error(m_root.location, key,
                "missing field \"" + std::string(key) + "\" (" + std::string(what) + ") required for "
                    + m_architecture);
        }

        /// An integer field >= minimum; nullopt (and an error when it is there) otherwise. `what` says what it is.
        std::optional<int64_t> integer(
            std::string_view key, int64_t minimum, bool required, std::string_view what, std::string_view modelKey = {})
        {
            const JsonMember* m = field(key);
            if (!m) {
                if (required)
                    missing(key, what);
                return std::nullopt;
            }
            const JsonValue& v = m->value;
            const std::string expected = minimum == 1 ? "a positive integer"
                : minimum == 0                        ? "a non-negative integer"
                                                      : "an integer >= " + std::to_string(minimum);
            int64_t parsed = 0;
            bool ok = v.kind == JsonValue::Kind::Number && v.text.find_first_of(".eE") == std::string::npos;
            if (ok) {
                const auto result = std::from_chars(v.text.data(), v.text.data() + v.text.size(), parsed);
                ok = result.ec == std::errc() && parsed <= kMaxConfigInteger;
                if (!ok) {
                    error(v.location, key,
                        "expected " + expected + " no larger than " + std::to_string(kMaxConfigInteger) + " ("
                            + std::string(what) + "), found " + describe(v));
                    return std::nullopt;
                }
                ok = parsed >= minimum;
            }
            if (!ok) {
                error(v.location, key, "expected " + expected + " (" + std::string(what) + "), found " + describe(v));
                return std::nullopt;
            }
            if (!modelKey.empty())
                m_sources[std::string(modelKey)] = v.location;
            return parsed;
        }

        /// As integer(), but null is allowed and means `nullValue`.
        std::optional<int64_t> integerOrNull(
            std::string_view key, int64_t minimum, std::string_view what, std::string_view modelKey, int64_t nullValue)
        {
            const JsonMember* m = m_root.member(key);
            if (m && m->value.kind == JsonValue::Kind::Null) {
                m_used.emplace_back(key);
                if (!modelKey.empty())
                    m_sources[std::string(modelKey)] = m->value.location;
                return nullValue;
            }
            return integer(key, minimum, false, what, modelKey);
        }

        std::optional<bool> boolean(std::string_view key, std::string_view modelKey = {})
        {
            const JsonMember* m = field(key);
            if (!m)
                return std::nullopt;
            if (m->value.kind != JsonValue::Kind::Bool) {
                error(m->value.location, key, "expected true or false, found " + describe(m->value));
                return std::nullopt;
            }
            if (!modelKey.empty())
                m_sources[std::string(modelKey)] = m->value.location;
            return m->value.text == "true";
        }

        std::optional<double> number(std::string_view key, std::string_view modelKey)
        {
            const JsonMember* m = field(key);
            if (!m)
                return std::nullopt;
            double parsed = 0;
            bool ok = m->value.kind == JsonValue::Kind::Number;
            if (ok) {
                const auto result =
                    std::from_chars(m->value.text.data(), m->value.text.data() + m->value.text.size(), parsed);
                ok = result.ec == std::errc() && std::isfinite(parsed) && parsed >= 0;
            }
            if (!ok) {
                error(m->value.location, key, "expected a non-negative number, found " + describe(m->value));
                return std::nullopt;
            }
            m_sources[std::string(modelKey)] = m->value.location;
            return parsed;
        }

        std::optional<std::string> text(std::string_view key)
        {
            const JsonMember* m = field(key);
            if (!m)
                return std::nullopt;
            if (m->value.kind != JsonValue::Kind::String) {
                error(m->value.location, key, "expected a string, found " + describe(m->value));
                return std::nullopt;
            }
            return m->value.text;
        }

        /// A boolean field whose `true` we cannot represent.
        void mustBeFalse(std::string_view key, std::string_view why)
        {
            const JsonMember* m = m_root.member(key);
            if (const std::optional<bool> value = boolean(key); value && *value)
                error(m->value.location, key, "true is not supported: " + std::string(why) + "; expected false");
        }

        std::optional<Arch> readArchitecture(std::string& architecture)
        {
            std::vector<std::string_view> names;
            for (const auto& [name, arch] : kArchitectures)
                names.push_back(name);
            std::string list;
            for (std::string_view name : names)
                list += (list.empty() ? "" : ", ") + std::string(name);
            const JsonMember* m = field("architectures");
            if (!m) {
                error(m_root.location, "architectures",
                    "missing field \"architectures\" (the model class, one of " + list + ")");
                return std::nullopt;
            }
            const JsonValue& v = m->value;
            if (v.kind != JsonValue::Kind::Array || v.items.size() != 1
                || v.items.front().kind != JsonValue::Kind::String) {
                error(v.location, "architectures",
                    "expected a list of one model class such as [\"LlamaForCausalLM\"], found "
                        + (v.kind == JsonValue::Kind::Array ? "a list of " + std::to_string(v.items.size()) + " values"
                                    + (v.items.size() == 1 ? " (not a string)" : "")
                                                            : describe(v)));
                return std::nullopt;
            }
            const JsonValue& entry = v.items.front();
            for (const auto& [name, arch] : kArchitectures) {
                if (entry.text == name) {
                    architecture = entry.text;
                    m_architecture = entry.text;
                    m_defaultLocation = entry.location;
                    return arch;
                }
            }
            error(entry.location, "architectures",
                "unknown architecture " + quotedText(entry.text) + " (supported: " + list + ")"
                    + didYouMean(entry.text, names));
            return std::nullopt;
        }

        void setInt(int64_t ModelConfig::*member, std::optional<int64_t> value)
        {
            if (value)
                m_model.*member = *value;
        }

        void mapSeqLen(std::string_view key, bool learnedPositions)
        {
            const std::optional<int64_t> positions =
                integer(key, 1, learnedPositions, "the longest sequence the model takes");
            const JsonMember* m = m_root.member(key);
            if (m_options.seqLen > 0) {
                m_model.seqLen = m_options.seqLen;
                m_sources["seq_len"] = m_options.seqLenLocation;
                if (learnedPositions && positions && m_options.seqLen > *positions) {
                    const SourceLocation& at = m_options.seqLenLocation;
                    error(at, "seq_len",
                        "seq_len " + std::to_string(m_options.seqLen) + " is longer than " + std::string(key) + " "
                            + std::to_string(*positions) + ": the model has learned position embeddings for "
                            + std::to_string(*positions) + " positions only");
                }
            } else if (positions) {
                m_model.seqLen = learnedPositions ? *positions : std::min(*positions, kHfDefaultSeqLen);
                m_sources["seq_len"] = m->value.location;
            } else if (!m_failed) {
                m_model.seqLen = kHfDefaultSeqLen;
            }
        }

        void checkActivation(std::string_view key, const std::vector<std::string_view>& accepted, std::string_view why)
        {
            const JsonMember* m = m_root.member(key);
            const std::optional<std::string> act = text(key);
            if (!act)
                return;
            if (std::find(accepted.begin(), accepted.end(), *act) == accepted.end()) {
                std::string list;
                for (std::string_view a : accepted)
                    list += (list.empty() ? "" : " or ") + quotedText(a);
                error(m->value.location, key,
                    "expected " + list + " (" + std::string(why) + "), found " + describe(m->value));
            }
        }

        /// Sliding-window attention shorter than the sequence is not modelled (every query would see fewer keys).
        void checkSlidingWindow(bool hasUseFlag)
        {
            const JsonMember* window = m_root.member("sliding_window");
            const std::optional<int64_t> size = integerOrNull("sliding_window", 1, "the attention window", {}, 0);
            bool inUse = size && *size > 0;
            const JsonMember* flag = nullptr;
            if (hasUseFlag) {
                flag = m_root.member("use_sliding_window");
                const std::optional<bool> use = boolean("use_sliding_window");
                inUse = inUse && use.value_or(false);
            }
            if (inUse && *size < m_model.seqLen)
                error(window->value.location, "sliding_window",
                    "sliding-window attention of " + std::to_string(*size) + " tokens is shorter than seq_len "
                        + std::to_string(m_model.seqLen)
                        + " and is not modelled (only full causal attention is); import with a seq_len of at most "
                        + std::to_string(*size)
                        + (flag ? std::string(" or set \"use_sliding_window\": false") : std::string()));
        }

        void mapLlamaLike()
        {
            const bool moe = m_arch == Arch::Mixtral || m_arch == Arch::Qwen3Moe || m_arch == Arch::DeepseekV3;
            m_model.family = moe ? Family::Moe : Family::Llama;
            m_sources["family"] = m_defaultLocation;
            setInt(
                &ModelConfig::layers, integer("num_hidden_layers", 1, true, "the number of decoder layers", "layers"));
            setInt(&ModelConfig::hidden, integer("hidden_size", 1, true, "the model width", "hidden"));
            setInt(
                &ModelConfig::ffnHidden, integer("intermediate_size", 1, true, "the feed-forward width", "ffn_hidden"));
            setInt(&ModelConfig::heads, integer("num_attention_heads", 1, true, "the number of query heads", "heads"));
            if (const std::optional<int64_t> kv =
                    integer("num_key_value_heads", 1, false, "the number of key/value heads", "kv_heads")) {
                m_model.kvHeads = *kv;
            } else {
                m_model.kvHeads = m_model.heads; // Hugging Face's default: multi-head attention
                if (const JsonMember* heads = m_root.member("num_attention_heads"))
                    m_sources["kv_heads"] = heads->value.location;
            }
            setInt(&ModelConfig::vocab, integer("vocab_size", 1, true, "the vocabulary size", "vocab"));
            mapSeqLen("max_position_embeddings", false);
            m_model.ropeTheta = number("rope_theta", "rope_theta").value_or(10000.0); // the Hugging Face default
            m_model.tiedEmbeddings = boolean("tie_word_embeddings", "tied_embeddings").value_or(false);
            m_model.causalMask = true;
            checkActivation("hidden_act", { "silu" }, "SwiGLU feed-forward blocks, the only kind modelled for llama");
            mustBeFalse("attention_bias", "biases on the q, k, v and output projections cannot be represented");
            mustBeFalse("mlp_bias", "biases on the feed-forward projections cannot be represented");

            if (m_arch == Arch::Qwen3 || m_arch == Arch::Qwen3Moe) {
                m_model.qkNorm = true;
                m_sources["qk_norm"] = m_defaultLocation;
                // Qwen3's default head_dim is 128, not hidden / heads.
                m_model.headDim =
                    integer("head_dim", 1, false, "the size of each attention head", "head_dim").value_or(128);
            } else {
                setInt(&ModelConfig::headDim,
                    integerOrNull("head_dim", 1, "the size of each attention head", "head_dim", 0));
            }
            if (m_arch == Arch::Qwen2) {
                m_model.qkvBias = true; // Qwen2's q, k and v projections always have a bias
                m_sources["qkv_bias"] = m_defaultLocation;
            }
            if (m_arch == Arch::Mistral || m_arch == Arch::Mixtral)
                checkSlidingWindow(false);
            else if (m_arch == Arch::Qwen2 || m_arch == Arch::Qwen3 || m_arch == Arch::Qwen3Moe)
                checkSlidingWindow(true);

            if (m_arch == Arch::Mixtral) {
                setInt(
                    &ModelConfig::experts, integer("num_local_experts", 1, true, "the experts per layer", "experts"));
                setInt(&ModelConfig::topK,
                    integer("num_experts_per_tok", 1, true, "the experts each token is routed to", "top_k"));
                m_model.expertFfnHidden = m_model.ffnHidden; // every feed-forward block is an expert
                m_sources["expert_ffn_hidden"] = m_sources["ffn_hidden"];
            } else if (m_arch == Arch::Qwen3Moe) {
                mapQwen3Moe();
            } else if (m_arch == Arch::DeepseekV3) {
                mapDeepseekV3();
            }
        }

        void mapQwen3Moe()
        {
            setInt(&ModelConfig::experts, integer("num_experts", 1, true, "the routed experts per layer", "experts"));
            setInt(&ModelConfig::topK,
                integer("num_experts_per_tok", 1, true, "the experts each token is routed to", "top_k"));
            setInt(&ModelConfig::expertFfnHidden,
                integer(
                    "moe_intermediate_size", 1, true, "the feed-forward width of each expert", "expert_ffn_hidden"));
            const JsonMember* step = m_root.member("decoder_sparse_step");
            if (const std::optional<int64_t> value =
                    integer("decoder_sparse_step", 1, false, "every how many layers one is MoE");
                value && *value != 1)
                error(step->value.location, "decoder_sparse_step",
                    "expected 1 (every layer a mixture of experts), found " + step->value.text
                        + ": MoE layers interleaved with dense layers cannot be represented");
            if (const JsonMember* dense = field("mlp_only_layers")) {
                if (dense->value.kind != JsonValue::Kind::Array)
                    error(dense->value.location, "mlp_only_layers",
                        "expected a list of layer indices, found " + describe(dense->value));
                else if (!dense->value.items.empty())
                    error(dense->value.location, "mlp_only_layers",
                        "expected [] (no dense layers), found a list of " + std::to_string(dense->value.items.size())
                            + ": dense layers among the MoE layers cannot be represented");
            }
            if (const JsonMember* shared = m_root.member("shared_expert_intermediate_size")) {
                m_used.emplace_back("shared_expert_intermediate_size");
                error(shared->keyLocation, "shared_expert_intermediate_size",
                    "Qwen3MoeForCausalLM has no shared expert; remove this field");
            }
        }

        void mapDeepseekV3()
        {
            setInt(
                &ModelConfig::experts, integer("n_routed_experts", 1, true, "the routed experts per layer", "experts"));
            setInt(&ModelConfig::topK,
                integer("num_experts_per_tok", 1, true, "the experts each token is routed to", "top_k"));
            setInt(&ModelConfig::expertFfnHidden,
                integer(
                    "moe_intermediate_size", 1, true, "the feed-forward width of each expert", "expert_ffn_hidden"));
            if (const std::optional<int64_t> shared =
                    integerOrNull("n_shared_experts", 0, "the always-on shared experts", "shared_expert_ffn_hidden", 0))
                m_model.sharedExpertFfnHidden = *shared * m_model.expertFfnHidden;
            setInt(&ModelConfig::firstDenseLayers,
                integer("first_k_dense_replace", 0, false, "the leading dense layers", "first_dense_layers"));
            if (m_model.firstDenseLayers > m_model.layers && m_model.layers > 0) {
                const JsonMember* m = m_root.member("first_k_dense_replace");
                error(m->value.location, "first_k_dense_replace",
                    "expected at most num_hidden_layers " + std::to_string(m_model.layers) + ", found "
                        + m->value.text);
            }
            const JsonMember* freq = m_root.member("moe_layer_freq");
            if (const std::optional<int64_t> value =
                    integer("moe_layer_freq", 1, false, "every how many layers one is MoE");
                value && *value != 1)
                error(freq->value.location, "moe_layer_freq",
                    "expected 1 (every layer after first_k_dense_replace a mixture of experts), found "
                        + freq->value.text + ": interleaved MoE layers cannot be represented");
            setInt(&ModelConfig::qLoraRank,
                integerOrNull("q_lora_rank", 1, "the rank of the compressed query", "q_lora_rank", 0));
            setInt(&ModelConfig::kvLoraRank,
                integer("kv_lora_rank", 1, true, "the rank of the compressed key/value", "kv_lora_rank"));
            setInt(&ModelConfig::qkNopeHeadDim,
                integer("qk_nope_head_dim", 1, true, "the per-head query/key size without RoPE", "qk_nope_head_dim"));
            setInt(&ModelConfig::qkRopeHeadDim,
                integer("qk_rope_head_dim", 1, true, "the per-head query/key size with RoPE", "qk_rope_head_dim"));
            setInt(&ModelConfig::vHeadDim, integer("v_head_dim", 1, true, "the per-head value size", "v_head_dim"));
            setInt(&ModelConfig::mtpModules,
                integer("num_nextn_predict_layers", 0, false, "the multi-token prediction modules", "mtp_modules"));
        }

        void mapGpt2()
        {
            m_model.family = Family::Gpt;
            m_sources["family"] = m_defaultLocation;
            setInt(&ModelConfig::layers, integer("n_layer", 1, true, "the number of decoder layers", "layers"));
            setInt(&ModelConfig::hidden, integer("n_embd", 1, true, "the model width", "hidden"));
            setInt(&ModelConfig::heads, integer("n_head", 1, true, "the number of attention heads", "heads"));
            m_model.kvHeads = m_model.heads;
            m_sources["kv_heads"] = m_sources["heads"];
            if (const std::optional<int64_t> inner =
                    integerOrNull("n_inner", 1, "the feed-forward width", "ffn_hidden", 0);
                inner && *inner > 0) {
                m_model.ffnHidden = *inner;
            } else {
                m_model.ffnHidden = 4 * m_model.hidden; // n_inner null or absent: 4 * n_embd
                if (!m_sources.count("ffn_hidden"))
                    m_sources["ffn_hidden"] = m_sources["hidden"];
            }
            setInt(&ModelConfig::vocab, integer("vocab_size", 1, true, "the vocabulary size", "vocab"));
            mapSeqLen("n_positions", true);
            m_model.tiedEmbeddings = boolean("tie_word_embeddings", "tied_embeddings").value_or(true);
            m_model.causalMask = true;
            checkActivation("activation_function", { "gelu_new", "gelu", "gelu_fast", "gelu_pytorch_tanh" },
                "a GELU feed-forward block, the only kind modelled for gpt");
            mustBeFalse("add_cross_attention", "cross-attention to an encoder cannot be represented");
        }

        void warnUnknown()
        {
            for (const JsonMember& m : m_root.members) {
                if (std::find(m_used.begin(), m_used.end(), m.key) != m_used.end() || isInformational(m.key))
                    continue;
                m_diagnostics.push_back(
                    { Severity::Warning, m.keyLocation.file, m.keyLocation.line, m.keyLocation.column, m.key,
                        "field \"" + m.key + "\" is not used by the " + m_architecture
                            + " import and was ignored; check that it does not change the architecture" });
            }
        }

        /// The model keys in the loader's order, each located at its source field.
        void emit(ConfigNode& keys) const
        {
            keys = {};
            keys.kind = ConfigNode::Kind::Map;
            keys.location = m_root.location;
            auto add = [&](std::string_view key, std::string value) {
                const auto found = m_sources.find(std::string(key));
                const SourceLocation where = found != m_sources.end() ? found->second : m_defaultLocation;
                ConfigNode node;
                node.kind = ConfigNode::Kind::Scalar;
                node.scalar = std::move(value);
                node.location = where;
                keys.entries.push_back({ std::string(key), where, std::move(node) });
            };
            auto integerKey = [&](std::string_view key, int64_t value) { add(key, std::to_string(value)); };
            auto boolKey = [&](std::string_view key, bool value) { add(key, value ? "true" : "false"); };
            const ModelConfig& m = m_model;
            add("family", toString(m.family));
            integerKey("layers", m.layers);
            integerKey("hidden", m.hidden);
            integerKey("ffn_hidden", m.ffnHidden);
            integerKey("heads", m.heads);
            integerKey("kv_heads", m.kvHeads);
            integerKey("vocab", m.vocab);
            integerKey("seq_len", m.seqLen);
            integerKey("experts", m.experts);
            integerKey("top_k", m.topK);
            integerKey("expert_ffn_hidden", m.expertFfnHidden);
            integerKey("shared_expert_ffn_hidden", m.sharedExpertFfnHidden);
            boolKey("causal_mask", m.causalMask);
            boolKey("tied_embeddings", m.tiedEmbeddings);
            add("rope_theta", formatNumber(m.ropeTheta));
            integerKey("head_dim", m.headDim);
            boolKey("qk_norm", m.qkNorm);
            boolKey("qkv_bias", m.qkvBias);
            integerKey("q_lora_rank", m.qLoraRank);
            integerKey("kv_lora_rank", m.kvLoraRank);
            integerKey("qk_nope_head_dim", m.qkNopeHeadDim);
            integerKey("qk_rope_head_dim", m.qkRopeHeadDim);
            integerKey("v_head_dim", m.vHeadDim);
            integerKey("first_dense_layers", m.firstDenseLayers);
            integerKey("mtp_modules", m.mtpModules);
        }

        const JsonValue& m_root;
        const HfImportOptions& m_options;
        std::vector<Diagnostic>& m_diagnostics;
        Arch m_arch = Arch::Llama;
        std::string m_architecture;
        SourceLocation m_defaultLocation;
        ModelConfig m_model;
        std::map<std::string, SourceLocation> m_sources; ///< model key -> the field it came from
        std::vector<std::string> m_used; ///< config.json fields read by the mapper
        bool m_failed = false;
    };

    HfImport importText(std::string_view text, const std::string& fileName, const HfImportOptions& options)
    {
        HfImport out;
        if (text.size() > kMaxHfConfigBytes) {
            out.diagnostics.push_back({ Severity::Error, fileName, 0, 0, {},
                "the Hugging Face config is larger than the limit of " + std::to_string(kMaxHfConfigBytes) + " bytes ("
                    + std::to_string(kMaxHfConfigBytes / 1024) + " KiB) for a config.json" });
            return out;
        }
        // A file that is not a JSON object at all (binary bytes, a password file linked as config.json) is described,
        // never quoted: not even its first character.
        if (!looksLikeText(text)) {
            out.diagnostics.push_back({ Severity::Error, fileName, 0, 0, {},
                "not a Hugging Face config.json: the file holds binary data, not JSON text" });
            return out;
        }
        {
            std::string_view body = text;
            if (body.substr(0, 3) == "\xEF\xBB\xBF")
                body.remove_prefix(3);
            // JSON of the wrong shape ("[1]", "") is the parser's to explain, at its position; text that does not
            // start like any JSON value is not JSON at all.
            const size_t first = body.find_first_not_of(" \t\r\n");
            const std::string_view start = first == std::string_view::npos ? std::string_view() : body.substr(first);
            const bool json = start.empty()
                || std::string_view("{[\"-0123456789").find(start[0]) != std::string_view::npos
                || start.substr(0, 4) == "true" || start.substr(0, 5) == "false" || start.substr(0, 4) == "null";
            if (!json) {
                out.diagnostics.push_back({ Severity::Error, fileName, 0, 0, {},
                    "not a Hugging Face config.json: a config.json is one JSON object, which starts with '{'" });
                return out;
            }
        }
        JsonValue root;
        try {
            root = JsonParser(text, fileName).parseDocument();
        } catch (const JsonError& e) {
            out.diagnostics.push_back(
                { Severity::Error, e.where.file, e.where.line, e.where.column, {}, "malformed JSON: " + e.message });
            return out;
        }
        HfMapper mapper(root, options, out.diagnostics);
        out.model = mapper.map(out.architecture, out.modelKeys);
        return out;
    }

    template <typename Import> HfImport guarded(const std::string& fileName, Import&& importIt)
    {
        try {
            return importIt();
        } catch (const std::exception& e) {
            HfImport out;
            out.diagnostics.push_back(
                { Severity::Error, fileName, 0, 0, {}, std::string("internal error while importing: ") + e.what() });
            return out;
        }
    }

} // namespace

HfImport importHfConfigText(std::string_view jsonText, const std::string& fileName, const HfImportOptions& options)
{
    return guarded(fileName, [&] { return importText(jsonText, fileName, options); });
}

HfImport importHfConfigFile(const std::string& path, const HfImportOptions& options)
{
    return guarded(path, [&] {
        std::string text;
        std::string problem = readBoundedFile(
            path, kMaxHfConfigBytes, { "Hugging Face config", "a Hugging Face config.json", "a config.json" }, text);
        if (!problem.empty()) {
            HfImport out;
            out.diagnostics.push_back({ Severity::Error, path, 0, 0, {}, std::move(problem) });
            return out;
        }
        return importText(text, path, options);
    });
}

const std::vector<std::string_view>& hfArchitectures()
{
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> out;
        for (const auto& [name, arch] : kArchitectures)
            out.push_back(name);
        return out;
    }();
    return names;
}

ConfigResult loadHfConfig(const std::string& path, const std::string& name, int64_t seqLen)
{
    // "<import-hf>" is no folder: a relative path stays relative to the working directory, and is reported as given.
    // Both strings are quoted for YAML (a folder name may hold a newline, a '#', a quote).
    const std::string yaml = "model:\n  hf_config: " + yamlQuoted(path)
        + "\ntraining:\n  global_batch: " + std::to_string(kHfImportGlobalBatch) + "\n";
    std::vector<std::string> overrides { "name=" + yamlQuoted(name) };
    if (seqLen > 0)
        overrides.push_back("model.seq_len=" + std::to_string(seqLen));
    return loadConfigText(yaml, "<import-hf>", overrides);
}

std::string hfDefaultName(const std::string& path)
{
    const std::filesystem::path p(path);
    std::string name = p.filename().string();
    if (name == "config.json") {
        std::filesystem::path folder = p.parent_path();
        std::error_code ec;
        if (folder.empty() || folder == ".")
            folder = std::filesystem::current_path(ec);
        name = folder.filename().string();
    } else {
        for (std::string_view suffix : { ".json", ".config" }) {
            if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
                name.resize(name.size() - suffix.size());
        }
    }
    // Letters of any script stay (a folder "modèle" gives "modèle", not "mod--le"); ASCII punctuation, spaces and
    // control bytes become '-'; a name that is not UTF-8 keeps only its ASCII letters and digits.
    const bool utf8 = looksLikeText(name);
    for (char& c : name) {
        const bool ascii = static_cast<unsigned char>(c) < 0x80;
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
            || c == '-' || c == '_' || (!ascii && utf8);
        if (!ok)
            c = '-';
    }
    if (name.empty() || name == "." || name == "..")
        name = "imported";
    return name;
}

} // namespace stagecraft
