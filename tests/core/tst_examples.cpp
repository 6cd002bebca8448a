// SPDX-License-Identifier: MIT
// The example configs of resources/examples: each loads without a diagnostic, synthesizes, and shows what it is
// meant to show. Every expected figure is computed from the file's own values (plan, model shape, batch), with the
// formula cited; none is copied from the program's output.
#include "config/configloader.h"
#include "synthesis/synthesis.h"

#include <QDir>
#include <QtTest>
#include <map>
#include <set>

using namespace stagecraft;

namespace {

QString examplesDir()
{
    return QStringLiteral(STAGECRAFT_SOURCE_DIR "/resources/examples");
}

/// What each example demonstrates; every file of resources/examples must have a row.
const std::map<QString, QString>& exampleFeatures()
{
    static const std::map<QString, QString> features {
        { QStringLiteral("llama3-70b-3d.yaml"), QStringLiteral("dense-3d") },
        { QStringLiteral("llama3-8b-fsdp.yaml"), QStringLiteral("fsdp") },
        { QStringLiteral("mixtral-8x7b-ep.yaml"), QStringLiteral("moe-ep") },
        { QStringLiteral("llama3-8b-long-context.yaml"), QStringLiteral("context-parallel") },
    };
    return features;
}

struct Example
{
    Config config; ///< as loaded from the file
    std::shared_ptr<const SynthesisResult> result;
};

/// Loads and synthesizes an example once per test run.
const Example& example(const QString& file)
{
    static std::map<QString, Example> cache;
    auto it = cache.find(file);
    if (it != cache.end())
        return it->second;
    const std::string path = QString(examplesDir() + QLatin1Char('/') + file).toStdString();
    ConfigResult loaded = loadConfigFile(path);
    if (!loaded.config) {
        for (const Diagnostic& d : loaded.diagnostics)
            qWarning("%s", d.toString().c_str());
        qFatal("%s does not load", path.c_str());
    }
    SynthesisOutcome outcome = synthesize(*loaded.config);
    if (!outcome.result) {
        for (const Diagnostic& d : outcome.diagnostics)
            qWarning("%s", d.toString().c_str());
        qFatal("%s does not synthesize", path.c_str());
    }
    return cache.emplace(file, Example { *loaded.config, outcome.result }).first->second;
}

/// Collectives of a class program in decoder layer `layer`, micro-batch `microBatch`, of the original forward pass
/// (recomputed forward ops excluded) or of the backward pass.
std::vector<const ProgramNode*> collectives(
    const ClassProgram& program, int layer, int microBatch, Pass pass, CollectiveType type)
{
    std::vector<const ProgramNode*> out;
    for (const ProgramNode& n : program.nodes) {
        if (n.kind == NodeKind::Collective && n.layer == layer && n.microBatch == microBatch && n.pass == pass
            && !n.recompute && n.collective == type)
            out.push_back(&n);
    }
    return out;
}

/// The decoder layers (0 .. layers-1) a class program computes.
std::set<int> decoderLayers(const ClassProgram& program, int64_t layers)
{
    std::set<int> out;
    for (const ProgramNode& n : program.nodes) {
        if (n.kind == NodeKind::Compute && n.layer >= 0 && n.layer < layers)
            out.insert(n.layer);
    }
    return out;
}

} // namespace

class TestExamples : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyExampleHasARow()
    {
        const QStringList files = QDir(examplesDir()).entryList({ QStringLiteral("*.yaml") }, QDir::Files);
        QVERIFY(!files.isEmpty());
        QStringList listed;
        for (const auto& [file, feature] : exampleFeatures())
            listed << file;
        QCOMPARE(files, listed); // both sorted by name
    }

    void plan_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("feature");
        for (const auto& [file, feature] : exampleFeatures())
            QTest::newRow(qPrintable(file)) << file << feature;
    }

    void plan()
    {
        QFETCH(QString, file);
        QFETCH(QString, feature);
        // No diagnostic at all: an example is also a model of a clean config.
        const ConfigResult loaded = loadConfigFile(QString(examplesDir() + QLatin1Char('/') + file).toStdString());
        for (const Diagnostic& d : loaded.diagnostics)
            qWarning("%s", d.toString().c_str());
        QVERIFY(loaded.diagnostics.empty());

        const Example& e = example(file);
        const ParallelismConfig& p = e.config.parallelism;
        const ModelConfig& m = e.config.model;
        const TrainingConfig& t = e.config.training;
        // The file's name key matches its file name, so exported traces are named after the example.
        QCOMPARE(QString::fromStdString(e.config.name) + QStringLiteral(".yaml"), file);

        // DESIGN.md section 2: world size is dp*tp*pp*cp (ep is carved out of dp); one rank class per stage.
        const int64_t world = p.dp * p.tp * p.pp * p.cp;
        QCOMPARE(e.result->worldSize(), world);
        QCOMPARE(int64_t(e.result->classes.size()), p.pp);
        int64_t ranks = 0;
        for (const ClassSummary& s : e.result->summaries) {
            QCOMPARE(s.ranks, world / p.pp);
            ranks += s.ranks;
        }
        QCOMPARE(ranks, world);
        // Micro-batches per iteration: global_batch / (micro_batch * dp).
        QCOMPARE(e.result->cost.microBatches, t.globalBatch / (t.microBatch * p.dp));
        // The layers are cut evenly: each stage computes layers/pp distinct decoder layers, each layer in one stage.
        std::set<int> all;
        for (const ClassProgram& program : e.result->classes) {
            const std::set<int> mine = decoderLayers(program, m.layers);
            QCOMPARE(int64_t(mine.size()), m.layers / p.pp);
            all.insert(mine.begin(), mine.end());
        }
        QCOMPARE(int64_t(all.size()), m.layers);

        // The file really sets up the feature it is named for.
        if (feature == QLatin1String("dense-3d")) {
            QVERIFY(p.dp > 1 && p.tp > 1 && p.pp > 1 && p.sequenceParallel && m.family != Family::Moe);
        } else if (feature == QLatin1String("fsdp")) {
            QVERIFY(p.zero == 3 && p.dp > 1);
        } else if (feature == QLatin1String("moe-ep")) {
            QVERIFY(m.family == Family::Moe && p.ep > 1 && m.experts % p.ep == 0);
        } else if (feature == QLatin1String("context-parallel")) {
            QVERIFY(p.cp > 1 && p.sequenceParallel);
        } else {
            QFAIL("unknown feature");
        }
    }

    void denseTensorAndPipelineCommunication()
    {
        // Megatron-LM with sequence parallelism (Korthikanti et al. 2022, "Reducing Activation Recomputation in
        // Large Transformer Models", section 4.2.2): per layer and micro-batch, the forward pass all-gathers the
        // sequence-split input of attention and of the MLP (comm_size = the shard, b*s/tp*h elements) and
        // reduce-scatters their outputs (comm_size = the full input, b*s*h elements), over tp.
        const Example& e = example(QStringLiteral("llama3-70b-3d.yaml"));
        const Config& c = e.config;
        const int64_t bytes = bytesPerElement(c.training.precision);
        const int64_t fullActivation =
            c.training.microBatch * (c.model.seqLen / c.parallelism.cp) * c.model.hidden * bytes;
        const int64_t shard = fullActivation / c.parallelism.tp;
        for (const ClassProgram& program : e.result->classes) {
            const int layer = *decoderLayers(program, c.model.layers).begin();
            const auto gathers = collectives(program, layer, 0, Pass::Forward, CollectiveType::AllGather);
            const auto scatters = collectives(program, layer, 0, Pass::Forward, CollectiveType::ReduceScatter);
            QCOMPARE(int(gathers.size()), 2);
            QCOMPARE(int(scatters.size()), 2);
            for (const ProgramNode* n : gathers) {
                QCOMPARE(n->mask, axisBit(Axis::Tp));
                QCOMPARE(n->bytes, shard);
            }
            for (const ProgramNode* n : scatters) {
                QCOMPARE(n->mask, axisBit(Axis::Tp));
                QCOMPARE(n->bytes, fullActivation);
            }
            // Interleaved schedule: every rank runs virtual_stages model chunks.
            std::set<int> chunks;
            for (const ProgramNode& n : program.nodes)
                chunks.insert(n.chunk);
            QCOMPARE(int64_t(chunks.size()), c.parallelism.virtualStages);
        }
        // Pipeline: a pipeline of pp*v chunks has pp*v - 1 cuts; each micro-batch sends its activation forward and
        // its gradient backward across every cut, each the sequence-parallel shard (Megatron's scatter/gather
        // optimization, Narayanan et al. 2021 section 4.1). Summed over the stages of one pipeline:
        const int64_t cuts = c.parallelism.pp * c.parallelism.virtualStages - 1;
        const int64_t m = e.result->cost.microBatches;
        int64_t sends = 0, sendBytes = 0;
        for (const ClassSummary& s : e.result->summaries) {
            sends += s.sendCount;
            sendBytes += s.sendBytes;
        }
        QCOMPARE(sends, 2 * m * cuts);
        QCOMPARE(sendBytes, 2 * m * cuts * shard);
    }

    void fsdpGathersEveryLayer()
    {
        // ZeRO stage 3 / FSDP (Rajbhandari et al. 2020, "ZeRO"; Zhao et al. 2023, "PyTorch FSDP"): before a layer's
        // forward, each rank all-gathers the layer's weights from the dp shards, comm_size = the rank's shard
        // = layer parameters * bytes / dp, in every layer and every micro-batch. Llama layer parameters (the count
        // of tests/core/tst_model.cpp): q and o h*h each, k and v h*(kv_heads*head_dim) each, SwiGLU gate/up/down
        // 3*h*ffn, two RMSNorm weights 2*h.
        const Example& e = example(QStringLiteral("llama3-8b-fsdp.yaml"));
        const Config& c = e.config;
        const ModelConfig& m = c.model;
        const int64_t kvDim = m.kvHeads * (m.hidden / m.heads);
        const int64_t layerParams =
            2 * m.hidden * m.hidden + 2 * m.hidden * kvDim + 3 * m.hidden * m.ffnHidden + 2 * m.hidden;
        const int64_t shardBytes = layerParams * bytesPerElement(c.training.precision) / c.parallelism.dp;
        QCOMPARE(layerParams * bytesPerElement(c.training.precision) % c.parallelism.dp, int64_t(0));
        for (const ClassProgram& program : e.result->classes) {
            for (const int layer : decoderLayers(program, m.layers)) {
                for (int mb = 0; mb < e.result->cost.microBatches; ++mb) {
                    const auto forward = collectives(program, layer, mb, Pass::Forward, CollectiveType::AllGather);
                    QCOMPARE(int(forward.size()), 1);
                    QCOMPARE(forward[0]->bytes, shardBytes);
                    QCOMPARE(e.result->mesh().groupSize(forward[0]->mask), c.parallelism.dp * c.parallelism.cp);
                    QVERIFY((forward[0]->mask & axisBit(Axis::Edp)) != 0);
                }
            }
        }
    }

    void expertAllToAll()
    {
        // Expert parallelism (Lepikhin et al. 2020, GShard; Megatron-Core's all-to-all token dispatcher): in the
        // forward pass, per MoE layer and micro-batch, one all-to-all dispatches the rank's tokens to their top_k
        // experts and one combines them back, over the ep group; comm_size = tokens * top_k * h elements, where a
        // rank holds b * s/(cp*tp) tokens under sequence parallelism. Every stage has MoE layers, so every class
        // moves all-to-all bytes.
        const Example& e = example(QStringLiteral("mixtral-8x7b-ep.yaml"));
        const Config& c = e.config;
        const ParallelismConfig& p = c.parallelism;
        const int64_t tokens = c.training.microBatch * c.model.seqLen / (p.cp * (p.sequenceParallel ? p.tp : 1));
        const int64_t bytes = tokens * c.model.topK * c.model.hidden * bytesPerElement(c.training.precision);
        for (size_t i = 0; i < e.result->classes.size(); ++i) {
            const ClassProgram& program = e.result->classes[i];
            QVERIFY(e.result->summaries[i].collectiveBytes[size_t(CollectiveType::AllToAll)] > 0);
            for (const int layer : decoderLayers(program, c.model.layers)) {
                const auto a2a = collectives(program, layer, 0, Pass::Forward, CollectiveType::AllToAll);
                QCOMPARE(int(a2a.size()), 2);
                for (const ProgramNode* n : a2a) {
                    QCOMPARE(n->mask, axisBit(Axis::Ep));
                    QCOMPARE(n->bytes, bytes);
                }
                // The backward pass sends the gradients back the same way.
                QVERIFY(collectives(program, layer, 0, Pass::Backward, CollectiveType::AllToAll).size() >= 2);
            }
        }
        QCOMPARE(e.result->mesh().groupSize(axisBit(Axis::Ep)), p.ep);
        // Expert weights are replicated over the dp/ep expert-data-parallel ranks, and reduced there.
        QCOMPARE(e.result->mesh().groupSize(axisBit(Axis::Edp)), p.dp / p.ep);
        bool expertReduction = false;
        for (const ProgramNode& n : e.result->classes[0].nodes)
            expertReduction = expertReduction || (n.kind == NodeKind::Collective && n.mask == axisBit(Axis::Edp));
        QVERIFY(expertReduction);
    }

    void contextParallelAttention()
    {
        // Context parallelism (Megatron-LM context parallelism; Liu et al. 2023, ring attention): queries stay
        // sequence-split, keys and values are all-gathered over cp before attention, comm_size = the local K (or V)
        // = b * s/cp * (kv_heads/tp) * head_dim elements; their gradients are reduce-scattered back over cp,
        // comm_size = the full input = cp times that.
        const Example& e = example(QStringLiteral("llama3-8b-long-context.yaml"));
        const Config& c = e.config;
        const ModelConfig& m = c.model;
        const ParallelismConfig& p = c.parallelism;
        const int64_t localKv = c.training.microBatch * (m.seqLen / p.cp) * (m.kvHeads / p.tp) * (m.hidden / m.heads)
            * bytesPerElement(c.training.precision);
        const ClassProgram& program = e.result->classes[0];
        for (const int layer : decoderLayers(program, m.layers)) {
            int gathers = 0;
            for (const ProgramNode* n : collectives(program, layer, 0, Pass::Forward, CollectiveType::AllGather)) {
                if (n->mask != axisBit(Axis::Cp))
                    continue;
                ++gathers;
                QCOMPARE(n->bytes, localKv);
                QVERIFY2(n->name.str().find(".attn.") != std::string::npos, n->name.str().c_str());
            }
            QCOMPARE(gathers, 2); // K and V
            int scatters = 0;
            for (const ProgramNode* n : collectives(program, layer, 0, Pass::Backward, CollectiveType::ReduceScatter)) {
                if (n->mask != axisBit(Axis::Cp))
                    continue;
                ++scatters;
                QCOMPARE(n->bytes, localKv * p.cp);
            }
            QCOMPARE(scatters, 2); // dK and dV
        }
    }
};

QTEST_GUILESS_MAIN(TestExamples)
#include "tst_examples.moc"
