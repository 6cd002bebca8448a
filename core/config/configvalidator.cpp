// SPDX-License-Identifier: MIT
#include "config/configvalidator.h"

#include "config/configwriter.h"
#include "config/gpupresets.h"
#include "config/pipelinelayout.h"
#include "config/programsize.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <numeric>
#include <string>
#include <string_view>

namespace stagecraft {

namespace {

    class Validator
    {
    public:
        explicit Validator(std::vector<Diagnostic>& out)
            : m_out(out)
        {
        }

        void error(std::string keyPath, std::string message)
        {
            add(Severity::Error, std::move(keyPath), std::move(message));
        }
        void warning(std::string keyPath, std::string message)
        {
            add(Severity::Warning, std::move(keyPath), std::move(message));
        }
        /// An error about the character at `offset` of the key's value text.
        void errorAt(std::string keyPath, size_t offset, std::string message)
        {
            add(Severity::Error, std::move(keyPath), std::move(message));
            m_out.back().columnOffset = static_cast<int>(std::min<size_t>(offset, 1u << 20));
        }

        /// Checks value > 0; returns whether it is.
        bool positive(const std::string& keyPath, int64_t value)
        {
            if (value > 0)
                return true;
            error(keyPath, "expected a positive integer, found " + std::to_string(value));
            return false;
        }

        bool nonNegative(const std::string& keyPath, int64_t value)
        {
            if (value >= 0)
                return true;
            error(keyPath, "expected a non-negative integer, found " + std::to_string(value));
            return false;
        }

    private:
        void add(Severity severity, std::string keyPath, std::string message)
        {
            m_out.push_back({ severity, {}, 0, 0, std::move(keyPath), std::move(message) });
        }

        std::vector<Diagnostic>& m_out;
    };

    std::string str(int64_t value)
    {
        return std::to_string(value);
    }

    /// a * b, or -1 when it overflows (both operands are positive where this is used).
    int64_t product(int64_t a, int64_t b)
    {
        int64_t result = 0;
        return __builtin_mul_overflow(a, b, &result) ? -1 : result;
    }

    /// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
    bool isUtf8(std::string_view text)
    {
        for (size_t i = 0; i < text.size();) {
            const auto c = static_cast<unsigned char>(text[i]);
            const int length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
            if (length == 0 || i + size_t(length) > text.size())
                return false;
            uint32_t code = length == 1 ? c : c & (0x7f >> length);
            for (int k = 1; k < length; ++k) {
                const auto next = static_cast<unsigned char>(text[i + size_t(k)]);
                if ((next & 0xc0) != 0x80)
                    return false;
                code = (code << 6) | (next & 0x3f);
            }
            static constexpr uint32_t kSmallest[] = { 0, 0, 0x80, 0x800, 0x10000 };
            if (code < kSmallest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
                return false;
            i += size_t(length);
        }
        return true;
    }

    void validateName(const Config& config, Validator& v)
    {
        // The name is the stem of the output files (core/export/traceexporter.cpp checkExportName): the same rules
        // here, so that a bad name is reported at its key and not only when exporting.
        const std::string& name = config.name;
        const std::string shown = "name \"" + name + "\"";
        if (name.empty()) {
            v.error("name", "expected a non-empty name (used for output file names)");
            return;
        }
        if (!isUtf8(name)) {
            v.error("name", "the name is not valid UTF-8; it names output files and appears in JSON");
            return;
        }
        for (const char c : name) {
            const auto u = static_cast<unsigned char>(c);
            if (u < 0x20 || u == 0x7f) {
                static constexpr char kHex[] = "0123456789abcdef";
                const std::string code = std::string("0x") + kHex[u >> 4] + kHex[u & 0xf];
                v.error("name",
                    "the name contains the control character " + code
                        + (u == '\t'     ? " (a tab)"
                                : u == 0 ? " (NUL)"
                                         : "")
                        + "; it names output files");
                return;
            }
        }
        if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos)
            v.error("name", shown + " must not contain a path separator ('/' or '\\'); it names output files");
        else if (name.find("..") != std::string::npos)
            v.error("name", shown + " must not contain \"..\"; it names output files");
        else if (name.find_first_not_of('.') == std::string::npos)
            v.error("name", shown + " must not be only dots; it names output files");
        else if (name.size() > kMaxNameBytes)
            v.error("name",
                "the name is " + str(int64_t(name.size())) + " bytes, more than the " + str(int64_t(kMaxNameBytes))
                    + " that fit in a file name with the suffixes added to it (a file name has at most 255 bytes)");
    }

    void validateAttention(const ModelConfig& m, Validator& v)
    {
        const std::string family = toString(m.family);
        for (const auto& [path, value] : { std::pair { "model.q_lora_rank", m.qLoraRank },
                 { "model.kv_lora_rank", m.kvLoraRank }, { "model.qk_nope_head_dim", m.qkNopeHeadDim },
                 { "model.qk_rope_head_dim", m.qkRopeHeadDim }, { "model.v_head_dim", m.vHeadDim } })
            v.nonNegative(path, value);
        if (m.qkNorm && m.family == Family::Gpt)
            v.error("model.qk_norm", "qk_norm is a RMSNorm of llama-style models; family gpt has none");
        if (m.qkvBias && m.family == Family::Gpt)
            v.warning("model.qkv_bias", "qkv_bias has no effect with family gpt (its projections always have biases)");
        if (!usesMla(m)) {
            for (const auto& [path, value] :
                { std::pair { "model.q_lora_rank", m.qLoraRank }, { "model.qk_nope_head_dim", m.qkNopeHeadDim },
                    { "model.qk_rope_head_dim", m.qkRopeHeadDim }, { "model.v_head_dim", m.vHeadDim } })
                if (value > 0)
                    v.error(path,
                        std::string(path).substr(6) + "=" + str(value)
                            + " belongs to multi-head latent attention, which needs model.kv_lora_rank > 0");
            return;
        }
        if (m.family == Family::Gpt)
            v.error("model.kv_lora_rank", "multi-head latent attention needs family llama or moe, not gpt");
        for (const auto& [path, value] : { std::pair { "model.qk_nope_head_dim", m.qkNopeHeadDim },
                 { "model.qk_rope_head_dim", m.qkRopeHeadDim }, { "model.v_head_dim", m.vHeadDim } })
            if (value <= 0)
                v.error(path,
                    "multi-head latent attention (kv_lora_rank=" + str(m.kvLoraRank) + ") needs "
                        + std::string(path).substr(6) + " > 0, found " + str(value));
        if (m.headDim != 0)
            v.error("model.head_dim",
                "with multi-head latent attention the head sizes are qk_nope_head_dim, qk_rope_head_dim and "
                "v_head_dim; head_dim must be 0, found "
                    + str(m.headDim));
        if (m.kvHeads != m.heads)
            v.error("model.kv_heads",
                "multi-head latent attention projects a key and a value for every head: kv_heads=" + str(m.kvHeads)
                    + " must equal heads=" + str(m.heads));
        if (m.qkNorm)
            v.error("model.qk_norm", "qk_norm is not part of multi-head latent attention");
        if (m.attention != AttentionKernel::Flash)
            v.error("model.attention",
                "multi-head latent attention is modelled with the fused kernel only: expected flash, found eager");
    }

    void validateModel(const ModelConfig& m, Validator& v)
    {
        v.positive("model.layers", m.layers);
        const bool hiddenOk = v.positive("model.hidden", m.hidden);
        v.positive("model.ffn_hidden", m.ffnHidden);
        const bool headsOk = v.positive("model.heads", m.heads);
        const bool kvOk = v.positive("model.kv_heads", m.kvHeads);
        v.positive("model.vocab", m.vocab);
        v.positive("model.seq_len", m.seqLen);
        v.nonNegative("model.experts", m.experts);
        v.nonNegative("model.top_k", m.topK);
        v.nonNegative("model.expert_ffn_hidden", m.expertFfnHidden);
        v.nonNegative("model.shared_expert_ffn_hidden", m.sharedExpertFfnHidden);
        if (!(m.ropeTheta >= 0))
            v.error("model.rope_theta", "expected a non-negative number, found " + formatNumber(m.ropeTheta));

        v.nonNegative("model.head_dim", m.headDim);
        const bool mla = usesMla(m);
        if (hiddenOk && headsOk && m.headDim == 0 && !mla && m.hidden % m.heads != 0)
            v.error("model.hidden",
                "hidden=" + str(m.hidden) + " is not divisible by heads=" + str(m.heads) + " (or give model.head_dim)");
        validateAttention(m, v);
        v.nonNegative("model.mtp_modules", m.mtpModules);
        if (headsOk && kvOk) {
            if (m.kvHeads > m.heads)
                v.error("model.kv_heads", "kv_heads=" + str(m.kvHeads) + " exceeds heads=" + str(m.heads));
            else if (m.heads % m.kvHeads != 0)
                v.error("model.heads", "heads=" + str(m.heads) + " is not divisible by kv_heads=" + str(m.kvHeads));
            if (m.family == Family::Gpt && m.kvHeads != m.heads)
                v.error("model.kv_heads",
                    "family gpt uses multi-head attention: kv_heads=" + str(m.kvHeads)
                        + " must equal heads=" + str(m.heads));
        }

        if (m.family == Family::Moe) {
            if (m.experts < 1)
                v.error("model.experts", "family moe needs experts >= 1, found " + str(m.experts));
            else if (m.topK < 1 || m.topK > m.experts)
                v.error("model.top_k",
                    "family moe needs 1 <= top_k <= experts=" + str(m.experts) + ", found top_k=" + str(m.topK));
            if (m.expertFfnHidden <= 0)
                v.error("model.expert_ffn_hidden",
                    "family moe needs expert_ffn_hidden > 0, found " + str(m.expertFfnHidden));
            if (m.firstDenseLayers < 0 || (m.layers > 0 && m.firstDenseLayers >= m.layers))
                v.error("model.first_dense_layers",
                    "expected 0 to layers-1 = " + str(m.layers - 1) + " dense layers before the MoE layers, found "
                        + str(m.firstDenseLayers));
            if (!(m.moeCapacityFactor >= 0))
                v.error("model.moe_capacity_factor",
                    "expected a non-negative number, found " + formatNumber(m.moeCapacityFactor));
            if (!(m.moeRoutingImbalance >= 1))
                v.error("model.moe_routing_imbalance",
                    "expected a factor of at least 1 (the hottest expert's tokens over the mean), found "
                        + formatNumber(m.moeRoutingImbalance));
        } else {
            const std::string family = toString(m.family);
            if (m.experts != 0)
                v.error("model.experts", "experts=" + str(m.experts) + " needs family moe (family is " + family + ")");
            if (m.topK != 0)
                v.error("model.top_k", "top_k=" + str(m.topK) + " needs family moe (family is " + family + ")");
            if (m.firstDenseLayers != 0)
                v.error("model.first_dense_layers",
                    "first_dense_layers=" + str(m.firstDenseLayers) + " needs family moe (family is " + family + ")");
            if (m.expertFfnHidden != 0 || m.sharedExpertFfnHidden != 0)
                v.warning(m.expertFfnHidden != 0 ? "model.expert_ffn_hidden" : "model.shared_expert_ffn_hidden",
                    "expert FFN sizes have no effect with family " + family);
        }
    }

    /// training.recompute_modules, with Megatron-LM's checks (transformer_config.py at d98e8a64) and one more: a
    /// module the model does not have would recompute nothing, which is a mistake rather than a plan.
    void validateRecomputeModules(const Config& c, Validator& v)
    {
        const TrainingConfig& t = c.training;
        const ModelConfig& m = c.model;
        const char* key = "training.recompute_modules";
        namespace rm = recompute_module;
        // Megatron-LM ignores the list without selective recompute; so do we, but say so (a preset's list stays
        // when --recompute switches the policy).
        if (t.recomputeModules != rm::kCoreAttn && t.recompute != Recompute::Selective && !isInference(c)) {
            v.warning(key,
                std::string("recompute_modules chooses what recompute selective re-runs; recompute is ")
                    + toString(t.recompute) + ", so the list is ignored");
            return;
        }
        if (t.recompute != Recompute::Selective)
            return;
        if (t.recomputeModules == 0) {
            v.error(key, "an empty list re-runs nothing: expected at least one module, or recompute none");
            return;
        }
        const bool moe = m.family == Family::Moe;
        auto absent = [&](uint8_t bit, bool present, const std::string& why) {
            if ((t.recomputeModules & bit) && !present)
                v.error(key, recomputeModuleNames(bit).front() + " " + why);
        };
        absent(rm::kMlaUpProj, usesMla(m),
            "needs multi-latent attention (model.kv_lora_rank > 0), as Megatron-LM requires");
        absent(rm::kMoe, moe, "needs a moe model: this model has no MoE layers");
        absent(rm::kMoeAct, moe, "needs a moe model: this model has no routed experts");
        absent(rm::kSharedExperts, moe && m.sharedExpertFfnHidden > 0,
            "needs a moe model with a shared expert (model.shared_expert_ffn_hidden > 0)");
        absent(rm::kMlp, !moe || m.firstDenseLayers > 0,
            "recomputes the MLP of dense layers, and every layer of this model is an MoE layer: use moe or "
            "moe_act");
    }

    void validateTraining(const Config& c, Validator& v)
    {
        const TrainingConfig& t = c.training;
        const bool globalOk = v.positive("training.global_batch", t.globalBatch);
        const bool microOk = v.positive("training.micro_batch", t.microBatch);
        if (globalOk && microOk && c.parallelism.dp > 0) {
            const int64_t perStep = product(t.microBatch, c.parallelism.dp);
            if (perStep < 0 || t.globalBatch % perStep != 0)
                v.error("training.global_batch",
                    "global_batch=" + str(t.globalBatch) + " is not divisible by micro_batch*dp = " + str(t.microBatch)
                        + "*" + str(c.parallelism.dp) + (perStep < 0 ? std::string() : " = " + str(perStep)));
        }
        if (t.optimizer != "adam")
            v.error("training.optimizer", "expected adam (the only optimizer modelled), found \"" + t.optimizer + "\"");
        // Megatron-LM keeps gradients either in fp32 or in the parameters' dtype (param_and_grad_buffer.py), and
        // reduces them in fp32 only from fp32 main gradients (arguments.py asserts it for
        // --accumulate-allreduce-grads-in-fp32): the reduction is never wider than the buffer it reduces.
        // FP8 training keeps its weights, and so its gradients, in bf16.
        const Precision weights = t.precision == Precision::Fp8 ? Precision::Bf16 : t.precision;
        const std::string precision = toString(weights);
        const std::string expected = weights == Precision::Fp32 ? std::string("fp32 (training.precision is fp32)")
            : t.precision == Precision::Fp8 ? std::string("fp32 or bf16 (fp8 training keeps bf16 weights)")
                                            : "fp32 or the training precision " + precision;
        const bool mainOk = t.mainGradDtype == Precision::Fp32 || t.mainGradDtype == weights;
        if (!mainOk)
            v.error("training.main_grad_dtype", "expected " + expected + ", found " + toString(t.mainGradDtype));
        if (t.gradReduceDtype != Precision::Fp32 && t.gradReduceDtype != weights)
            v.error("training.grad_reduce_dtype", "expected " + expected + ", found " + toString(t.gradReduceDtype));
        else if (mainOk && bytesPerElement(t.gradReduceDtype) > bytesPerElement(t.mainGradDtype))
            v.error("training.grad_reduce_dtype",
                std::string("expected ") + toString(t.mainGradDtype) + " or narrower: main_grad_dtype is "
                    + toString(t.mainGradDtype) + ", and a reduction in " + toString(t.gradReduceDtype)
                    + " would be wider than the gradients it reduces (Megatron-LM reduces in fp32 only from fp32 "
                      "main gradients), found "
                    + toString(t.gradReduceDtype));
        validateRecomputeModules(c, v);
    }

    /// Serving (workload: inference). The training keys that would change what a forward-only program is (ZeRO,
    /// recompute, the interleaved and split-backward schedules) are set to their serving values by
    /// withoutTrainingKeys() before anything is checked, each with a note (servingNotes()); the gradient and overlap
    /// keys only concern training and are ignored.
    void validateInference(const Config& c, Validator& v)
    {
        const InferenceConfig& in = c.inference;
        const ParallelismConfig& p = c.parallelism;
        v.positive("inference.batch", in.batch);
        v.nonNegative("inference.prompt_tokens", in.promptTokens);
        v.positive("inference.output_tokens", in.outputTokens);
        v.nonNegative("inference.decode_steps", in.decodeSteps);
        v.positive("inference.block_size", in.blockSize);
        const int64_t prompt = promptTokens(c);
        if (prompt <= 0)
            v.error("inference.prompt_tokens",
                "expected a positive prompt length (prompt_tokens, or model.seq_len when it is 0), found "
                    + str(prompt));
        // The context a sequence reaches: the prompt and every token generated after it. Past the model's own
        // seq_len (the positions it was trained for) the plan is still modelled, but the model may not serve it.
        const ModelConfig& model = c.model;
        if (in.promptTokens > 0 && in.outputTokens > 0 && model.seqLen > 0 && prompt <= (int64_t { 1 } << 40)
            && in.outputTokens <= (int64_t { 1 } << 40) && prompt + in.outputTokens - 1 > model.seqLen)
            v.warning("inference.output_tokens",
                "the context reaches prompt + output_tokens - 1 = " + str(prompt) + " + " + str(in.outputTokens)
                    + " - 1 = " + str(prompt + in.outputTokens - 1)
                    + " tokens, more than model.seq_len = " + str(model.seqLen) + " that the model was trained for");
        if (runsDecode(in) && in.outputTokens >= 1) {
            if (in.outputTokens < 2)
                v.error("inference.output_tokens",
                    std::string("phases ") + toString(in.phases)
                        + " needs output_tokens >= 2: the prefill computes the first token, decode steps the rest");
            else if (in.decodeSteps > in.outputTokens - 1)
                v.error("inference.decode_steps",
                    "decode_steps=" + str(in.decodeSteps) + " exceeds output_tokens - 1 = " + str(in.outputTokens - 1)
                        + " (the prefill computes the first of the output_tokens)");
        }
        if (in.batch > 0 && p.dp > 0 && p.pp > 0) {
            const int64_t split = product(p.dp, p.pp);
            if (split < 0 || in.batch % split != 0)
                v.error("inference.batch",
                    "batch=" + str(in.batch) + " is not divisible by dp*pp = " + str(p.dp) + "*" + str(p.pp)
                        + (split < 0 ? std::string() : " = " + str(split))
                        + " (each data-parallel replica splits its sequences into pp pipeline micro-batches)");
        }
        // A decode step routes one token per sequence: each data-parallel rank's (batch/pp/dp)*top_k routed tokens
        // are spread evenly over the experts (the uniform mean, as for training), which must come out whole.
        const ModelConfig& m = c.model;
        if (runsDecode(in) && m.family == Family::Moe && m.experts > 0 && m.topK > 0 && in.batch > 0 && p.dp > 0
            && p.pp > 0 && in.batch % (p.dp * p.pp) == 0) {
            const int64_t slots = product(in.batch / p.pp, m.topK);
            const int64_t over = product(m.experts, p.dp);
            if (slots > 0 && over > 0 && slots % over != 0) {
                v.error("inference.batch",
                    "a decode step routes (batch/pp)*top_k = " + str(slots) + " tokens, not divisible by experts*dp = "
                        + str(m.experts) + "*" + str(p.dp) + " (each rank's tokens spread evenly over the experts); "
                        + "the smallest batch that is: " + str(inferenceBatchStep(c)));
            }
        }
        if (in.arrival == RequestArrival::Trace && in.trace.empty())
            v.error("inference.trace", "arrival trace needs a CSV trace file (arrival, prompt tokens, output tokens)");
        if (in.prefillReplicas > 0 && in.phases != InferencePhases::Both)
            v.error("inference.prefill_replicas",
                std::string("disaggregated serving runs both phases on separate replicas; expected phases both, found ")
                    + toString(in.phases));
        if (in.speculativeTokens > 16)
            v.error("inference.speculative_tokens",
                "expected at most 16 draft tokens per step, found " + str(in.speculativeTokens));
        if (p.cp > 1 && runsDecode(in))
            v.error("parallelism.cp",
                "cp=" + str(p.cp) + " splits the prompt for the prefill; decode steps of one token are not "
                    + "context-parallel here: use phases prefill, or cp 1");
        if (p.cp > 0 && prompt > 0) {
            if (prompt % p.cp != 0)
                v.error(
                    "parallelism.cp", "cp=" + str(p.cp) + " does not divide the prompt of " + str(prompt) + " tokens");
            else if (p.sequenceParallel && p.tp > 0 && runsPrefill(in)) {
                const int64_t split = product(p.cp, p.tp);
                if (split < 0 || prompt % split != 0)
                    v.error("parallelism.sequence_parallel",
                        "sequence_parallel needs the prompt of " + str(prompt)
                            + " tokens divisible by cp*tp = " + str(p.cp) + "*" + str(p.tp));
            }
        }
        if (c.training.precision == Precision::Fp8)
            v.warning("training.precision",
                "precision fp8 is FP8 training (FP8 GEMMs with bf16 weights); FP8 serving is not modelled, so this "
                "serves in bf16 (inference.kv_cache_dtype fp8 keeps the KV cache in FP8)");
        if (c.model.mtpModules > 0)
            v.warning("model.mtp_modules",
                "inference leaves out the multi-token prediction modules (speculative decoding is not modelled)");
    }

    /// How the layers are cut over the pipeline stages, with Megatron-LM's rules (megatron/core/transformer/
    /// transformer_config.py, the uneven-PP and account_for_*_in_pipeline_split checks; training/arguments.py):
    /// the even split needs layers divisible by pp*v (with v = 1 Stagecraft also accepts a remainder, given to the
    /// first stages); first/last stage layers leave the middle stages an equal share divisible by v; with the
    /// embedding or loss counted as a layer, layers + 1 (or + 2) divides by pp*v; the two kinds do not combine.
    void validatePipelineSplit(const Config& c, Validator& v, bool ppOk, bool vsOk)
    {
        const ModelConfig& m = c.model;
        const ParallelismConfig& p = c.parallelism;
        const int64_t vs = vsOk ? pipelineVirtualStages(p) : 1;
        const bool uneven = p.firstStageLayers > 0 || p.lastStageLayers > 0;
        const bool accounted = p.embeddingInSplit || p.lossInSplit;
        if (!ppOk || m.layers <= 0)
            return;
        const std::string layers = "layers=" + str(m.layers);

        if (uneven && accounted) {
            v.error(p.embeddingInSplit ? "parallelism.account_for_embedding_in_pipeline_split"
                                       : "parallelism.account_for_loss_in_pipeline_split",
                std::string(p.embeddingInSplit ? "account_for_embedding_in_pipeline_split"
                                               : "account_for_loss_in_pipeline_split")
                    + " cannot be combined with first_stage_layers/last_stage_layers (Megatron-LM allows one kind "
                      "of uneven split)");
            return;
        }
        if (uneven) {
            const char* firstKey = "parallelism.first_stage_layers";
            const char* lastKey = "parallelism.last_stage_layers";
            const char* setKey = p.lastStageLayers > 0 ? lastKey : firstKey;
            if (p.pp == 1) {
                v.error(setKey,
                    std::string(p.lastStageLayers > 0 ? "last_stage_layers" : "first_stage_layers")
                        + " needs pipeline stages to split; pp=1");
                return;
            }
            const int64_t first = p.firstStageLayers, last = p.lastStageLayers;
            if (first + last > m.layers) {
                v.error(setKey,
                    first > 0 && last > 0
                        ? "first_stage_layers + last_stage_layers = " + str(first) + "+" + str(last) + " = "
                            + str(first + last) + " exceeds " + layers
                        : (first > 0 ? "first_stage_layers=" + str(first) : "last_stage_layers=" + str(last))
                            + " exceeds " + layers);
                return;
            }
            const int64_t middleStages = p.pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
            const int64_t middleLayers = m.layers - first - last;
            const std::string middle = "the " + str(middleLayers) + " layers left by first_stage_layers=" + str(first)
                + " and last_stage_layers=" + str(last);
            if (middleStages == 0 && middleLayers > 0)
                v.error(setKey,
                    "with pp=2 and both end stages given there are no middle stages for " + middle
                        + "; first_stage_layers + last_stage_layers must equal " + layers);
            else if (middleStages > 0 && middleLayers == 0)
                v.error(setKey,
                    "first_stage_layers + last_stage_layers = " + str(first + last) + " leave no layer for the "
                        + str(middleStages) + " middle stage" + (middleStages > 1 ? "s" : "") + " of pp=" + str(p.pp));
            else if (middleStages > 0 && middleLayers % middleStages != 0)
                v.error(setKey,
                    middle + " are not divisible by the " + str(middleStages) + " middle stage"
                        + (middleStages > 1 ? "s" : "") + " (pp=" + str(p.pp) + ")");
            else {
                // Interleaved: every stage's layers divide over its v chunks.
                const std::string perChunk = "schedule interleaved puts an equal share on each of the " + str(vs)
                    + " virtual stages of a pipeline stage: ";
                if (vs > 1 && first % vs != 0)
                    v.error(firstKey,
                        perChunk + "first_stage_layers=" + str(first) + " is not divisible by "
                            + "virtual_stages=" + str(vs));
                if (vs > 1 && last % vs != 0)
                    v.error(lastKey,
                        perChunk + "last_stage_layers=" + str(last) + " is not divisible by "
                            + "virtual_stages=" + str(vs));
                if (vs > 1 && middleStages > 0 && (middleLayers / middleStages) % vs != 0)
                    v.error("parallelism.virtual_stages",
                        perChunk + "the " + str(middleLayers / middleStages) + " layers of each middle stage are not "
                            + "divisible by virtual_stages=" + str(vs));
            }
            return;
        }
        const int64_t chunks = product(p.pp, vs);
        if (accounted) {
            const int64_t slots = m.layers + (p.embeddingInSplit ? 1 : 0) + (p.lossInSplit ? 1 : 0);
            const std::string counted = p.embeddingInSplit && p.lossInSplit ? "the embedding and the loss"
                : p.embeddingInSplit                                        ? "the embedding"
                                                                            : "the loss";
            if (chunks < 0 || slots % chunks != 0)
                v.error(p.embeddingInSplit ? "parallelism.account_for_embedding_in_pipeline_split"
                                           : "parallelism.account_for_loss_in_pipeline_split",
                    "with " + counted + " counted as a layer, " + layers + " + " + str(slots - m.layers) + " = "
                        + str(slots) + " must be divisible by "
                        + (vs > 1 ? "pp*virtual_stages = " + str(p.pp) + "*" + str(vs)
                                    + (chunks < 0 ? std::string() : " = " + str(chunks))
                                  : "pp=" + str(p.pp)));
            return;
        }
        if (p.pp > m.layers)
            v.error("parallelism.pp", "pp=" + str(p.pp) + " exceeds " + layers + " (a stage needs a layer)");
        else if (vs > 1 && (chunks < 0 || m.layers % chunks != 0))
            v.error("parallelism.virtual_stages",
                "schedule interleaved needs " + layers + " divisible by pp*virtual_stages = " + str(p.pp) + "*"
                    + str(vs) + (chunks < 0 ? std::string() : " = " + str(chunks))
                    + " (or first_stage_layers/last_stage_layers, or the embedding/loss counted as layers, "
                      "that make the split even)");
    }

    /// A pipeline_layout: its syntax, its fit to the model and pp (checkLayout), no shorthand beside it, and
    /// virtual_stages 1 or the layout's chunks / pp.
    void validatePipelineLayout(const Config& c, Validator& v, bool ppOk, bool vsOk)
    {
        const ParallelismConfig& p = c.parallelism;
        const char* key = "parallelism.pipeline_layout";
        LayoutError problem;
        const std::optional<PipelineLayout> layout = PipelineLayout::parse(p.pipelineLayout, problem);
        if (!layout) {
            v.errorAt(key, problem.offset, problem.message);
            return;
        }
        if (p.firstStageLayers > 0 || p.lastStageLayers > 0 || p.embeddingInSplit || p.lossInSplit)
            v.error(key,
                "a layout says where every layer goes: first_stage_layers, last_stage_layers and the account_for_ "
                "keys are shorthands for one and cannot be given beside it (Megatron-LM refuses them together)");
        if (!ppOk || c.model.layers <= 0)
            return;
        if (const std::optional<LayoutError> e = checkLayout(*layout, c.model.layers, c.model.mtpModules, p.pp)) {
            v.errorAt(key, e->offset, e->message);
            return;
        }
        const int64_t chunks = layout->chunkCount();
        if (vsOk && p.virtualStages > 1 && p.virtualStages * p.pp != chunks)
            v.error("parallelism.virtual_stages",
                "virtual_stages=" + str(p.virtualStages) + " but the layout has " + str(chunks) + " chunks, "
                    + str(chunks / p.pp) + " per stage with pp=" + str(p.pp)
                    + " (leave virtual_stages at 1: the layout decides)");
    }

    /// The schedule against the plan: what each schedule needs of pp, the micro-batches and the chunks, and the
    /// interleaved schedule's micro-batch groups (Megatron-LM's rules in forward_backward_pipelining_with_interleaving,
    /// schedules.py, commit d98e8a64).
    void validateSchedule(const Config& c, Validator& v, bool ppOk, bool vsOk)
    {
        const ParallelismConfig& p = c.parallelism;
        if (!ppOk || !vsOk || isInference(c))
            return;
        const int64_t vs = pipelineVirtualStages(p);
        const std::string sched = std::string("schedule ") + toString(p.schedule);
        const char* vsKey = p.pipelineLayout.empty() ? "parallelism.virtual_stages" : "parallelism.pipeline_layout";
        if (!p.pipelineLayout.empty() || p.virtualStages > 1) {
            // The chunks per rank the plan asks for: the layout's, or virtual_stages as written.
            const int64_t asked = p.pipelineLayout.empty() ? p.virtualStages : vs;
            if (asked > 1 && p.schedule != Schedule::Interleaved && p.schedule != Schedule::DualPipeV)
                v.error(vsKey,
                    (p.pipelineLayout.empty() ? "virtual_stages=" + str(asked) + " needs"
                                              : str(asked) + " chunks per rank need")
                        + " schedule interleaved, found " + sched
                        + (asked == 2 ? " (or dualpipev, whose V is 2 chunks per rank)" : ""));
            if (p.schedule == Schedule::DualPipeV && vs != 2)
                v.error(vsKey, "schedule dualpipev runs exactly 2 chunks per rank (a V), found " + str(vs));
        }
        if (p.schedule == Schedule::Interleaved && vs == 1)
            v.warning("parallelism.schedule", "schedule interleaved with virtual_stages=1 is plain 1f1b");
        const TrainingConfig& t = c.training;
        const int64_t perStep = product(t.microBatch, p.dp);
        if (perStep <= 0 || t.globalBatch <= 0 || t.globalBatch % perStep != 0)
            return; // the batch checks say why
        const int64_t m = t.globalBatch / perStep;
        const std::string mb = "the micro-batches per iteration, global_batch/(micro_batch*dp) = " + str(m);
        if (p.schedule == Schedule::Interleaved && vs > 1) {
            const int64_t n = interleavedGroupSize(p.pp, m, p.microBatchGroupSize);
            const char* groupKey =
                p.microBatchGroupSize > 0 ? "parallelism.microbatch_group_size" : "parallelism.schedule";
            const std::string nText = sched + ": "
                + (p.microBatchGroupSize > 0 ? "microbatch_group_size=" + str(p.microBatchGroupSize)
                                             : "the default micro-batch group size pp=" + str(n));
            if (m < p.pp)
                v.error(groupKey, sched + " needs at least pp=" + str(p.pp) + " micro-batches, found " + mb);
            else if (p.microBatchGroupSize > 0 && (p.microBatchGroupSize < p.pp || p.microBatchGroupSize > m))
                v.error(groupKey,
                    nText + " must lie between pp=" + str(p.pp) + " and " + mb
                        + " (Megatron-LM's contiguous micro-batches of a virtual stage)");
            else if (m % n != 0 && m % n < p.pp)
                v.error(groupKey,
                    nText + " leaves a last group of " + str(m % n) + " micro-batches (" + mb
                        + "), fewer than pp=" + str(p.pp)
                        + " (Megatron-LM refuses it: the pipeline would wait on dependencies); choose a "
                          "microbatch_group_size that divides the micro-batches or leaves at least pp");
        } else if (p.microBatchGroupSize > 0) {
            v.warning("parallelism.microbatch_group_size",
                "microbatch_group_size has an effect only with the interleaved schedule (" + sched + ")");
        }
        if (p.schedule == Schedule::DualPipe) {
            if (p.pp % 2 != 0)
                v.error("parallelism.pp",
                    "schedule dualpipe pairs stage s with stage pp-1-s: pp=" + str(p.pp) + " must be even");
            if (m % 2 != 0 || m < 2 * p.pp)
                v.error("parallelism.schedule",
                    "schedule dualpipe feeds half the micro-batches from each end: " + mb
                        + " must be even and at least 2*pp = " + str(2 * p.pp) + " (DualPipe.step's assertion)");
        }
        if (p.schedule == Schedule::DualPipeV && m < 2 * p.pp)
            v.error("parallelism.schedule",
                "schedule dualpipev needs " + mb + " to be at least 2*pp = " + str(2 * p.pp)
                    + " (DualPipeV.step's assertion)");
        if (p.overlapMoeExpertParallelComm) {
            const char* key = "parallelism.overlap_moe_expert_parallel_comm";
            if (c.model.family != Family::Moe || p.ep <= 1)
                v.error(key,
                    "overlap_moe_expert_parallel_comm hides the expert-parallel all-to-all: it needs a moe "
                    "model with ep > 1 (Megatron-Core asserts expert_model_parallel_size > 1)");
            if (p.pp > 1 && !(p.schedule == Schedule::Interleaved && vs > 1) && p.schedule != Schedule::DualPipe
                && p.schedule != Schedule::DualPipeV)
                v.error(key,
                    "with pp > 1 the overlapped all-to-all needs virtual stages (schedule interleaved, as "
                    "Megatron-Core requires) or schedule dualpipe/dualpipev, found "
                        + sched);
            if (c.training.recompute == Recompute::Full)
                v.error(key,
                    "overlap_moe_expert_parallel_comm does not combine with recompute full (Megatron-Core "
                    "asserts recompute_granularity != full)");
        }
    }

    void validateParallelism(const Config& c, Validator& v)
    {
        const ModelConfig& m = c.model;
        const ParallelismConfig& p = c.parallelism;
        const bool dpOk = v.positive("parallelism.dp", p.dp);
        const bool tpOk = v.positive("parallelism.tp", p.tp);
        const bool ppOk = v.positive("parallelism.pp", p.pp);
        const bool cpOk = v.positive("parallelism.cp", p.cp);
        const bool epOk = v.positive("parallelism.ep", p.ep);
        const bool vsOk = v.positive("parallelism.virtual_stages", p.virtualStages);
        // Program nodes keep the pipeline chunk and peer stage in 16 bits.
        if (ppOk && vsOk && product(p.pp, p.virtualStages) > 32767)
            v.error(p.virtualStages > 1 ? "parallelism.virtual_stages" : "parallelism.pp",
                "pp*virtual_stages = " + str(p.pp) + "*" + str(p.virtualStages)
                    + " exceeds the supported maximum of 32767 pipeline chunks");

        if (dpOk && tpOk && ppOk && cpOk) {
            int64_t world = product(product(p.dp, p.tp), product(p.pp, p.cp));
            if (world < 0 || world > kMaxWorldSize)
                v.error("parallelism.dp",
                    "world size dp*tp*pp*cp = " + str(p.dp) + "*" + str(p.tp) + "*" + str(p.pp) + "*" + str(p.cp)
                        + " exceeds the supported maximum of " + str(kMaxWorldSize) + " GPUs");
        }

        if (tpOk) {
            auto tpDivides = [&](const char* what, int64_t value) {
                if (value > 0 && value % p.tp != 0)
                    v.error("parallelism.tp", "tp=" + str(p.tp) + " does not divide " + what + "=" + str(value));
            };
            tpDivides("heads", m.heads);
            tpDivides("kv_heads", m.kvHeads);
            tpDivides("ffn_hidden", m.ffnHidden);
            if (m.family == Family::Moe) {
                if (p.expertTp != 1) // expert_tp 1: whole experts on every tp rank
                    tpDivides("expert_ffn_hidden", m.expertFfnHidden);
                tpDivides("shared_expert_ffn_hidden", m.sharedExpertFfnHidden);
            }
        }
        if (p.pipelineLayout.empty())
            validatePipelineSplit(c, v, ppOk, vsOk);
        else
            validatePipelineLayout(c, v, ppOk, vsOk);
        validateSchedule(c, v, ppOk, vsOk);
        if (epOk && dpOk && p.dp % p.ep != 0)
            v.error("parallelism.ep",
                "ep=" + str(p.ep) + " does not divide dp=" + str(p.dp)
                    + " (experts are split within data-parallel ranks)");
        if (epOk && m.family == Family::Moe && m.experts > 0 && m.experts % p.ep != 0)
            v.error("parallelism.ep", "ep=" + str(p.ep) + " does not divide experts=" + str(m.experts));
        if (epOk && p.ep > 1 && m.family != Family::Moe)
            v.warning("parallelism.ep",
                "ep=" + str(p.ep) + " has no effect: family " + std::string(toString(m.family)) + " has no experts");

        if (epOk && m.family == Family::Moe && m.experts > 0 && m.topK > 0 && m.moeRoutingImbalance > 1) {
            // One rank's experts cannot receive more than every token (each reaches an expert at most once).
            const double reachable = std::min(static_cast<double>(p.ep), static_cast<double>(m.experts) / m.topK);
            if (m.moeRoutingImbalance > reachable && !(m.moeCapacityFactor > 0 && m.moeCapacityFactor <= reachable))
                v.warning("model.moe_routing_imbalance",
                    "moe_routing_imbalance=" + formatNumber(m.moeRoutingImbalance)
                        + " exceeds what the experts of one rank can receive, min(ep, experts/top_k) = "
                        + formatNumber(reachable) + " times the mean; the programs use " + formatNumber(reachable));
        }
        if (v.nonNegative("parallelism.expert_tp", p.expertTp) && tpOk && p.expertTp != 0 && p.expertTp != p.tp) {
            if (p.tp % p.expertTp != 0)
                v.error("parallelism.expert_tp",
                    "expert_tp=" + str(p.expertTp) + " does not divide tp=" + str(p.tp)
                        + " (the expert layers fold their tensor-parallel groups into the tp groups)");
            else if (p.expertTp != 1)
                // A faithful model needs tp split into expert_tp x tp/expert_tp mesh axes, as dp is split into
                // ep x edp; until then only the two ends are modelled rather than approximated.
                v.error("parallelism.expert_tp",
                    "expert_tp=" + str(p.expertTp) + " with tp=" + str(p.tp)
                        + " is not supported: expected 1 (whole experts on every tp rank) or tp (0); the mesh has "
                          "no sub-group of tp for the expert layers");
            else if (m.family != Family::Moe)
                v.warning("parallelism.expert_tp",
                    "expert_tp=1 has no effect: family " + std::string(toString(m.family)) + " has no experts");
        }
        if (p.sequenceParallel && tpOk && p.tp == 1)
            v.warning("parallelism.sequence_parallel", "sequence_parallel has no effect with tp=1");
        if (cpOk && m.seqLen > 0 && !isInference(c)) { // inference splits the prompt (validateInference)
            // A rank's micro_batch*seq_len/(cp [*tp with sequence parallelism]) tokens, top_k routes each, are
            // spread evenly over the experts (the uniform mean the model graph routes): the count must come out
            // whole, as for a decode step.
            const int64_t mb = c.training.microBatch;
            const int64_t seqSplit = product(p.cp, p.sequenceParallel && tpOk ? p.tp : 1);
            const int64_t routed =
                seqSplit > 0 && m.seqLen % seqSplit == 0 && m.family == Family::Moe && m.topK > 0 && mb > 0
                ? product(product(mb, m.seqLen / seqSplit), m.topK)
                : -1;
            if (m.seqLen % p.cp != 0)
                v.error("parallelism.cp", "cp=" + str(p.cp) + " does not divide seq_len=" + str(m.seqLen));
            else if (routed > 0 && m.experts > 0 && routed % m.experts != 0)
                v.error("parallelism.cp",
                    "an MoE layer routes micro_batch*seq_len/" + std::string(seqSplit == p.cp ? "cp" : "(cp*tp)")
                        + "*top_k = " + str(mb) + "*" + str(m.seqLen) + "/" + str(seqSplit) + "*" + str(m.topK) + " = "
                        + str(routed) + " tokens per rank, not divisible by experts=" + str(m.experts)
                        + " (each rank's tokens spread evenly over the experts)");
            else if (p.sequenceParallel && tpOk) {
                const int64_t split = product(p.cp, p.tp);
                if (split < 0 || m.seqLen % split != 0)
                    v.error("parallelism.sequence_parallel",
                        "sequence_parallel needs seq_len=" + str(m.seqLen) + " divisible by cp*tp = " + str(p.cp) + "*"
                            + str(p.tp) + (split < 0 ? std::string() : " = " + str(split)));
            }
        }

        if (p.zero < 0 || p.zero > 3)
            v.error("parallelism.zero", "expected one of 0, 1, 2, 3, found " + str(p.zero));

        std::array<int, kMeshAxisCount> seen {};
        bool rankOrderOk = p.rankOrder.size() == size_t(kMeshAxisCount);
        for (MeshAxis axis : p.rankOrder) {
            const auto index = size_t(axis);
            if (index >= seen.size() || ++seen[index] > 1)
                rankOrderOk = false;
        }
        if (!rankOrderOk) {
            std::string problem;
            for (int i = 0; i < kMeshAxisCount; ++i) {
                const std::string axis = toString(MeshAxis(i));
                if (seen[size_t(i)] == 0)
                    problem += (problem.empty() ? "" : ", ") + axis + " is missing";
                else if (seen[size_t(i)] > 1)
                    problem += (problem.empty() ? "" : ", ") + axis + " appears " + str(seen[size_t(i)]) + " times";
            }
            v.error("parallelism.rank_order",
                "expected each of dp, tp, cp, ep, pp exactly once, found " + str(int64_t(p.rankOrder.size()))
                    + " axes (" + problem + ")");
        }
        if (p.gradientBucketBytes < 0)
            v.error("parallelism.gradient_bucket_mb",
                "expected a non-negative size, found " + str(p.gradientBucketBytes) + " bytes");
    }

    /// A topology's levels fit together: the NVLink domain tiles the nodes (or the nodes tile it), it has a
    /// bandwidth, the rails divide the NICs, a leaf has a port facing NICs.
    void validateTopology(const ClusterConfig& cl, Validator& v)
    {
        const TopologyConfig& t = cl.topology;
        if (!t.enabled())
            return;
        const int64_t gpn = std::max<int64_t>(1, cl.gpusPerNode);
        if (t.nvlinkDomain % gpn != 0 && gpn % t.nvlinkDomain != 0)
            v.error("cluster.nvlink_domain",
                "expected a multiple or a divisor of cluster.gpus_per_node=" + str(gpn) + ", found "
                    + str(t.nvlinkDomain));
        if (!(t.nvlinkBandwidthGbps > 0) && t.nvlinkDomain > 1)
            v.error("cluster.nvlink_bandwidth_gbps",
                "expected a positive number (GB/s) for an NVLink domain of " + str(t.nvlinkDomain) + " GPUs, found "
                    + formatNumber(t.nvlinkBandwidthGbps));
        if (t.rails > 0 && t.nicsPerNode % t.rails != 0)
            v.error("cluster.rails",
                "expected a divisor of cluster.nics_per_node=" + str(t.nicsPerNode) + ", found " + str(t.rails));
        if (t.leafOversubscription < 1)
            v.error("cluster.leaf_oversubscription",
                "expected 1 or more (ports down per port up), found " + formatNumber(t.leafOversubscription));
        if (t.spineOversubscription < 1)
            v.error(
                "cluster.spine_oversubscription", "expected 1 or more, found " + formatNumber(t.spineOversubscription));
    }

    void validateCluster(const ClusterConfig& cl, Validator& v)
    {
        if (cl.gpu.empty())
            v.error("cluster.gpu", "expected a GPU name such as h100-sxm, found an empty string");
        else if (!gpuPresetText(cl.gpu))
            v.error("cluster.gpu", unknownGpuText(cl.gpu));
        v.positive("cluster.gpus_per_node", cl.gpusPerNode);
        if (!(cl.intraNodeBandwidthGbps > 0))
            v.error("cluster.intra_node_bandwidth_gbps",
                "expected a positive number (GB/s), found " + formatNumber(cl.intraNodeBandwidthGbps));
        if (!(cl.interNodeBandwidthGbps > 0))
            v.error("cluster.inter_node_bandwidth_gbps",
                "expected a positive number (GB/s), found " + formatNumber(cl.interNodeBandwidthGbps));
        validateTopology(cl, v);
    }

} // namespace

namespace {

    void validateProgramSize(const Config& config, Validator& v)
    {
        // What the plan costs is known before anything is built: refuse a plan beyond the limit, naming the field
        // that drives it (layers, or micro-batches per rank; decode steps when serving), the estimate and what to
        // change. The limit bounds what is materialized at once: one pipeline stage's program (stages are built,
        // summarized and measured one by one), of its kept micro-batches when the synthesis compresses them.
        const bool compressed = validateCompressedProgramSize();
        const int64_t nodes = builtStageNodes(config, compressed);
        if (nodes <= config.maxProgramNodes)
            return;
        const int64_t stageLayers = largestStageLayers(config);
        const double megabytes = static_cast<double>(nodes) * 200.0 / 1e6; // ~200 B a node, measured by tests/bench
        char size[64];
        std::snprintf(size, sizeof size, "%.3g", megabytes);
        std::string key, passes, advice;
        if (isInference(config)) {
            const int64_t steps = decodeSteps(config.inference);
            const bool stepsDrive = steps >= stageLayers;
            key = stepsDrive ? "inference.decode_steps" : "model.layers";
            passes = groupedCount(steps) + " decode steps";
            advice = stepsDrive ? "write fewer decode steps to the programs (inference.decode_steps; the estimate "
                                  "extrapolates the rest of the generation)"
                                : "use fewer layers per stage (more pipeline stages)";
        } else {
            const TrainingConfig& t = config.training;
            const int64_t perStep = std::max<int64_t>(1, t.microBatch) * std::max<int64_t>(1, config.parallelism.dp);
            int64_t period = 1;
            const int64_t kept = compressed ? compressedMicroBatches(config, &period) : 0;
            const int64_t microBatches = kept > 0 ? kept + period : std::max<int64_t>(1, t.globalBatch / perStep);
            key = stageLayers >= microBatches ? "model.layers" : "training.global_batch";
            passes = groupedCount(microBatches) + " micro-batches per rank";
            advice = "use fewer layers per stage or fewer micro-batches per rank (global_batch / (micro_batch * dp))";
        }
        const std::string extra = programLimitAdvice();
        v.error(key,
            "this plan needs about " + groupedCount(nodes) + " program nodes on its largest pipeline stage ("
                + groupedCount(stageLayers) + " layers x " + passes + "; about " + size
                + " MB to synthesize), more than the limit of " + groupedCount(config.maxProgramNodes) + " per stage; "
                + advice + (extra.empty() ? "" : ", or " + extra));
    }

    /// A note for each training-only key withoutTrainingKeys() changed in `c`, so that a training preset switched
    /// to inference synthesizes, and says what it left out.
    void servingNotes(const Config& c, std::vector<Diagnostic>& out)
    {
        const ParallelismConfig& p = c.parallelism;
        auto note = [&](std::string keyPath, std::string message) {
            out.push_back({ Severity::Note, {}, 0, 0, std::move(keyPath), std::move(message) });
        };
        if (p.zero != 0)
            note("parallelism.zero",
                "zero=" + str(p.zero) + " shards training state; ignored for serving (weights are held whole)");
        if (c.training.recompute != Recompute::None)
            note("training.recompute",
                std::string("recompute ") + toString(c.training.recompute)
                    + " re-runs the forward before a backward; ignored for serving (no backward)");
        if (p.schedule != Schedule::OneFOneB || p.virtualStages > 1)
            note(p.schedule == Schedule::OneFOneB ? "parallelism.virtual_stages" : "parallelism.schedule",
                std::string("schedule ") + toString(p.schedule) + " with virtual_stages " + str(p.virtualStages)
                    + " orders training micro-batches; ignored for serving, which passes each request's micro-batch "
                      "through the stages once per step (1f1b, one virtual stage"
                    + (p.pipelineLayout.empty() ? std::string(")") : std::string(", the even layer split)")));
    }

} // namespace

int64_t inferenceBatchStep(const Config& config)
{
    const ParallelismConfig& p = config.parallelism;
    const ModelConfig& m = config.model;
    if (p.dp <= 0 || p.pp <= 0)
        return 0;
    int64_t perMicroBatch = p.dp;
    if (runsDecode(config.inference) && m.family == Family::Moe && m.experts > 0 && m.topK > 0) {
        const int64_t over = product(m.experts, p.dp);
        if (over <= 0)
            return 0;
        const int64_t spread = over / std::gcd(m.topK, over);
        const int64_t common = product(p.dp / std::gcd(p.dp, spread), spread);
        if (common <= 0)
            return 0;
        perMicroBatch = common;
    }
    const int64_t step = product(perMicroBatch, p.pp);
    return step > 0 ? step : 0;
}

std::vector<Diagnostic> validateConfig(const Config& config)
{
    if (isInference(config)) {
        const Config serving = withoutTrainingKeys(config);
        if (!(serving == config)) {
            std::vector<Diagnostic> out = validateConfig(serving);
            servingNotes(config, out);
            return out;
        }
    }
    std::vector<Diagnostic> out;
    Validator v(out);
    validateName(config, v);
    validateModel(config.model, v);
    if (isInference(config))
        validateInference(config, v);
    else
        validateTraining(config, v);
    validateParallelism(config, v);
    validateCluster(config.cluster, v);
    if (!hasErrors(out))
        validateProgramSize(config, v);
    return out;
}

} // namespace stagecraft
