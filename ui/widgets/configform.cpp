// SPDX-License-Identifier: MIT
#include "widgets/configform.h"

#include "config/clusterpresets.h"
#include "config/configloader.h"
#include "config/configvalidator.h"
#include "config/topologypresets.h"
#include "config/workloadswitch.h"
#include "estimate/gpuspec.h"
#include "widgets/int64spinbox.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleValidator>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QStyle>
#include <QVBoxLayout>
#include <cmath>
#include <optional>
#include <tuple>

namespace stagecraft {

namespace {

    enum class FieldKind
    {
        Integer,
        Choice,
        Flag,
        Text
    };

    constexpr qint64 kMaxSize = qint64(1) << 40;

    /// Which workload a row belongs to (config.workload): the other's rows are hidden.
    enum class Shown
    {
        Always,
        Training, ///< a training-only key that serving ignores: hidden for inference
        TrainingUnlessSet, ///< one serving refuses when set: hidden for inference while at its default
        Inference ///< an `inference:` key: hidden for training
    };

    /// How one YAML key is shown and edited. Values travel as qint64: counts, enum indices, 0/1 for flags.
    struct FieldSpec
    {
        QString keyPath;
        QString label;
        QString help;
        FieldKind kind = FieldKind::Integer;
        qint64 minimum = 1;
        qint64 maximum = kMaxSize;
        qint64 step = 1; ///< 0: double and halve
        bool moeOnly = false; ///< row shown only for family moe (or when the value is set)
        Shown shown = Shown::Always;
        QStringList choices; ///< Choice: the YAML spellings, value = index
        QStringList suggestions; ///< Text: offered values
        std::function<qint64(const Config&)> get;
        std::function<void(Config&, qint64)> set;
        std::function<QString(const Config&)> getText;
        std::function<void(Config&, const QString&)> setText;
        double decimalMaximum = 0; ///< Text edited as a decimal: its largest value (0: not a decimal)
        /// What the field shows while its value is 0 and 0 means "automatic": the value in force ("auto (4)").
        std::function<QString(const Config&)> automatic;
    };

    /// `spec`, showing `inForce(config)` as "auto (…)" while its value is 0.
    FieldSpec automaticAt0(FieldSpec spec, std::function<QString(const Config&)> inForce)
    {
        spec.automatic = [inForce = std::move(inForce)](
                             const Config& c) { return QObject::tr("auto (%1)").arg(inForce(c)); };
        return spec;
    }

    /// The in-force figure of a GPU-preset efficiency (`member` of the preset of cluster.gpu).
    std::function<QString(const Config&)> gpuFigure(double GpuSpec::*member)
    {
        return [member](const Config& c) {
            const std::optional<GpuSpec> gpu = gpuPreset(c.cluster.gpu);
            return gpu ? QString::number((*gpu).*member, 'g', 3) : QObject::tr("the GPU preset's");
        };
    }

    /// A field bound to `(config.*section).*member`.
    template <typename Section, typename T>
    FieldSpec bound(QString keyPath, QString label, QString help, Section Config::*section, T Section::*member)
    {
        FieldSpec spec;
        spec.keyPath = std::move(keyPath);
        spec.label = std::move(label);
        spec.help = std::move(help);
        spec.get = [section, member](const Config& c) { return static_cast<qint64>(c.*section.*member); };
        spec.set = [section, member](Config& c, qint64 v) { (c.*section).*member = static_cast<T>(v); };
        if constexpr (std::is_same_v<T, bool>) {
            spec.kind = FieldKind::Flag;
        } else if constexpr (std::is_enum_v<T>) {
            spec.kind = FieldKind::Choice;
        }
        return spec;
    }

    FieldSpec integer(FieldSpec spec, qint64 minimum, qint64 maximum, qint64 step)
    {
        spec.minimum = minimum;
        spec.maximum = maximum;
        spec.step = step;
        return spec;
    }

    FieldSpec doubling(FieldSpec spec, qint64 maximum = kMaxSize)
    {
        return integer(std::move(spec), 1, maximum, 0);
    }

    FieldSpec trainingOnly(FieldSpec spec)
    {
        spec.shown = Shown::Training;
        return spec;
    }

    FieldSpec refusedForInference(FieldSpec spec)
    {
        spec.shown = Shown::TrainingUnlessSet;
        return spec;
    }

    FieldSpec inferenceOnly(FieldSpec spec)
    {
        spec.shown = Shown::Inference;
        return spec;
    }

    FieldSpec moe(FieldSpec spec)
    {
        spec.moeOnly = true;
        spec.minimum = 0;
        return spec;
    }

    template <typename Enum, int Count> QStringList enumChoices()
    {
        QStringList choices;
        for (int i = 0; i < Count; ++i)
            choices << QString::fromLatin1(toString(static_cast<Enum>(i)));
        return choices;
    }

    template <typename Enum, int Count> FieldSpec choice(FieldSpec spec)
    {
        spec.kind = FieldKind::Choice;
        spec.choices = enumChoices<Enum, Count>();
        return spec;
    }

    /// A decimal field bound to `(config.cluster).*member`, edited as text ("0.8"). The field takes only digits;
    /// text that is not a number in the loader's range for the key (clusterDecimalRange) leaves the value as it was.
    FieldSpec decimal(QString keyPath, QString label, QString help, double ClusterConfig::*member)
    {
        const std::optional<DecimalRange> found = clusterDecimalRange(keyPath.toStdString());
        if (!found)
            qFatal("configform: %s is no decimal cluster key", qPrintable(keyPath));
        const DecimalRange range = *found;
        FieldSpec spec;
        spec.keyPath = std::move(keyPath);
        spec.label = std::move(label);
        spec.help = std::move(help);
        spec.kind = FieldKind::Text;
        spec.decimalMaximum = range.maximum;
        spec.getText = [member](const Config& c) { return QString::number(c.cluster.*member, 'g', 6); };
        spec.setText = [member, range](Config& c, const QString& text) {
            if (text.trimmed().isEmpty() && range.zeroAllowed) {
                c.cluster.*member = 0; // an empty field: automatic
                return;
            }
            bool ok = false;
            const double value = text.trimmed().toDouble(&ok);
            if (ok && std::isfinite(value) && (range.zeroAllowed ? value >= 0 : value > 0) && value <= range.maximum)
                c.cluster.*member = value;
        };
        return spec;
    }

    struct Group
    {
        QString title;
        std::vector<FieldSpec> fields;
        QString inferenceTitle; ///< the title while config.workload is inference; empty = `title`
    };

    /// cluster.topology: the preset and the fabric's main figures (config/topologyconfig.h).
    Group topologyGroup()
    {
        Group g { QObject::tr("Network topology"), {}, {} };
        FieldSpec preset;
        preset.keyPath = QStringLiteral("cluster.topology");
        preset.label = QObject::tr("Topology");
        preset.help = QObject::tr("The fabric from the GPU up (NVLink domain, rails, leaves, spines); collectives are "
                                  "then priced as NCCL runs them on it. Empty: two bandwidths (the Cluster group)");
        preset.kind = FieldKind::Text;
        preset.suggestions << QString();
        for (const std::string& name : topologyPresetNames())
            preset.suggestions << QString::fromStdString(name);
        preset.getText = [](const Config& c) { return QString::fromStdString(c.cluster.topology.preset); };
        preset.setText = [](Config& c, const QString& text) {
            const std::string name = text.trimmed().toStdString();
            if (name.empty())
                c.cluster.topology = TopologyConfig {};
            else if (const TopologyConfig* figures = topologyPreset(name))
                c.cluster.topology = *figures;
        };
        g.fields.push_back(std::move(preset));
        auto integer = [](const char* key, QString label, QString help, int64_t TopologyConfig::*member,
                           qint64 minimum) {
            FieldSpec f;
            f.keyPath = QString::fromLatin1(key);
            f.label = std::move(label);
            f.help = std::move(help);
            f.kind = FieldKind::Integer;
            f.minimum = minimum;
            f.maximum = qint64(1) << 20;
            f.get = [member](const Config& c) { return qint64(c.cluster.topology.*member); };
            f.set = [member](Config& c, qint64 v) { c.cluster.topology.*member = v; };
            return f;
        };
        g.fields.push_back(integer("cluster.nvlink_domain", QObject::tr("NVLink domain"),
            QObject::tr("GPUs sharing one NVLink/NVSwitch domain (8 in a DGX, 72 in an NVL72 rack); 0 = no topology"),
            &TopologyConfig::nvlinkDomain, 0));
        g.fields.push_back(integer("cluster.nics_per_node", QObject::tr("NICs per node"),
            QObject::tr("Network interfaces per node"), &TopologyConfig::nicsPerNode, 1));
        g.fields.push_back(integer("cluster.rails", QObject::tr("Rails"),
            QObject::tr("Rails of a rail-optimized fabric; 0 = a leaf serves whole nodes"), &TopologyConfig::rails, 0));
        g.fields.push_back(integer("cluster.planes", QObject::tr("Planes"),
            QObject::tr("Independent network planes, each NIC in one"), &TopologyConfig::planes, 1));
        auto decimalOf = [](const char* key, QString label, QString help, double TopologyConfig::*member) {
            const DecimalRange range = *clusterDecimalRange(key);
            FieldSpec f;
            f.keyPath = QString::fromLatin1(key);
            f.label = std::move(label);
            f.help = std::move(help);
            f.kind = FieldKind::Text;
            f.decimalMaximum = range.maximum;
            f.getText = [member](const Config& c) { return QString::number(c.cluster.topology.*member, 'g', 6); };
            f.setText = [member, range](Config& c, const QString& text) {
                bool ok = false;
                const double value = text.trimmed().toDouble(&ok);
                if (ok && std::isfinite(value) && (range.zeroAllowed ? value >= 0 : value > 0)
                    && value <= range.maximum)
                    c.cluster.topology.*member = value;
            };
            return f;
        };
        g.fields.push_back(decimalOf("cluster.nvlink_bandwidth_gbps", QObject::tr("NVLink GB/s (NCCL)"),
            QObject::tr("NVLink bandwidth per GPU and direction as NCCL reaches it"),
            &TopologyConfig::nvlinkBandwidthGbps));
        g.fields.push_back(decimalOf("cluster.nic_bandwidth_gbps", QObject::tr("NIC GB/s"),
            QObject::tr("Bandwidth per NIC and direction (400 Gb/s = 50)"), &TopologyConfig::nicBandwidthGbps));
        g.fields.push_back(decimalOf("cluster.leaf_oversubscription", QObject::tr("Leaf oversubscription"),
            QObject::tr("Ports down per port up at a leaf (2 = 2:1)"), &TopologyConfig::leafOversubscription));
        g.fields.push_back(decimalOf("cluster.spine_oversubscription", QObject::tr("Core oversubscription"),
            QObject::tr("Pod-to-core oversubscription above the spines"), &TopologyConfig::spineOversubscription));
        return g;
    }

    std::vector<Group> formGroups()
    {
        using C = Config;
        const qint64 maxDegree = kMaxWorldSize;
        std::vector<Group> groups;

        Group workload { QObject::tr("Workload"), {}, {} };
        FieldSpec kind;
        kind.keyPath = QStringLiteral("workload");
        kind.label = QObject::tr("Workload");
        kind.help = QObject::tr("training: one iteration (forward, backward, optimizer step); inference: serving, a "
                                "prefill and decode steps with a KV cache");
        kind.kind = FieldKind::Choice;
        kind.choices = enumChoices<Workload, 2>();
        kind.get = [](const Config& c) { return static_cast<qint64>(c.workload); };
        // A batch the other workload accepts comes with the switch (switchWorkload), in the same undo step.
        kind.set = [](Config& c, qint64 v) { c = switchWorkload(c, static_cast<Workload>(v)); };
        workload.fields.push_back(std::move(kind));
        workload.fields.push_back(
            inferenceOnly(doubling(bound(QStringLiteral("inference.batch"), QObject::tr("Concurrent sequences"),
                QObject::tr("Sequences served at once over all data-parallel replicas"), &C::inference,
                &InferenceConfig::batch))));
        workload.fields.push_back(inferenceOnly(
            automaticAt0(integer(bound(QStringLiteral("inference.prompt_tokens"), QObject::tr("Prompt tokens"),
                                     QObject::tr("Tokens of each prompt; 0 = model.seq_len"), &C::inference,
                                     &InferenceConfig::promptTokens),
                             0, kMaxSize, 128),
                [](const Config& c) { return QString::number(promptTokens(c)); })));
        workload.fields.push_back(
            inferenceOnly(integer(bound(QStringLiteral("inference.output_tokens"), QObject::tr("Output tokens"),
                                      QObject::tr("Tokens generated per sequence (the first by "
                                                  "the prefill, the rest by decode steps)"),
                                      &C::inference, &InferenceConfig::outputTokens),
                1, kMaxSize, 16)));
        workload.fields.push_back(inferenceOnly(choice<InferencePhases, 3>(bound(QStringLiteral("inference.phases"),
            QObject::tr("Phases"),
            QObject::tr("prefill, decode (against a resident cache of the prompt) or both, as the programs hold them"),
            &C::inference, &InferenceConfig::phases))));
        workload.fields.push_back(inferenceOnly(
            automaticAt0(integer(bound(QStringLiteral("inference.decode_steps"), QObject::tr("Decode steps"),
                                     QObject::tr("Decode steps written to the programs; 0 (auto) = "
                                                 "min(4, output tokens - 1)"),
                                     &C::inference, &InferenceConfig::decodeSteps),
                             0, 1 << 20, 1),
                [](const Config& c) { return QString::number(decodeSteps(c.inference)); })));
        workload.fields.push_back(
            inferenceOnly(choice<KvCacheDtype, 2>(bound(QStringLiteral("inference.kv_cache_dtype"),
                QObject::tr("KV cache dtype"), QObject::tr("Element type of the cached keys and values"), &C::inference,
                &InferenceConfig::kvCacheDtype))));
        workload.fields.push_back(
            inferenceOnly(doubling(bound(QStringLiteral("inference.block_size"), QObject::tr("Cache block"),
                QObject::tr("Paged-cache block in tokens: a sequence's cache grows by whole blocks"), &C::inference,
                &InferenceConfig::blockSize))));
        groups.push_back(std::move(workload));

        Group model { QObject::tr("Model"), {}, {} };
        model.fields.push_back(choice<Family, 3>(bound(QStringLiteral("model.family"), QObject::tr("Family"),
            QObject::tr("gpt (multi-head attention, GELU MLP), llama (GQA, SwiGLU), moe (llama with routed experts)"),
            &C::model, &ModelConfig::family)));
        model.fields.push_back(integer(bound(QStringLiteral("model.layers"), QObject::tr("Layers"),
                                           QObject::tr("Transformer blocks"), &C::model, &ModelConfig::layers),
            1, 100000, 1));
        model.fields.push_back(integer(bound(QStringLiteral("model.hidden"), QObject::tr("Hidden"),
                                           QObject::tr("Model width (elements)"), &C::model, &ModelConfig::hidden),
            1, kMaxSize, 256));
        model.fields.push_back(integer(bound(QStringLiteral("model.ffn_hidden"), QObject::tr("FFN hidden"),
                                           QObject::tr("Inner size of the MLP"), &C::model, &ModelConfig::ffnHidden),
            1, kMaxSize, 256));
        model.fields.push_back(integer(bound(QStringLiteral("model.heads"), QObject::tr("Heads"),
                                           QObject::tr("Attention (query) heads"), &C::model, &ModelConfig::heads),
            1, 1 << 20, 1));
        model.fields.push_back(
            integer(bound(QStringLiteral("model.kv_heads"), QObject::tr("KV heads"),
                        QObject::tr("Key/value heads (GQA); equal to heads for gpt"), &C::model, &ModelConfig::kvHeads),
                1, 1 << 20, 1));
        model.fields.push_back(integer(bound(QStringLiteral("model.vocab"), QObject::tr("Vocabulary"),
                                           QObject::tr("Vocabulary size (tokens)"), &C::model, &ModelConfig::vocab),
            1, kMaxSize, 128));
        model.fields.push_back(doubling(bound(QStringLiteral("model.seq_len"), QObject::tr("Sequence length"),
            QObject::tr("Tokens per sequence"), &C::model, &ModelConfig::seqLen)));
        model.fields.push_back(moe(doubling(bound(QStringLiteral("model.experts"), QObject::tr("Experts"),
            QObject::tr("Routed experts per layer (moe only)"), &C::model, &ModelConfig::experts))));
        model.fields.push_back(
            moe(integer(bound(QStringLiteral("model.top_k"), QObject::tr("Top-k"),
                            QObject::tr("Experts each token is routed to (moe only)"), &C::model, &ModelConfig::topK),
                0, 1 << 20, 1)));
        model.fields.push_back(
            moe(integer(bound(QStringLiteral("model.expert_ffn_hidden"), QObject::tr("Expert FFN hidden"),
                            QObject::tr("Inner MLP size of each routed expert (moe only)"), &C::model,
                            &ModelConfig::expertFfnHidden),
                0, kMaxSize, 256)));
        model.fields.push_back(
            moe(integer(bound(QStringLiteral("model.shared_expert_ffn_hidden"), QObject::tr("Shared expert FFN"),
                            QObject::tr("Inner MLP size of the always-on shared expert; 0 = none"), &C::model,
                            &ModelConfig::sharedExpertFfnHidden),
                0, kMaxSize, 256)));
        model.fields.push_back(bound(QStringLiteral("model.causal_mask"), QObject::tr("Causal mask"),
            QObject::tr("Attention FLOPs of a causal kernel (half the S\u00d7S work)"), &C::model,
            &ModelConfig::causalMask));
        model.fields.push_back(bound(QStringLiteral("model.tied_embeddings"), QObject::tr("Tied embeddings"),
            QObject::tr("The output head shares the input embedding matrix"), &C::model, &ModelConfig::tiedEmbeddings));
        model.fields.push_back(choice<AttentionKernel, 2>(bound(QStringLiteral("model.attention"),
            QObject::tr("Attention kernel"),
            QObject::tr("flash: fused, keeps output and log-sum-exp, recomputes the scores in backward; eager: keeps "
                        "the S\u00d7S scores"),
            &C::model, &ModelConfig::attention)));
        model.fields.push_back(
            automaticAt0(integer(bound(QStringLiteral("model.head_dim"), QObject::tr("Head size"),
                                     QObject::tr("Size of each query/key/value head; 0 = hidden / heads"), &C::model,
                                     &ModelConfig::headDim),
                             0, 1 << 20, 16),
                [](const Config& c) { return QString::number(qkHeadDim(c.model)); }));
        model.fields.push_back(bound(QStringLiteral("model.qk_norm"), QObject::tr("QK norm"),
            QObject::tr("RMSNorm over each query and key head before RoPE (Qwen3)"), &C::model, &ModelConfig::qkNorm));
        model.fields.push_back(bound(QStringLiteral("model.qkv_bias"), QObject::tr("QKV bias"),
            QObject::tr("The query, key and value projections have a bias (Qwen2)"), &C::model, &ModelConfig::qkvBias));
        model.fields.push_back(
            moe(integer(bound(QStringLiteral("model.first_dense_layers"), QObject::tr("First dense layers"),
                            QObject::tr("Leading layers with a dense FFN instead of experts (DeepSeek-V3: 3)"),
                            &C::model, &ModelConfig::firstDenseLayers),
                0, 100000, 1)));
        groups.push_back(std::move(model));

        Group mla { QObject::tr("Latent attention (MLA)"), {}, {} };
        mla.fields.push_back(integer(bound(QStringLiteral("model.kv_lora_rank"), QObject::tr("KV latent rank"),
                                         QObject::tr("Multi-head latent attention when > 0 (DeepSeek-V3: 512)"),
                                         &C::model, &ModelConfig::kvLoraRank),
            0, 1 << 20, 64));
        mla.fields.push_back(integer(bound(QStringLiteral("model.q_lora_rank"), QObject::tr("Query latent rank"),
                                         QObject::tr("Compressed query rank; 0 = full-rank query (DeepSeek-V3: 1536)"),
                                         &C::model, &ModelConfig::qLoraRank),
            0, 1 << 20, 64));
        mla.fields.push_back(integer(bound(QStringLiteral("model.qk_nope_head_dim"), QObject::tr("QK head (no RoPE)"),
                                         QObject::tr("Per-head query/key size without RoPE (DeepSeek-V3: 128)"),
                                         &C::model, &ModelConfig::qkNopeHeadDim),
            0, 1 << 20, 16));
        mla.fields.push_back(integer(bound(QStringLiteral("model.qk_rope_head_dim"), QObject::tr("QK head (RoPE)"),
                                         QObject::tr("Per-head query/key size with RoPE (DeepSeek-V3: 64)"), &C::model,
                                         &ModelConfig::qkRopeHeadDim),
            0, 1 << 20, 16));
        mla.fields.push_back(
            integer(bound(QStringLiteral("model.v_head_dim"), QObject::tr("Value head"),
                        QObject::tr("Per-head value size (DeepSeek-V3: 128)"), &C::model, &ModelConfig::vHeadDim),
                0, 1 << 20, 16));
        groups.push_back(std::move(mla));

        Group training { QObject::tr("Training"), {}, QObject::tr("Precision") };
        training.fields.push_back(trainingOnly(doubling(bound(QStringLiteral("training.global_batch"),
            QObject::tr("Global batch"), QObject::tr("Sequences per iteration over all data-parallel replicas"),
            &C::training, &TrainingConfig::globalBatch))));
        training.fields.push_back(trainingOnly(doubling(bound(QStringLiteral("training.micro_batch"),
            QObject::tr("Micro-batch"), QObject::tr("Sequences per micro-batch per data-parallel replica"),
            &C::training, &TrainingConfig::microBatch))));
        training.fields.push_back(
            choice<Precision, 4>(bound(QStringLiteral("training.precision"), QObject::tr("Precision"),
                QObject::tr("16-bit means mixed precision with fp32 master weights; fp8: bf16 mixed precision whose "
                            "linear layers run in FP8 (Transformer Engine), training only"),
                &C::training, &TrainingConfig::precision)));
        training.fields.push_back(trainingOnly(
            choice<Precision, 3>(bound(QStringLiteral("training.main_grad_dtype"), QObject::tr("Main gradients"),
                QObject::tr("Dtype of the gradient buffer the backward pass accumulates into (Megatron's main_grad): "
                            "fp32 or the training precision; fp32 under bf16 gives 18 bytes per parameter"),
                &C::training, &TrainingConfig::mainGradDtype))));
        training.fields.push_back(trainingOnly(choice<Precision, 3>(bound(QStringLiteral("training.grad_reduce_dtype"),
            QObject::tr("Gradient reduction"),
            QObject::tr("Dtype of the data-parallel gradient all-reduce / reduce-scatter: fp32 (Megatron's default) "
                        "or the training precision (--grad-reduce-in-bf16); not wider than the main gradients"),
            &C::training, &TrainingConfig::gradReduceDtype))));
        training.fields.push_back(refusedForInference(choice<Recompute, 3>(bound(QStringLiteral("training.recompute"),
            QObject::tr("Recompute"), QObject::tr("Activation recomputation: none, selective (attention) or full"),
            &C::training, &TrainingConfig::recompute))));
        FieldSpec modules;
        modules.keyPath = QStringLiteral("training.recompute_modules");
        modules.label = QObject::tr("Recompute modules");
        modules.help = QObject::tr("What selective recompute re-runs, by Megatron-LM's --recompute-modules names: "
                                   "core_attn, layernorm, mla_up_proj, mlp, moe, moe_act, shared_experts. A text "
                                   "with an unknown name leaves the value as it was");
        modules.kind = FieldKind::Text;
        modules.suggestions = { QStringLiteral("core_attn"), QStringLiteral("core_attn, mlp"),
            QStringLiteral("layernorm, mla_up_proj, moe_act"), QStringLiteral("mla_up_proj, mlp, moe") };
        modules.getText = [](const Config& c) {
            QStringList names;
            for (const std::string& name : recomputeModuleNames(c.training.recomputeModules))
                names << QString::fromStdString(name);
            return names.join(QStringLiteral(", "));
        };
        modules.setText = [](Config& c, const QString& text) {
            static const QRegularExpression separators(QStringLiteral("[\\s,\\[\\]]+"));
            uint8_t mask = 0;
            for (const QString& word : text.split(separators, Qt::SkipEmptyParts)) {
                const uint8_t bit = recomputeModuleBit(word.toStdString());
                if (bit == 0)
                    return; // not a module name: keep the value
                mask |= bit;
            }
            c.training.recomputeModules = mask;
        };
        training.fields.push_back(trainingOnly(std::move(modules)));
        groups.push_back(std::move(training));

        Group parallelism { QObject::tr("Parallelism"), {}, {} };
        const auto degree = [&](const char* key, QString label, QString help, int64_t ParallelismConfig::*member) {
            return doubling(
                bound(QString::fromLatin1(key), std::move(label), std::move(help), &C::parallelism, member), maxDegree);
        };
        parallelism.fields.push_back(degree("parallelism.dp", QObject::tr("Data (dp)"),
            QObject::tr("Data-parallel replicas (includes ep)"), &ParallelismConfig::dp));
        parallelism.fields.push_back(degree("parallelism.tp", QObject::tr("Tensor (tp)"),
            QObject::tr("Tensor-parallel degree; divides heads, kv_heads and ffn_hidden"), &ParallelismConfig::tp));
        parallelism.fields.push_back(degree("parallelism.pp", QObject::tr("Pipeline (pp)"),
            QObject::tr("Pipeline stages; each rank class is one stage"), &ParallelismConfig::pp));
        parallelism.fields.push_back(degree("parallelism.cp", QObject::tr("Context (cp)"),
            QObject::tr("Context-parallel degree; divides seq_len"), &ParallelismConfig::cp));
        parallelism.fields.push_back(degree("parallelism.ep", QObject::tr("Expert (ep)"),
            QObject::tr("Expert-parallel degree, carved out of dp (ep divides dp)"), &ParallelismConfig::ep));
        parallelism.fields.push_back(bound(QStringLiteral("parallelism.sequence_parallel"),
            QObject::tr("Sequence parallel"), QObject::tr("Megatron sequence parallelism alongside tp"),
            &C::parallelism, &ParallelismConfig::sequenceParallel));
        FieldSpec zero = bound(QStringLiteral("parallelism.zero"), QObject::tr("ZeRO stage"),
            QObject::tr("Sharding of optimizer state (1), gradients (2) and weights (3, FSDP) over dp"),
            &C::parallelism, &ParallelismConfig::zero);
        zero.kind = FieldKind::Choice;
        zero.choices = QStringList { QObject::tr("0 \u2014 none"), QObject::tr("1 \u2014 optimizer state"),
            QObject::tr("2 \u2014 + gradients"), QObject::tr("3 \u2014 + weights (FSDP)") };
        parallelism.fields.push_back(refusedForInference(std::move(zero)));
        parallelism.fields.push_back(choice<Schedule, 6>(bound(QStringLiteral("parallelism.schedule"),
            QObject::tr("Schedule"),
            QObject::tr("Pipeline schedule: gpipe, 1f1b, interleaved 1f1b, zb1p (zero-bubble ZB-H1: weight gradients "
                        "fill the bubbles), dualpipe (DeepSeek-V3: both ends, two chunks per rank) or dualpipev "
                        "(DualPipe cut in half: a V of two chunks)"),
            &C::parallelism, &ParallelismConfig::schedule)));
        parallelism.fields.push_back(
            integer(bound(QStringLiteral("parallelism.virtual_stages"), QObject::tr("Virtual stages"),
                        QObject::tr("Model chunks per pipeline stage (interleaved only)"), &C::parallelism,
                        &ParallelismConfig::virtualStages),
                1, 1024, 1));
        FieldSpec layout;
        layout.keyPath = QStringLiteral("parallelism.pipeline_layout");
        layout.label = QObject::tr("Pipeline layout");
        layout.help = QObject::tr("The layers of every chunk, as Megatron-Core writes them: E embedding, t decoder "
                                  "layer, m MTP module, L loss, | between chunks, (tt|)*29 repeats; e.g. "
                                  "Et|(tt|)*30mL. Empty: the even split or the keys below");
        layout.kind = FieldKind::Text;
        layout.getText = [](const Config& c) { return QString::fromStdString(c.parallelism.pipelineLayout); };
        layout.setText = [](Config& c, const QString& text) {
            c.parallelism.pipelineLayout = text.trimmed().toStdString();
        };
        parallelism.fields.push_back(trainingOnly(std::move(layout)));
        parallelism.fields.push_back(trainingOnly(automaticAt0(
            integer(bound(QStringLiteral("parallelism.microbatch_group_size"), QObject::tr("Micro-batch group"),
                        QObject::tr("Interleaved: micro-batches through one virtual stage before the next "
                                    "(--microbatch-group-size-per-virtual-pipeline-stage); 0 = automatic (pp)"),
                        &C::parallelism, &ParallelismConfig::microBatchGroupSize),
                0, kMaxSize, 1),
            [](const Config& c) { return QString::number(c.parallelism.pp); })));
        parallelism.fields.push_back(moe(trainingOnly(bound(
            QStringLiteral("parallelism.overlap_moe_expert_parallel_comm"), QObject::tr("Overlap expert all-to-all"),
            QObject::tr("One micro-batch's expert dispatch/combine under another's compute "
                        "(--overlap-moe-expert-parallel-comm; interleaved, dualpipe or dualpipev with pp > 1)"),
            &C::parallelism, &ParallelismConfig::overlapMoeExpertParallelComm))));
        parallelism.fields.push_back(
            integer(bound(QStringLiteral("parallelism.first_stage_layers"), QObject::tr("First stage layers"),
                        QObject::tr("Decoder layers on the first pipeline stage (Megatron's "
                                    "--decoder-first-pipeline-num-layers); 0 = an even split. The stages not given "
                                    "share the rest evenly"),
                        &C::parallelism, &ParallelismConfig::firstStageLayers),
                0, kMaxSize, 1));
        parallelism.fields.push_back(
            integer(bound(QStringLiteral("parallelism.last_stage_layers"), QObject::tr("Last stage layers"),
                        QObject::tr("Decoder layers on the last pipeline stage (Megatron's "
                                    "--decoder-last-pipeline-num-layers); 0 = an even split"),
                        &C::parallelism, &ParallelismConfig::lastStageLayers),
                0, kMaxSize, 1));
        parallelism.fields.push_back(bound(QStringLiteral("parallelism.account_for_embedding_in_pipeline_split"),
            QObject::tr("Embedding as a layer"),
            QObject::tr("The embedding takes one layer's place in the pipeline split: the first chunk gets one "
                        "decoder layer fewer (layers + 1 divisible by pp \u00d7 virtual stages)"),
            &C::parallelism, &ParallelismConfig::embeddingInSplit));
        parallelism.fields.push_back(bound(QStringLiteral("parallelism.account_for_loss_in_pipeline_split"),
            QObject::tr("Loss as a layer"),
            QObject::tr("The LM head and loss take one layer's place in the pipeline split: the last chunk gets one "
                        "decoder layer fewer"),
            &C::parallelism, &ParallelismConfig::lossInSplit));
        // Megatron-LM's overlap switches (estimate only; their defaults are Megatron's).
        parallelism.fields.push_back(
            trainingOnly(bound(QStringLiteral("parallelism.overlap_grad_reduce"), QObject::tr("Overlap grad reduce"),
                QObject::tr("The data-parallel gradient reduction runs in buckets during the backward "
                            "(--overlap-grad-reduce)"),
                &C::parallelism, &ParallelismConfig::overlapGradReduce)));
        parallelism.fields.push_back(
            trainingOnly(bound(QStringLiteral("parallelism.overlap_param_gather"), QObject::tr("Overlap param gather"),
                QObject::tr("ZeRO's parameter all-gather hides behind the next forward (--overlap-param-gather)"),
                &C::parallelism, &ParallelismConfig::overlapParamGather)));
        parallelism.fields.push_back(
            bound(QStringLiteral("parallelism.tp_comm_overlap"), QObject::tr("Overlap TP comm"),
                QObject::tr("Tensor-parallel collectives pipelined with their GEMMs (--tp-comm-overlap)"),
                &C::parallelism, &ParallelismConfig::tpCommOverlap));
        parallelism.fields.push_back(
            bound(QStringLiteral("parallelism.overlap_p2p_comm"), QObject::tr("Overlap pipeline sends"),
                QObject::tr("Pipeline send/recv behind compute (--overlap-p2p-communication); off, a send holds the "
                            "compute stream"),
                &C::parallelism, &ParallelismConfig::overlapP2pComm));
        groups.push_back(std::move(parallelism));

        Group cluster { QObject::tr("Cluster"), {}, {} };
        FieldSpec preset;
        preset.keyPath = QStringLiteral("cluster.preset");
        preset.label = QObject::tr("Cluster preset");
        preset.help = QObject::tr("Picking one sets every cluster figure below to that system's (each can then be "
                                  "changed); empty: none");
        preset.kind = FieldKind::Text;
        preset.suggestions << QString();
        for (const std::string& name : clusterPresetNames())
            preset.suggestions << QString::fromStdString(name);
        preset.getText = [](const Config& c) { return QString::fromStdString(c.cluster.preset); };
        preset.setText = [](Config& c, const QString& text) {
            const std::string name = text.trimmed().toStdString();
            if (name.empty())
                c.cluster.preset.clear();
            else if (const ClusterConfig* figures = clusterPreset(name))
                c.cluster = *figures; // as the loader applies a preset; an unknown or partial name changes nothing
        };
        cluster.fields.push_back(std::move(preset));
        FieldSpec gpu;
        gpu.keyPath = QStringLiteral("cluster.gpu");
        gpu.label = QObject::tr("GPU");
        gpu.help = QObject::tr("GPU model used by the step-time estimate");
        gpu.kind = FieldKind::Text;
        for (const std::string& name : gpuPresetNames())
            gpu.suggestions << QString::fromStdString(name);
        gpu.getText = [](const Config& c) { return QString::fromStdString(c.cluster.gpu); };
        gpu.setText = [](Config& c, const QString& text) { c.cluster.gpu = text.trimmed().toStdString(); };
        cluster.fields.push_back(std::move(gpu));
        cluster.fields.push_back(doubling(
            bound(QStringLiteral("cluster.gpus_per_node"), QObject::tr("GPUs per node"),
                QObject::tr("GPUs sharing the fast intra-node link"), &C::cluster, &ClusterConfig::gpusPerNode),
            1 << 16));
        cluster.fields.push_back(decimal(QStringLiteral("cluster.intra_node_bandwidth_gbps"),
            QObject::tr("NVLink GB/s"), QObject::tr("Bandwidth per GPU and direction within a node, GB/s"),
            &ClusterConfig::intraNodeBandwidthGbps));
        cluster.fields.push_back(decimal(QStringLiteral("cluster.inter_node_bandwidth_gbps"),
            QObject::tr("Network GB/s"), QObject::tr("Bandwidth per GPU and direction across nodes, GB/s"),
            &ClusterConfig::interNodeBandwidthGbps));
        cluster.fields.push_back(decimal(QStringLiteral("cluster.intra_node_efficiency"),
            QObject::tr("NVLink efficiency"),
            QObject::tr("Fraction of the intra-node bandwidth a large collective reaches (nccl-tests bus bandwidth)"),
            &ClusterConfig::intraNodeEfficiency));
        cluster.fields.push_back(decimal(QStringLiteral("cluster.inter_node_efficiency"),
            QObject::tr("Network efficiency"), QObject::tr("Fraction of the inter-node bandwidth a transfer reaches"),
            &ClusterConfig::interNodeEfficiency));
        cluster.fields.push_back(automaticAt0(
            decimal(QStringLiteral("cluster.gemm_efficiency"), QObject::tr("GEMM efficiency"),
                QObject::tr("Fraction of dense peak of the best large GEMM; 0 or empty = the GPU preset's measured "
                            "figure"),
                &ClusterConfig::gemmEfficiency),
            gpuFigure(&GpuSpec::gemmEfficiency)));
        cluster.fields.push_back(automaticAt0(
            decimal(QStringLiteral("cluster.attention_efficiency"), QObject::tr("Attention efficiency"),
                QObject::tr("Fraction of dense peak of the FlashAttention forward; 0 or empty = the GPU preset's "
                            "figure"),
                &ClusterConfig::attentionEfficiency),
            gpuFigure(&GpuSpec::flashForwardEfficiency)));
        cluster.fields.push_back(automaticAt0(
            decimal(QStringLiteral("cluster.hbm_efficiency"), QObject::tr("HBM efficiency"),
                QObject::tr("Fraction of HBM bandwidth of memory-bound kernels; 0 or empty = the GPU preset's figure"),
                &ClusterConfig::hbmEfficiency),
            gpuFigure(&GpuSpec::hbmEfficiency)));
        cluster.fields.push_back(
            decimal(QStringLiteral("cluster.intra_node_latency_us"), QObject::tr("NVLink latency µs"),
                QObject::tr("Latency of one communication step within a node; a collective takes ceil(log2 n) steps"),
                &ClusterConfig::intraNodeLatencyUs));
        cluster.fields.push_back(
            decimal(QStringLiteral("cluster.inter_node_latency_us"), QObject::tr("Network latency µs"),
                QObject::tr("Latency of one communication step across nodes"), &ClusterConfig::interNodeLatencyUs));
        cluster.fields.push_back(decimal(QStringLiteral("cluster.kernel_launch_us"), QObject::tr("Kernel gap µs"),
            QObject::tr("Gap between back-to-back kernels, added to every compute node"),
            &ClusterConfig::kernelLaunchUs));
        groups.push_back(std::move(cluster));
        groups.push_back(topologyGroup());
        return groups;
    }

    void setSeverity(QWidget* widget, const char* severity)
    {
        if (widget->property("severity").toString() == QLatin1String(severity))
            return;
        widget->setProperty("severity", QString::fromLatin1(severity));
        widget->style()->unpolish(widget);
        widget->style()->polish(widget);
        widget->update();
    }

} // namespace

struct ConfigForm::Field
{
    FieldSpec spec;
    QWidget* widget = nullptr;
    QFormLayout* layout = nullptr;
    QString baseToolTip;
};

ConfigForm::ConfigForm(QWidget* parent)
    : QWidget(parent)
{
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* content = new QWidget(scroll);
    content->setObjectName(QStringLiteral("configFormContent"));
    auto* contentLayout = new QVBoxLayout(content);
    contentLayout->setContentsMargins(6, 6, 6, 6);
    contentLayout->setSpacing(8);

    for (Group& group : formGroups()) {
        auto* box = new QGroupBox(group.title, content);
        m_groupTitles.push_back(
            { box, group.title, group.inferenceTitle.isEmpty() ? group.title : group.inferenceTitle });
        auto* form = new QFormLayout(box);
        form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
        form->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
        form->setHorizontalSpacing(10);
        form->setVerticalSpacing(4);
        const bool isWorkload = m_groupTitles.size() == 1;
        for (FieldSpec& spec : group.fields)
            addField(form, Field { std::move(spec), nullptr, form, {} });
        if (isWorkload) {
            // Serving a training plan: one button clears what only training accepts (servableConfig()).
            m_servableLabel = new QLabel(box);
            m_servableLabel->setObjectName(QStringLiteral("servableLabel"));
            m_servableLabel->setWordWrap(true);
            m_servableButton = new QPushButton(tr("Make servable"), box);
            m_servableButton->setObjectName(QStringLiteral("makeServableButton"));
            connect(m_servableButton, &QPushButton::clicked, this, [this] {
                const Config servable = servableConfig(m_config);
                if (servable == m_config)
                    return;
                m_config = servable;
                m_lastEditField = -1;
                updateRowVisibility();
                Q_EMIT fieldEdited(servable, tr("Make Servable"), ++m_mergeId);
            });
            auto* row = new QHBoxLayout;
            row->addWidget(m_servableLabel, 1);
            row->addWidget(m_servableButton, 0, Qt::AlignTop);
            form->addRow(row);
        }
        contentLayout->addWidget(box);
    }
    contentLayout->addStretch(1);
    scroll->setWidget(content);

    // One label column width for all groups, so the fields of every group line up.
    int labelWidth = 0;
    const QList<QLabel*> labels = content->findChildren<QLabel*>();
    for (const QLabel* label : labels)
        labelWidth = std::max(labelWidth, label->sizeHint().width());
    for (QLabel* label : labels)
        label->setMinimumWidth(labelWidth);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(scroll);

    // A marked field gets a coloured border and background. A border on a spin box replaces the native frame,
    // so its buttons and arrows are styled here too.
    QString styleSheet;
    for (const auto& [severity, border, background] :
        { std::tuple { "error", "#c62828", "#fdecea" }, std::tuple { "warning", "#e68a00", "#fff4de" } }) {
        const QString box = QStringLiteral("QAbstractSpinBox[severity=\"%1\"]").arg(QLatin1String(severity));
        styleSheet += box
            + QStringLiteral(", QComboBox[severity=\"%1\"] { border: 1px solid %2; border-radius: 3px;"
                             " background: %3; padding: 2px 3px; }")
                  .arg(QLatin1String(severity), QLatin1String(border), QLatin1String(background));
        styleSheet += box
            + QStringLiteral("::up-button { subcontrol-origin: border; subcontrol-position: top right; width: 16px;"
                             " border: none; }");
        styleSheet += box
            + QStringLiteral("::down-button { subcontrol-origin: border; subcontrol-position: bottom right;"
                             " width: 16px; border: none; }");
        styleSheet += box + QStringLiteral("::up-button:hover, ") + box
            + QStringLiteral("::down-button:hover { background: rgba(0, 0, 0, 0.06); }");
        styleSheet += box + QStringLiteral("::up-arrow { image: url(:/icons/spin-up.png); width: 8px; height: 5px; }");
        styleSheet +=
            box + QStringLiteral("::down-arrow { image: url(:/icons/spin-down.png); width: 8px; height: 5px; }");
        styleSheet +=
            box + QStringLiteral("::up-arrow:off, ") + box + QStringLiteral("::down-arrow:off { image: none; }");
        styleSheet += QStringLiteral("QCheckBox[severity=\"%1\"] { color: %2; }")
                          .arg(QLatin1String(severity), QLatin1String(border));
    }
    setStyleSheet(styleSheet);
    setConfig(m_config);
}

ConfigForm::~ConfigForm() = default;

void ConfigForm::addField(QFormLayout* layout, Field field)
{
    const int id = static_cast<int>(m_fields.size());
    const FieldSpec& spec = field.spec;
    QWidget* widget = nullptr;
    switch (spec.kind) {
    case FieldKind::Integer: {
        auto* spin = new Int64SpinBox(layout->parentWidget());
        spin->setRange(spec.minimum, spec.maximum);
        if (spec.step == 0)
            spin->setStepMode(Int64SpinBox::StepMode::Doubling);
        else
            spin->setSingleStep(spec.step);
        connect(spin, &Int64SpinBox::valueChanged, this,
            [this, id](qint64 value) { onEdited(id, value, QString::number(value)); });
        widget = spin;
        break;
    }
    case FieldKind::Choice: {
        auto* combo = new QComboBox(layout->parentWidget());
        // The field may be narrower than its longest choice (the list still shows them whole).
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(10);
        combo->addItems(spec.choices);
        connect(combo, &QComboBox::currentIndexChanged, this, [this, id, combo](int index) {
            if (index >= 0)
                onEdited(id, index, combo->itemText(index));
        });
        widget = combo;
        break;
    }
    case FieldKind::Flag: {
        auto* check = new QCheckBox(layout->parentWidget());
        connect(check, &QCheckBox::toggled, this,
            [this, id](bool on) { onEdited(id, on ? 1 : 0, on ? QStringLiteral("true") : QStringLiteral("false")); });
        widget = check;
        break;
    }
    case FieldKind::Text: {
        auto* combo = new QComboBox(layout->parentWidget());
        combo->setEditable(true);
        combo->setInsertPolicy(QComboBox::NoInsert);
        // A long suggestion ("layernorm, mla_up_proj, moe_act") must not widen the form past a narrow panel.
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(8);
        combo->addItems(spec.suggestions);
        if (spec.decimalMaximum > 0) {
            auto* validator = new QDoubleValidator(0, spec.decimalMaximum, 6, combo);
            validator->setNotation(QDoubleValidator::StandardNotation);
            validator->setLocale(QLocale::c()); // the config's spelling, "0.8", whatever the desktop's locale
            combo->setValidator(validator);
        }
        connect(
            combo, &QComboBox::currentTextChanged, this, [this, id](const QString& text) { onEdited(id, 0, text); });
        widget = combo;
        break;
    }
    }
    widget->setObjectName(spec.keyPath);
    widget->installEventFilter(this);
    for (QLineEdit* edit : widget->findChildren<QLineEdit*>())
        edit->installEventFilter(this);
    field.baseToolTip = QStringLiteral("<b>%1</b><br>%2").arg(spec.keyPath.toHtmlEscaped(), spec.help.toHtmlEscaped());
    widget->setToolTip(field.baseToolTip);
    widget->setProperty("severity", QString());
    auto* label = new QLabel(spec.label, layout->parentWidget());
    label->setBuddy(widget);
    label->setToolTip(field.baseToolTip);
    layout->addRow(label, widget);
    field.widget = widget;
    m_fieldByKey.insert(spec.keyPath, id);
    m_fields.push_back(std::move(field));
}

void ConfigForm::setConfig(const Config& config)
{
    if (!(config == m_config))
        m_lastEditField = -1; // a change from outside (undo, YAML, preset): the next keystroke starts a new step
    m_config = config;
    for (Field& field : m_fields) {
        const QSignalBlocker blocker(field.widget);
        switch (field.spec.kind) {
        case FieldKind::Integer: {
            auto* spin = static_cast<Int64SpinBox*>(field.widget);
            if (field.spec.automatic)
                spin->setSpecialValueText(field.spec.automatic(config)); // shown at the minimum, 0
            const qint64 value = field.spec.get(config);
            // setValue() also shows a new special text; not while the user types "0" into the field.
            if (spin->value() != value || (value == spin->minimum() && !spin->hasFocus()))
                spin->setValue(value);
            break;
        }
        case FieldKind::Choice:
            static_cast<QComboBox*>(field.widget)->setCurrentIndex(static_cast<int>(field.spec.get(config)));
            break;
        case FieldKind::Flag:
            static_cast<QCheckBox*>(field.widget)->setChecked(field.spec.get(config) != 0);
            break;
        case FieldKind::Text: {
            auto* combo = static_cast<QComboBox*>(field.widget);
            QString text = field.spec.getText(config);
            if (field.spec.automatic) {
                // 0 is "automatic": an empty field whose placeholder names the value in force.
                combo->lineEdit()->setPlaceholderText(field.spec.automatic(config));
                if (text == QLatin1String("0"))
                    text.clear();
            }
            // Text being typed that means the same value stays as typed ("0." on the way to "0.9").
            Config typed = config;
            field.spec.setText(typed, combo->currentText());
            if (combo->currentText() != text && !(combo->hasFocus() && typed == config))
                combo->setCurrentText(text);
            break;
        }
        }
    }
    updateRowVisibility();
}

void ConfigForm::updateRowVisibility()
{
    const bool isMoe = m_config.model.family == Family::Moe;
    const bool inference = isInference(m_config);
    static const Config defaults;
    if (m_pinnedFor != std::pair { m_config.workload, m_config.model.family }) {
        m_pinnedRows.clear();
        m_pinnedFor = { m_config.workload, m_config.model.family };
    }
    for (int id = 0; id < static_cast<int>(m_fields.size()); ++id) {
        const Field& field = m_fields[static_cast<size_t>(id)];
        bool visible = true;
        // Shown for moe, and for other families only while the value is set (it is then an error to fix).
        if (field.spec.moeOnly)
            visible = isMoe || field.spec.get(m_config) != 0;
        if (field.spec.shown == Shown::Inference)
            visible = visible && inference;
        else if (field.spec.shown == Shown::Training)
            visible = visible && !inference;
        else if (field.spec.shown == Shown::TrainingUnlessSet && inference)
            visible = visible && field.spec.get(m_config) != field.spec.get(defaults); // set: an error to fix
        if (field.spec.moeOnly || field.spec.shown != Shown::Always)
            field.layout->setRowVisible(field.widget, visible || m_pinnedRows.contains(id));
    }
    for (const GroupTitle& g : m_groupTitles)
        g.box->setTitle(inference ? g.inference : g.training);
    updateServable();
}

void ConfigForm::updateServable()
{
    if (!m_servableButton)
        return;
    const bool inference = isInference(m_config);
    std::vector<std::string> changes;
    if (inference)
        servableConfig(m_config, &changes);
    QStringList lines;
    for (const std::string& change : changes)
        lines << QString::fromStdString(change);
    m_servableButton->setEnabled(!changes.empty());
    m_servableButton->setToolTip(changes.empty()
            ? tr("Nothing training-only is set")
            : tr("Set what serving refuses to what it accepts, as one undo step:\n%1")
                  .arg(lines.join(QLatin1Char('\n'))));
    m_servableLabel->setText(changes.empty()
            ? tr("Servable: no training-only setting is left")
            : tr("%1 set for training only")
                  .arg(changes.size() == 1 ? tr("1 key is") : tr("%1 keys are").arg(changes.size())));
    m_servableLabel->setStyleSheet(
        changes.empty() ? QStringLiteral("color: #2e7d32;") : QStringLiteral("color: #a86400;"));
    // The row stays while serving (the button greys out instead of disappearing under the mouse).
    if (auto* form = qobject_cast<QFormLayout*>(m_servableButton->parentWidget()->layout())) {
        for (int row = 0; row < form->rowCount(); ++row) {
            QLayoutItem* item = form->itemAt(row, QFormLayout::SpanningRole);
            if (item && item->layout() && item->layout()->indexOf(m_servableButton) >= 0)
                form->setRowVisible(row, inference);
        }
    }
}

QPushButton* ConfigForm::servableButton() const
{
    return m_servableButton;
}

bool ConfigForm::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::ShortcutOverride) {
        const auto* key = static_cast<QKeyEvent*>(event);
        const QKeySequence pressed(key->keyCombination());
        if (key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo)
            || pressed == QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)) {
            // Not accepted: the shortcut goes to the window's Edit > Undo / Redo.
            event->ignore();
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

void ConfigForm::onEdited(int fieldId, qint64 value, const QString& text)
{
    const FieldSpec& spec = m_fields[static_cast<size_t>(fieldId)].spec;
    Config config = m_config;
    if (spec.kind == FieldKind::Text)
        spec.setText(config, text);
    else
        spec.set(config, value);
    if (config == m_config)
        return;
    // Typing one entry merges into one undo step; any other edit (another value, step or field) is a step of its
    // own (tp 8 -> 4 -> 3 can be undone to 4).
    const bool typing = (spec.kind == FieldKind::Integer || spec.kind == FieldKind::Text) && fieldId == m_lastEditField
        && !text.isEmpty() && !m_lastEditText.isEmpty()
        && (text.startsWith(m_lastEditText) || m_lastEditText.startsWith(text));
    if (!typing)
        ++m_mergeId;
    m_lastEditField = fieldId;
    m_lastEditText = text;
    if (const Field& field = m_fields[static_cast<size_t>(fieldId)]; field.widget->isVisibleTo(this))
        m_pinnedRows.insert(fieldId); // its own edit never hides a row (ZeRO set back to 0 while serving)
    m_config = config;
    updateRowVisibility();
    Q_EMIT fieldEdited(config, tr("Set %1 to %2").arg(spec.keyPath, text), m_mergeId);
}

void ConfigForm::setDiagnostics(const QList<Diagnostic>& diagnostics)
{
    QHash<int, QStringList> messages;
    QHash<int, Severity> severity;
    for (const Diagnostic& d : diagnostics) {
        const auto it = m_fieldByKey.constFind(QString::fromStdString(d.keyPath));
        if (it == m_fieldByKey.cend())
            continue;
        messages[*it] << QString::fromStdString(d.message);
        if (!severity.contains(*it) || static_cast<int>(d.severity) < static_cast<int>(severity[*it]))
            severity[*it] = d.severity;
    }
    for (int id = 0; id < static_cast<int>(m_fields.size()); ++id) {
        Field& field = m_fields[static_cast<size_t>(id)];
        if (!messages.contains(id)) {
            setSeverity(field.widget, "");
            field.widget->setToolTip(field.baseToolTip);
            continue;
        }
        const bool error = severity[id] == Severity::Error;
        setSeverity(field.widget, error ? "error" : "warning");
        QString tip = field.baseToolTip + QStringLiteral("<hr>");
        for (const QString& message : std::as_const(messages[id]))
            tip += QStringLiteral("<p style=\"color:%1\">%2</p>")
                       .arg(error ? QStringLiteral("#c62828") : QStringLiteral("#a86400"), message.toHtmlEscaped());
        field.widget->setToolTip(tip);
    }
}

QWidget* ConfigForm::fieldWidget(const QString& keyPath) const
{
    const auto it = m_fieldByKey.constFind(keyPath);
    return it == m_fieldByKey.cend() ? nullptr : m_fields[static_cast<size_t>(*it)].widget;
}

bool ConfigForm::setFieldText(const QString& keyPath, const QString& text)
{
    const auto it = m_fieldByKey.constFind(keyPath);
    if (it == m_fieldByKey.cend())
        return false;
    const Field& field = m_fields[static_cast<size_t>(*it)];
    switch (field.spec.kind) {
    case FieldKind::Integer: {
        auto* spin = static_cast<Int64SpinBox*>(field.widget);
        bool ok = false;
        const qint64 value = text.toLongLong(&ok);
        if (!ok || value < spin->minimum() || value > spin->maximum())
            return false;
        spin->setValue(value);
        return true;
    }
    case FieldKind::Choice: {
        auto* combo = static_cast<QComboBox*>(field.widget);
        int index = combo->findText(text);
        for (int i = 0; index < 0 && i < combo->count(); ++i) {
            if (combo->itemText(i).section(QLatin1Char(' '), 0, 0) == text) // "1 — optimizer state" for 1
                index = i;
        }
        if (index < 0)
            return false;
        combo->setCurrentIndex(index);
        return true;
    }
    case FieldKind::Flag: {
        if (text != QLatin1String("true") && text != QLatin1String("false"))
            return false;
        static_cast<QCheckBox*>(field.widget)->setChecked(text == QLatin1String("true"));
        return true;
    }
    case FieldKind::Text:
        static_cast<QComboBox*>(field.widget)->setCurrentText(text);
        return true;
    }
    return false;
}

bool ConfigForm::focusField(const QString& keyPath)
{
    QWidget* widget = fieldWidget(keyPath);
    if (!widget || !widget->isVisibleTo(this))
        return false;
    if (auto* scroll = findChild<QScrollArea*>())
        scroll->ensureWidgetVisible(widget);
    widget->setFocus(Qt::OtherFocusReason);
    return true;
}

} // namespace stagecraft
