// SPDX-License-Identifier: MIT
#include "config/configvalidator.h"

#include "config/configwriter.h"
#include "config/gpupresets.h"
#include "config/programsize.h"

#include <algorithm>
#include <array>
#include <cstdio>
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

        if (hiddenOk && headsOk && m.hidden % m.heads != 0)
            v.error("model.hidden", "hidden=" + str(m.hidden) + " is not divisible by heads=" + str(m.heads));
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
        } else {
            const std::string family = toString(m.family);
            if (m.experts != 0)
                v.error("model.experts", "experts=" + str(m.experts) + " needs family moe (family is " + family + ")");
            if (m.topK != 0)
                v.error("model.top_k", "top_k=" + str(m.topK) + " needs family moe (family is " + family + ")");
            if (m.expertFfnHidden != 0 || m.sharedExpertFfnHidden != 0)
                v.warning(m.expertFfnHidden != 0 ? "model.expert_ffn_hidden" : "model.shared_expert_ffn_hidden",
                    "expert FFN sizes have no effect with family " + family);
        }
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
        const std::string precision = toString(t.precision);
        const std::string expected = t.precision == Precision::Fp32 ? std::string("fp32 (training.precision is fp32)")
                                                                    : "fp32 or the training precision " + precision;
        const bool mainOk = t.mainGradDtype == Precision::Fp32 || t.mainGradDtype == t.precision;
        if (!mainOk)
            v.error("training.main_grad_dtype", "expected " + expected + ", found " + toString(t.mainGradDtype));
        if (t.gradReduceDtype != Precision::Fp32 && t.gradReduceDtype != t.precision)
            v.error("training.grad_reduce_dtype", "expected " + expected + ", found " + toString(t.gradReduceDtype));
        else if (mainOk && bytesPerElement(t.gradReduceDtype) > bytesPerElement(t.mainGradDtype))
            v.error("training.grad_reduce_dtype",
                std::string("expected ") + toString(t.mainGradDtype) + " or narrower: main_grad_dtype is "
                    + toString(t.mainGradDtype) + ", and a reduction in " + toString(t.gradReduceDtype)
                    + " would be wider than the gradients it reduces (Megatron-LM reduces in fp32 only from fp32 "
                      "main gradients), found "
                    + toString(t.gradReduceDtype));
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
                tpDivides("expert_ffn_hidden", m.expertFfnHidden);
                tpDivides("shared_expert_ffn_hidden", m.sharedExpertFfnHidden);
            }
        }
        if (ppOk && m.layers > 0 && p.pp > m.layers)
            v.error(
                "parallelism.pp", "pp=" + str(p.pp) + " exceeds layers=" + str(m.layers) + " (a stage needs a layer)");
        if (epOk && dpOk && p.dp % p.ep != 0)
            v.error("parallelism.ep",
                "ep=" + str(p.ep) + " does not divide dp=" + str(p.dp)
                    + " (experts are split within data-parallel ranks)");
        if (epOk && m.family == Family::Moe && m.experts > 0 && m.experts % p.ep != 0)
            v.error("parallelism.ep", "ep=" + str(p.ep) + " does not divide experts=" + str(m.experts));
        if (epOk && p.ep > 1 && m.family != Family::Moe)
            v.warning("parallelism.ep",
                "ep=" + str(p.ep) + " has no effect: family " + std::string(toString(m.family)) + " has no experts");

        if (p.sequenceParallel && tpOk && p.tp == 1)
            v.warning("parallelism.sequence_parallel", "sequence_parallel has no effect with tp=1");
        if (cpOk && m.seqLen > 0) {
            if (m.seqLen % p.cp != 0)
                v.error("parallelism.cp", "cp=" + str(p.cp) + " does not divide seq_len=" + str(m.seqLen));
            else if (p.sequenceParallel && tpOk) {
                const int64_t split = product(p.cp, p.tp);
                if (split < 0 || m.seqLen % split != 0)
                    v.error("parallelism.sequence_parallel",
                        "sequence_parallel needs seq_len=" + str(m.seqLen) + " divisible by cp*tp = " + str(p.cp) + "*"
                            + str(p.tp) + (split < 0 ? std::string() : " = " + str(split)));
            }
        }

        if (vsOk) {
            if (p.virtualStages > 1 && p.schedule != Schedule::Interleaved)
                v.error("parallelism.virtual_stages",
                    "virtual_stages=" + str(p.virtualStages) + " needs schedule interleaved, found schedule "
                        + toString(p.schedule));
            if (p.schedule == Schedule::Interleaved && ppOk && m.layers > 0) {
                const int64_t chunks = product(p.pp, p.virtualStages);
                if (chunks < 0 || m.layers % chunks != 0)
                    v.error("parallelism.virtual_stages",
                        "schedule interleaved needs layers=" + str(m.layers)
                            + " divisible by pp*virtual_stages = " + str(p.pp) + "*" + str(p.virtualStages)
                            + (chunks < 0 ? std::string() : " = " + str(chunks)));
            }
            if (p.schedule == Schedule::Interleaved && p.virtualStages == 1)
                v.warning("parallelism.schedule", "schedule interleaved with virtual_stages=1 is plain 1f1b");
            // Megatron-LM's interleaved 1F1B walks micro-batches in groups of pp.
            const TrainingConfig& t = c.training;
            const int64_t perStep = product(t.microBatch, p.dp);
            if (p.schedule == Schedule::Interleaved && p.virtualStages > 1 && ppOk && perStep > 0
                && t.globalBatch % perStep == 0 && (t.globalBatch / perStep) % p.pp != 0)
                v.error("parallelism.schedule",
                    "schedule interleaved needs the micro-batches per iteration, global_batch/(micro_batch*dp) = "
                        + str(t.globalBatch / perStep) + ", to be a multiple of pp=" + str(p.pp));
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
    }

} // namespace

namespace {

    void validateProgramSize(const Config& config, Validator& v)
    {
        // What the plan costs is known before anything is built: refuse a plan beyond the limit, naming the field
        // that drives it (layers, or micro-batches per rank), the estimate and how to raise the limit.
        const int64_t nodes = estimatedProgramNodes(config);
        if (nodes <= config.maxProgramNodes)
            return;
        const TrainingConfig& t = config.training;
        const int64_t perStep = std::max<int64_t>(1, t.microBatch) * std::max<int64_t>(1, config.parallelism.dp);
        const int64_t microBatches = std::max<int64_t>(1, t.globalBatch / perStep);
        const bool layersDrive = config.model.layers >= microBatches;
        const double megabytes = static_cast<double>(nodes) * 550.0 / 1e6;
        char size[64];
        std::snprintf(size, sizeof size, "%.3g", megabytes);
        v.error(layersDrive ? "model.layers" : "training.global_batch",
            "this plan needs about " + str(nodes) + " program nodes (" + str(config.model.layers) + " layers x "
                + str(microBatches) + " micro-batches per rank; about " + size
                + " MB to synthesize), more than the limit of " + str(config.maxProgramNodes)
                + "; use fewer layers or micro-batches per rank (global_batch / (micro_batch * dp)), or raise the "
                  "limit with --max-nodes");
    }

} // namespace

std::vector<Diagnostic> validateConfig(const Config& config)
{
    std::vector<Diagnostic> out;
    Validator v(out);
    validateName(config, v);
    validateModel(config.model, v);
    validateTraining(config, v);
    validateParallelism(config, v);
    validateCluster(config.cluster, v);
    if (!hasErrors(out))
        validateProgramSize(config, v);
    return out;
}

} // namespace stagecraft
