// SPDX-License-Identifier: MIT
#include "config/config.h"
#include "config/configloader.h"
#include "config/configlocations.h"
#include "config/configvalidator.h"
#include "config/configwriter.h"
#include "config/diagnostic.h"
#include "config/presets.h"
#include "config/suggestion.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <functional>
#include <sys/stat.h>

using namespace stagecraft;

using ConfigMutation = std::function<void(Config&)>;
Q_DECLARE_METATYPE(ConfigMutation)

namespace {

QString qs(std::string_view text)
{
    return QString::fromUtf8(text.data(), qsizetype(text.size()));
}

QString badFile(const QString& name)
{
    return QStringLiteral(STAGECRAFT_TEST_DATA "/config/bad/") + name;
}

QString dump(const std::vector<Diagnostic>& diagnostics)
{
    QString out;
    for (const Diagnostic& d : diagnostics)
        out += QLatin1String("\n  ") + qs(d.toString());
    return out;
}

int errorCount(const std::vector<Diagnostic>& diagnostics)
{
    return int(std::count_if(
        diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) { return d.severity == Severity::Error; }));
}

/// The first diagnostic about `keyPath` whose message contains `reason`, or nullptr.
const Diagnostic* findDiagnostic(
    const std::vector<Diagnostic>& diagnostics, const std::string& keyPath, const std::string& reason)
{
    for (const Diagnostic& d : diagnostics) {
        if (d.keyPath == keyPath && d.message.find(reason) != std::string::npos)
            return &d;
    }
    return nullptr;
}

Config loadPreset(const std::string& name)
{
    const ConfigResult result = loadConfigOrPreset(name);
    if (!result.config)
        qFatal("preset %s does not load: %s", name.c_str(), qPrintable(dump(result.diagnostics)));
    return *result.config;
}

// A small config text on top of the tiny preset, for tests that need a file.
const char* const kTinyText = "model:\n  preset: tiny\ntraining:\n  global_batch: 4\n";

/// tiny as an MoE model: `experts` experts of expert_ffn_hidden 256, `topK` routes a token, micro-batches of one.
void makeMoe(Config& c, int64_t experts, int64_t topK)
{
    c.model.family = Family::Moe;
    c.model.experts = experts;
    c.model.topK = topK;
    c.model.expertFfnHidden = 256;
    c.training.microBatch = 1;
}

} // namespace

class TestConfig : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void presetList();
    void presetValues_data();
    void presetValues();
    void defaultPreset();
    void roundTrip_data();
    void roundTrip();
    void designExample();
    void defaults();
    void gradientBucket_data();
    void gradientBucket();
    void overrides();
    void badOverride_data();
    void badOverride();
    void gradientDtypes_data();
    void gradientDtypes();
    void suggestions_data();
    void suggestions();
    void badFiles_data();
    void badFiles();
    void validate_data();
    void validate();
    void anchoring_data();
    void anchoring();
    void diagnosticToString();
    void configOrPreset();
    void unreadableInput();
    void inputLimits_data();
    void inputLimits();
    void yamlText_data();
    void yamlText();
    void synthesisAnchoring();
};

void TestConfig::presetList()
{
    const std::vector<std::string> expected { "deepseek-v3", "deepseek-v3-serving", "default", "gpt2", "gpt3-175b",
        "llama2-7b", "llama3-405b", "llama3-70b", "llama3-70b-serving", "llama3-8b", "mistral-7b", "mixtral-8x7b",
        "qwen2-7b", "qwen3-235b-a22b", "qwen3-30b-a3b", "qwen3-8b", "tiny" };
    QCOMPARE(presetNames(), expected);

    // The embedded texts are the files of resources/presets, byte for byte, and every file is embedded.
    const QDir dir(QStringLiteral(STAGECRAFT_SOURCE_DIR "/resources/presets"));
    const QStringList files = dir.entryList({ QStringLiteral("*.yaml") }, QDir::Files, QDir::Name);
    QCOMPARE(files.size(), qsizetype(expected.size()));
    for (const QString& fileName : files) {
        const std::string name = fileName.chopped(5).toStdString();
        const std::optional<std::string_view> text = presetText(name);
        QVERIFY2(text, fileName.toUtf8());
        QFile file(dir.filePath(fileName));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(QByteArray(text->data(), qsizetype(text->size())), file.readAll());
        // Every preset says where its numbers come from, and has a one-line summary.
        QVERIFY2(text->find("# Source:") != std::string_view::npos, fileName.toUtf8());
        QVERIFY(!presetSummary(name).empty());
    }
    QVERIFY(!presetText("llama3-9b"));
    QCOMPARE(presetSummary("llama3-9b"), std::string());
    QCOMPARE(qs(presetSummary("llama3-8b")).left(10), QStringLiteral("Llama 3 8B"));
}

void TestConfig::presetValues_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<int>("family");
    QTest::addColumn<qint64>("layers");
    QTest::addColumn<qint64>("hidden");
    QTest::addColumn<qint64>("ffnHidden");
    QTest::addColumn<qint64>("heads");
    QTest::addColumn<qint64>("kvHeads");
    QTest::addColumn<qint64>("vocab");
    QTest::addColumn<qint64>("seqLen");
    QTest::addColumn<qint64>("experts");
    QTest::addColumn<qint64>("topK");
    QTest::addColumn<qint64>("globalBatch");
    QTest::addColumn<double>("ropeTheta");
    QTest::addColumn<bool>("tiedEmbeddings");
    QTest::addColumn<qint64>("world"); // GPUs of the preset's plan
    QTest::addColumn<qint64>("ep");

    // The plans (GPUs, batch): NeMo's recommended H100 bf16 pre-training configs, NVIDIA/NeMo
    // scripts/performance/recommended_model_configs/model_configs_h100.csv (num_gpus, gbs columns): gpt3 175b 128 GPUs
    // and 256 sequences, llama3 70b 64 and 128, llama3 8b 8 and 128, mixtral 8x7b 64 and 256 with ep 8; NeMo's recipe
    // nemo/collections/llm/recipes/llama2_7b.py: one node of 8 GPUs, global_batch_size 512.
    // Brown et al. 2020 (arXiv:2005.14165) Table 2.1: 96 layers, d_model 12288, 96 heads, n_ctx 2048;
    // d_ff = 4 * d_model; GPT-2 BPE vocabulary of 50257; input and output embeddings are tied.
    QTest::newRow("gpt3-175b") << QStringLiteral("gpt3-175b") << int(Family::Gpt) << qint64(96) << qint64(12288)
                               << qint64(4 * 12288) << qint64(96) << qint64(96) << qint64(50257) << qint64(2048)
                               << qint64(0) << qint64(0) << qint64(256) << 0.0 << true << qint64(128) << qint64(1);
    // Touvron et al. 2023 (arXiv:2307.09288) and meta-llama/Llama-2-7b-hf config.json.
    QTest::newRow("llama2-7b") << QStringLiteral("llama2-7b") << int(Family::Llama) << qint64(32) << qint64(4096)
                               << qint64(11008) << qint64(32) << qint64(32) << qint64(32000) << qint64(4096)
                               << qint64(0) << qint64(0) << qint64(512) << 10000.0 << false << qint64(8) << qint64(1);
    // "The Llama 3 Herd of Models" (arXiv:2407.21783) Table 3; vocab_size 128256 in the model cards' config.json.
    QTest::newRow("llama3-8b") << QStringLiteral("llama3-8b") << int(Family::Llama) << qint64(32) << qint64(4096)
                               << qint64(14336) << qint64(32) << qint64(8) << qint64(128256) << qint64(8192)
                               << qint64(0) << qint64(0) << qint64(128) << 500000.0 << false << qint64(8) << qint64(1);
    QTest::newRow("llama3-70b") << QStringLiteral("llama3-70b") << int(Family::Llama) << qint64(80) << qint64(8192)
                                << qint64(28672) << qint64(64) << qint64(8) << qint64(128256) << qint64(8192)
                                << qint64(0) << qint64(0) << qint64(128) << 500000.0 << false << qint64(64)
                                << qint64(1);
    // Same Table 3; batch 16M tokens of 8192-token sequences (section 3.4.1) = 2048 sequences; Table 4: tp 8, cp 1,
    // pp 16, dp 128 = 16,384 GPUs.
    QTest::newRow("llama3-405b") << QStringLiteral("llama3-405b") << int(Family::Llama) << qint64(126) << qint64(16384)
                                 << qint64(53248) << qint64(128) << qint64(8) << qint64(128256) << qint64(8192)
                                 << qint64(0) << qint64(0) << qint64(16 * 1024 * 1024 / 8192) << 500000.0 << false
                                 << qint64(8 * 16 * 128) << qint64(1);
    // Jiang et al. 2024 (arXiv:2401.04088) Table 1: 8 experts, top 2, hidden_dim 14336; rope_theta 1e6 (config.json).
    QTest::newRow("mixtral-8x7b") << QStringLiteral("mixtral-8x7b") << int(Family::Moe) << qint64(32) << qint64(4096)
                                  << qint64(14336) << qint64(32) << qint64(8) << qint64(32000) << qint64(4096)
                                  << qint64(8) << qint64(2) << qint64(256) << 1e6 << false << qint64(64) << qint64(8);
    // The tiny test model as specified for this project (not a published model), on one device.
    QTest::newRow("tiny") << QStringLiteral("tiny") << int(Family::Llama) << qint64(2) << qint64(256) << qint64(512)
                          << qint64(8) << qint64(4) << qint64(1024) << qint64(128) << qint64(0) << qint64(0)
                          << qint64(4) << 10000.0 << false << qint64(1) << qint64(1);
}

void TestConfig::presetValues()
{
    QFETCH(QString, preset);
    QFETCH(int, family);
    QFETCH(qint64, layers);
    QFETCH(qint64, hidden);
    QFETCH(qint64, ffnHidden);
    QFETCH(qint64, heads);
    QFETCH(qint64, kvHeads);
    QFETCH(qint64, vocab);
    QFETCH(qint64, seqLen);
    QFETCH(qint64, experts);
    QFETCH(qint64, topK);
    QFETCH(qint64, globalBatch);
    QFETCH(double, ropeTheta);
    QFETCH(bool, tiedEmbeddings);
    QFETCH(qint64, world);
    QFETCH(qint64, ep);

    const ConfigResult result = loadConfigOrPreset(preset.toStdString());
    QVERIFY2(result.diagnostics.empty(), qPrintable(dump(result.diagnostics)));
    QVERIFY(result.config);
    const Config& c = *result.config;
    QCOMPARE(qs(c.name), preset);
    QCOMPARE(int(c.model.family), family);
    QCOMPARE(c.model.layers, layers);
    QCOMPARE(c.model.hidden, hidden);
    QCOMPARE(c.model.ffnHidden, ffnHidden);
    QCOMPARE(c.model.heads, heads);
    QCOMPARE(c.model.kvHeads, kvHeads);
    QCOMPARE(c.model.vocab, vocab);
    QCOMPARE(c.model.seqLen, seqLen);
    QCOMPARE(c.model.experts, experts);
    QCOMPARE(c.model.topK, topK);
    QCOMPARE(c.model.expertFfnHidden, experts > 0 ? ffnHidden : 0); // Mixtral: every FFN is an expert
    QCOMPARE(c.model.ropeTheta, ropeTheta);
    QCOMPARE(c.model.tiedEmbeddings, tiedEmbeddings);
    QCOMPARE(c.model.causalMask, true);
    if (preset != QLatin1String("tiny"))
        QCOMPARE(c.model.hidden / c.model.heads, qint64(128)); // head dimension 128 in all cited papers
    QCOMPARE(c.training.globalBatch, globalBatch);
    QCOMPARE(c.training.microBatch, preset == QLatin1String("tiny") ? qint64(2) : qint64(1));
    QCOMPARE(c.training.precision, Precision::Bf16);
    QCOMPARE(c.training.optimizer, std::string("adam"));
    QCOMPARE(c.training.recompute, Recompute::None);
    QCOMPARE(c.parallelism.worldSize(), world);
    QCOMPARE(c.parallelism.ep, ep);
    QCOMPARE(c.cluster.gpu, std::string("h100-sxm"));
    QCOMPARE(c.cluster.gpusPerNode, qint64(8));
    // cluster.preset dgx-h100: NVLink 4 900 GB/s bidirectional per GPU (H100 datasheet) = 450 per direction; one
    // 400 Gb/s NDR NIC per GPU (DGX H100 datasheet) = 50 GB/s.
    QCOMPARE(c.cluster.preset, std::string("dgx-h100"));
    QCOMPARE(c.cluster.intraNodeBandwidthGbps, 450.0);
    QCOMPARE(c.cluster.interNodeBandwidthGbps, 50.0);
}

void TestConfig::defaultPreset()
{
    const ConfigResult result = loadConfigOrPreset("default");
    QVERIFY2(result.diagnostics.empty(), qPrintable(dump(result.diagnostics)));
    const Config& c = *result.config;
    QCOMPARE(c.name, std::string("default"));
    // The llama3-8b model, referenced through model.preset.
    ModelConfig expectedModel = loadPreset("llama3-8b").model;
    expectedModel.preset = "llama3-8b";
    QVERIFY(c.model == expectedModel);
    QCOMPARE(c.parallelism.dp, qint64(8));
    QCOMPARE(c.parallelism.tp, qint64(8));
    QCOMPARE(c.parallelism.pp, qint64(1));
    QCOMPARE(c.parallelism.worldSize(), qint64(64));
    QCOMPARE(c.parallelism.sequenceParallel, true);
    QCOMPARE(c.parallelism.zero, 1);
    QCOMPARE(c.parallelism.schedule, Schedule::OneFOneB);
    QCOMPARE(c.training.globalBatch, qint64(512));
    QCOMPARE(c.training.microBatch, qint64(1));
    QCOMPARE(c.training.precision, Precision::Bf16);
}

void TestConfig::roundTrip_data()
{
    QTest::addColumn<ConfigMutation>("mutation");
    QTest::addColumn<QString>("preset");
    for (const std::string& name : presetNames())
        QTest::newRow(name.c_str()) << ConfigMutation() << qs(name);
    QTest::newRow("every field changed") << ConfigMutation([](Config& c) {
        c.name = "my \"run\" #1: a";
        c.model.family = Family::Moe;
        c.model.experts = 4;
        c.model.topK = 2;
        c.model.expertFfnHidden = 128;
        c.model.sharedExpertFfnHidden = 64;
        c.model.causalMask = false;
        c.model.tiedEmbeddings = true;
        c.model.ropeTheta = 0.1; // not exact in binary: must still read back bit for bit
        c.training.precision = Precision::Fp16;
        c.training.recompute = Recompute::Selective;
        c.training.recomputeModules = recompute_module::kCoreAttn | recompute_module::kMoeAct;
        c.parallelism.dp = 2;
        c.parallelism.ep = 2;
        c.parallelism.schedule = Schedule::Interleaved;
        c.parallelism.virtualStages = 2;
        c.parallelism.rankOrder = { MeshAxis::Dp, MeshAxis::Tp, MeshAxis::Cp, MeshAxis::Ep, MeshAxis::Pp };
        c.parallelism.gradientBucketBytes = (int64_t(25) << 20) + 1; // not a whole MiB
        c.cluster.gpu = "a100-80gb"; // cluster.gpu must name a GPU preset
        c.cluster.gpusPerNode = 4;
        c.cluster.intraNodeBandwidthGbps = 123.456;
        c.cluster.interNodeBandwidthGbps = 1e-3;
    }) << QStringLiteral("tiny");
    QTest::newRow("gpipe, zero 3, full recompute") << ConfigMutation([](Config& c) {
        c.parallelism.schedule = Schedule::GPipe;
        c.parallelism.zero = 3;
        c.parallelism.pp = 2;
        c.training.recompute = Recompute::Full;
        c.training.precision = Precision::Fp32;
    }) << QStringLiteral("tiny");
}

void TestConfig::roundTrip()
{
    QFETCH(ConfigMutation, mutation);
    QFETCH(QString, preset);
    Config original = loadPreset(preset.toStdString());
    if (mutation)
        mutation(original);
    QVERIFY2(validateConfig(original).empty(), qPrintable(dump(validateConfig(original))));

    const std::string yaml = toYaml(original);
    const ConfigResult reloaded = loadConfigText(yaml, "roundtrip.yaml");
    QVERIFY2(reloaded.diagnostics.empty(), qPrintable(dump(reloaded.diagnostics) + QLatin1Char('\n') + qs(yaml)));
    QCOMPARE(qs(toYaml(*reloaded.config)), qs(yaml));
    QVERIFY(*reloaded.config == original);
}

void TestConfig::designExample()
{
    // tests/data/config/good/design_example.yaml is the example of DESIGN.md section 2.
    const ConfigResult result = loadConfigFile(STAGECRAFT_TEST_DATA "/config/good/design_example.yaml");
    QVERIFY2(result.diagnostics.empty(), qPrintable(dump(result.diagnostics)));
    const Config& c = *result.config;
    QCOMPARE(c.name, std::string("llama3-70b-16k"));
    QCOMPARE(c.model.preset, std::string("llama3-70b"));
    QCOMPARE(c.model.layers, qint64(80));
    QCOMPARE(c.model.kvHeads, qint64(8));
    QCOMPARE(c.training.globalBatch, qint64(1024));
    QCOMPARE(c.parallelism.dp, qint64(64));
    QCOMPARE(c.parallelism.tp, qint64(8));
    QCOMPARE(c.parallelism.pp, qint64(32));
    QCOMPARE(c.parallelism.worldSize(), qint64(64 * 8 * 32));
    QCOMPARE(c.parallelism.sequenceParallel, true);
    QCOMPARE(c.parallelism.zero, 1);
    const std::vector<MeshAxis> order { MeshAxis::Tp, MeshAxis::Cp, MeshAxis::Ep, MeshAxis::Dp, MeshAxis::Pp };
    QVERIFY(c.parallelism.rankOrder == order);
    // Keys the example leaves out come from the preset (rope_theta) or config.h (tied_embeddings false).
    QCOMPARE(c.model.ropeTheta, 500000.0);
    QCOMPARE(c.model.tiedEmbeddings, false);
}

void TestConfig::defaults()
{
    // gpt: kv_heads defaults to heads; omitted sections take the defaults of config.h; name defaults to "workload".
    const ConfigResult gpt = loadConfigText("model: {family: gpt, layers: 2, hidden: 256, ffn_hidden: 1024, heads: 8,"
                                            " vocab: 1024, seq_len: 128}\ntraining: {global_batch: 4}\n",
        "gpt.yaml");
    QVERIFY2(gpt.diagnostics.empty(), qPrintable(dump(gpt.diagnostics)));
    QCOMPARE(gpt.config->model.kvHeads, qint64(8));
    QCOMPARE(gpt.config->name, std::string("workload"));
    QCOMPARE(gpt.config->training.microBatch, qint64(1));
    QVERIFY(gpt.config->parallelism == ParallelismConfig());
    QVERIFY(gpt.config->cluster == ClusterConfig());

    // moe: expert_ffn_hidden defaults to ffn_hidden.
    const ConfigResult moe =
        loadConfigText("model: {family: moe, layers: 2, hidden: 256, ffn_hidden: 512, heads: 8, kv_heads: 4,"
                       " vocab: 1024, seq_len: 128, experts: 4, top_k: 2}\ntraining: {global_batch: 4}\n",
            "moe.yaml");
    QVERIFY2(moe.diagnostics.empty(), qPrintable(dump(moe.diagnostics)));
    QCOMPARE(moe.config->model.expertFfnHidden, qint64(512));

    // Without a name, a config based on a model preset is named after it; file keys override the preset.
    const ConfigResult based =
        loadConfigText("model:\n  preset: llama3-8b\n  layers: 4\ntraining:\n  global_batch: 8\n", "based.yaml");
    QVERIFY2(based.diagnostics.empty(), qPrintable(dump(based.diagnostics)));
    QCOMPARE(based.config->name, std::string("llama3-8b"));
    QCOMPARE(based.config->model.layers, qint64(4));
    QCOMPARE(based.config->model.hidden, qint64(4096));
}

void TestConfig::gradientBucket_data()
{
    QTest::addColumn<QString>("mebibytes");
    QTest::addColumn<qint64>("bytes");
    QTest::newRow("25 MiB") << QStringLiteral("25") << qint64(25) * 1024 * 1024;
    QTest::newRow("half a MiB") << QStringLiteral("0.5") << qint64(512) * 1024;
    QTest::newRow("one bucket per layer") << QStringLiteral("0") << qint64(0);
}

void TestConfig::gradientBucket()
{
    QFETCH(QString, mebibytes);
    QFETCH(qint64, bytes);
    const std::string text =
        std::string(kTinyText) + "parallelism:\n  gradient_bucket_mb: " + mebibytes.toStdString() + "\n";
    const ConfigResult result = loadConfigText(text, "bucket.yaml");
    QVERIFY2(result.diagnostics.empty(), qPrintable(dump(result.diagnostics)));
    QCOMPARE(result.config->parallelism.gradientBucketBytes, bytes);
}

void TestConfig::overrides()
{
    const ConfigResult result = loadConfigOrPreset("tiny",
        { "training.recompute=full", "parallelism.rank_order=[dp,tp,cp,ep,pp]", "parallelism.dp=2", "model.layers=4",
            "name=swept" });
    QVERIFY2(result.diagnostics.empty(), qPrintable(dump(result.diagnostics)));
    const Config& c = *result.config;
    QCOMPARE(c.training.recompute, Recompute::Full);
    const std::vector<MeshAxis> order { MeshAxis::Dp, MeshAxis::Tp, MeshAxis::Cp, MeshAxis::Ep, MeshAxis::Pp };
    QVERIFY(c.parallelism.rankOrder == order);
    QCOMPARE(c.parallelism.dp, qint64(2));
    QCOMPARE(c.model.layers, qint64(4));
    QCOMPARE(c.name, std::string("swept"));

    // An override is applied before checking: it repairs a bad value of the file.
    const ConfigResult repaired =
        loadConfigFile(badFile(QStringLiteral("tp_string.yaml")).toStdString(), { "parallelism.tp=2" });
    QVERIFY2(repaired.diagnostics.empty(), qPrintable(dump(repaired.diagnostics)));
    QCOMPARE(repaired.config->parallelism.tp, qint64(2));

    // Overrides create sections the file does not have.
    const ConfigResult created = loadConfigText(kTinyText, "tiny.yaml", { "cluster.gpus_per_node=4" });
    QVERIFY2(created.diagnostics.empty(), qPrintable(dump(created.diagnostics)));
    QCOMPARE(created.config->cluster.gpusPerNode, qint64(4));
}

void TestConfig::badOverride_data()
{
    QTest::addColumn<QString>("assignment");
    QTest::addColumn<QString>("keyPath");
    QTest::addColumn<QString>("reason");
    QTest::newRow("word for integer") << QStringLiteral("parallelism.tp=eight") << QStringLiteral("parallelism.tp")
                                      << QStringLiteral("expected a positive integer, found \"eight\"");
    QTest::newRow("unknown key") << QStringLiteral("parallelism.tpp=2") << QStringLiteral("parallelism.tpp")
                                 << QStringLiteral("unknown key 'tpp' in parallelism; did you mean 'tp'?");
    QTest::newRow("no equals sign") << QStringLiteral("parallelism.tp") << QString()
                                    << QStringLiteral("expected --set key.path=value");
    QTest::newRow("empty path segment") << QStringLiteral("parallelism..tp=2") << QStringLiteral("parallelism..tp")
                                        << QStringLiteral("expected a dotted key path");
    QTest::newRow("malformed value") << QStringLiteral("parallelism.rank_order=[dp,tp")
                                     << QStringLiteral("parallelism.rank_order")
                                     << QStringLiteral("cannot parse the value \"[dp,tp\"");
    QTest::newRow("key inside a scalar") << QStringLiteral("name.x=1") << QStringLiteral("name.x")
                                         << QStringLiteral("cannot set a key inside 'name'");
    QTest::newRow("semantic") << QStringLiteral("parallelism.tp=3") << QStringLiteral("parallelism.tp")
                              << QStringLiteral("tp=3 does not divide heads=8");
    // Megatron-LM's --recompute-modules names (transformer_config.py at d98e8a64).
    QTest::newRow("bad recompute module")
        << QStringLiteral("training.recompute_modules=[core_attn, mlpp]")
        << QStringLiteral("training.recompute_modules")
        << QStringLiteral("expected one of core_attn, layernorm, mla_up_proj, mlp, moe, moe_act, shared_experts, found "
                          "\"mlpp\"; did you mean 'mlp'?");
    QTest::newRow("recompute modules not a list")
        << QStringLiteral("training.recompute_modules=mlp") << QStringLiteral("training.recompute_modules")
        << QStringLiteral("expected a list of Megatron-LM recompute module names like [core_attn, mlp], found \"mlp\"");
    QTest::newRow("bad enum") << QStringLiteral("training.recompute=fulll") << QStringLiteral("training.recompute")
                              << QStringLiteral(
                                     "expected one of none, selective, full, found \"fulll\"; did you mean 'full'?");
}

void TestConfig::badOverride()
{
    QFETCH(QString, assignment);
    QFETCH(QString, keyPath);
    QFETCH(QString, reason);
    const ConfigResult result = loadConfigOrPreset("tiny", { assignment.toStdString() });
    QVERIFY(!result.config);
    const Diagnostic* d = findDiagnostic(result.diagnostics, keyPath.toStdString(), reason.toStdString());
    QVERIFY2(d, qPrintable(dump(result.diagnostics)));
    QCOMPARE(d->severity, Severity::Error);
    QCOMPARE(d->file, std::string("<command line>"));
    QCOMPARE(d->line, 0);
}

void TestConfig::gradientDtypes_data()
{
    // Megatron-LM keeps main gradients in fp32 or the parameter dtype and reduces in fp32 only from fp32 main
    // gradients (megatron/training/arguments.py); fp32 training has fp32 everything. "" = the config loads.
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<QString>("keyPath");
    QTest::addColumn<QString>("reason");
    const QString main = QStringLiteral("training.main_grad_dtype");
    const QString reduce = QStringLiteral("training.grad_reduce_dtype");
    QTest::newRow("defaults fp32 fp32") << QStringList {} << QString() << QString();
    QTest::newRow("grad-reduce-in-bf16") << QStringList { QStringLiteral("training.main_grad_dtype=bf16"),
        QStringLiteral("training.grad_reduce_dtype=bf16") }
                                         << QString() << QString();
    QTest::newRow("fp32 accumulation, bf16 wire")
        << QStringList { QStringLiteral("training.grad_reduce_dtype=bf16") } << QString() << QString();
    QTest::newRow("fp16 everywhere") << QStringList { QStringLiteral("training.precision=fp16"),
        QStringLiteral("training.main_grad_dtype=fp16"), QStringLiteral("training.grad_reduce_dtype=fp16") }
                                     << QString() << QString();
    QTest::newRow("main fp16 under bf16") << QStringList { QStringLiteral("training.main_grad_dtype=fp16") } << main
                                          << QStringLiteral("expected fp32 or the training precision bf16, found fp16");
    QTest::newRow("reduce fp16 under bf16")
        << QStringList { QStringLiteral("training.grad_reduce_dtype=fp16") } << reduce
        << QStringLiteral("expected fp32 or the training precision bf16, found fp16");
    QTest::newRow("reduce wider than main")
        << QStringList { QStringLiteral("training.main_grad_dtype=bf16") } << reduce
        << QStringLiteral("expected bf16 or narrower: main_grad_dtype is bf16, and a reduction in fp32 would be wider "
                          "than the gradients it reduces (Megatron-LM reduces in fp32 only from fp32 main gradients), "
                          "found fp32");
    QTest::newRow("fp32 training, bf16 main")
        << QStringList { QStringLiteral("training.precision=fp32"), QStringLiteral("training.main_grad_dtype=bf16") }
        << main << QStringLiteral("expected fp32 (training.precision is fp32), found bf16");
    QTest::newRow("fp32 training, bf16 reduce")
        << QStringList { QStringLiteral("training.precision=fp32"), QStringLiteral("training.grad_reduce_dtype=bf16") }
        << reduce << QStringLiteral("expected fp32 (training.precision is fp32), found bf16");
}

void TestConfig::gradientDtypes()
{
    QFETCH(QStringList, sets);
    QFETCH(QString, keyPath);
    QFETCH(QString, reason);
    std::vector<std::string> assignments;
    for (const QString& s : sets)
        assignments.push_back(s.toStdString());
    const ConfigResult result = loadConfigOrPreset("tiny", assignments);
    if (keyPath.isEmpty()) {
        QVERIFY2(result.config, qPrintable(dump(result.diagnostics)));
        return;
    }
    QVERIFY(!result.config);
    const Diagnostic* d = findDiagnostic(result.diagnostics, keyPath.toStdString(), reason.toStdString());
    QVERIFY2(d, qPrintable(dump(result.diagnostics)));
    QCOMPARE(d->severity, Severity::Error);
}

void TestConfig::suggestions_data()
{
    QTest::addColumn<QString>("word");
    QTest::addColumn<QStringList>("candidates");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<int>("distance"); // to `expected`, counted by hand
    const QStringList model { QStringLiteral("layers"), QStringLiteral("hidden"), QStringLiteral("heads"),
        QStringLiteral("kv_heads") };
    QTest::newRow("deletion") << QStringLiteral("hiden") << model << QStringLiteral("hidden") << 1;
    QTest::newRow("insertion") << QStringLiteral("layerss") << model << QStringLiteral("layers") << 1;
    QTest::newRow("substitution") << QStringLiteral("kv_heaps") << model << QStringLiteral("kv_heads") << 1;
    QTest::newRow("swap") << QStringLiteral("gtp")
                          << QStringList { QStringLiteral("gpt"), QStringLiteral("llama"), QStringLiteral("moe") }
                          << QStringLiteral("gpt") << 1;
    QTest::newRow("long word, 3 edits") << QStringLiteral("paralelizn")
                                        << QStringList { QStringLiteral("model"), QStringLiteral("parallelism") }
                                        << QStringLiteral("parallelism") << 3;
    // A prefix of exactly one candidate wins over one edit: "h100" is 1 from "h200", 4 from "h100-sxm".
    const QStringList gpus { QStringLiteral("a100-80gb"), QStringLiteral("b200"), QStringLiteral("h100-sxm"),
        QStringLiteral("h200") };
    QTest::newRow("prefix") << QStringLiteral("h100") << gpus << QStringLiteral("h100-sxm") << 4;
    QTest::newRow("prefix, any case") << QStringLiteral("A100") << gpus << QStringLiteral("a100-80gb") << 6;
    // kitten -> sitting is the textbook Levenshtein example (3 edits); 3 > 6 / 3, so no suggestion.
    QTest::newRow("too far") << QStringLiteral("kitten") << QStringList { QStringLiteral("sitting") } << QString() << 3;
}

void TestConfig::suggestions()
{
    QFETCH(QString, word);
    QFETCH(QStringList, candidates);
    QFETCH(QString, expected);
    QFETCH(int, distance);
    std::vector<std::string> storage;
    for (const QString& candidate : candidates)
        storage.push_back(candidate.toStdString());
    const std::vector<std::string_view> views(storage.begin(), storage.end());
    QCOMPARE(qs(closestMatch(word.toStdString(), views)), expected);
    const std::string target = expected.isEmpty() ? storage.front() : expected.toStdString();
    QCOMPARE(int(editDistance(word.toStdString(), target)), distance);
    QCOMPARE(int(editDistance(target, word.toStdString())), distance);
}

void TestConfig::badFiles_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("keyPath");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<int>("errors"); // errors in the whole file
    QTest::addColumn<bool>("isError"); // false: a warning

    auto row = [](const char* name, int line, int column, const char* keyPath, const char* reason, int errors,
                   bool isError = true) {
        QTest::newRow(name) << QString::fromUtf8(name) + QLatin1String(".yaml") << line << column
                            << QString::fromUtf8(keyPath) << QString::fromUtf8(reason) << errors << isError;
    };
    // Line and column are those of the offending value in the file (of the key for unknown and duplicate keys,
    // and for missing keys the key of their section).
    row("tp_string", 7, 7, "parallelism.tp", "expected a positive integer, found \"eight\"", 1);
    row("layers_float", 3, 11, "model.layers", "expected a positive integer, found 2.5", 1);
    row("dp_negative", 6, 9, "parallelism.dp", "expected a positive integer, found -4", 1);
    row("micro_batch_zero", 2, 43, "training.micro_batch", "expected a positive integer, found 0", 1);
    row("unknown_key", 3, 3, "model.hiden", "unknown key 'hiden' in model; did you mean 'hidden'?", 1);
    row("heads_kv", 7, 10, "model.heads", "heads=30 is not divisible by kv_heads=8", 1);
    row("missing_fields", 2, 1, "model.layers", "missing required key 'layers' (no model.preset given)", 2);
    row("missing_fields", 2, 1, "model.vocab", "missing required key 'vocab'", 2);
    row("missing_training", 1, 1, "training.global_batch", "missing required key 'global_batch'", 1);
    // The line " training:" is indented by one space: the parser stops at its first character.
    row("malformed_indent", 3, 2, "", "malformed YAML: end of map not found", 1);
    // The '[' of line 4 is never closed: the parser fails at the ':' of "training:" (line 5) inside the list.
    row("malformed_bracket", 5, 9, "", "malformed YAML: end of sequence flow not found (is a ']' missing?)", 1);
    row("bad_enum", 5, 14, "training.precision", "expected one of fp32, fp16, bf16, fp8, found \"bf8\"", 1);
    row("family_bad", 3, 11, "model.family", "expected one of gpt, llama, moe, found \"gtp\"; did you mean 'gpt'?", 1);
    // tiny: heads 8, kv_heads 4, ffn_hidden 512; 3 divides none of them.
    row("tp_heads", 6, 7, "parallelism.tp", "tp=3 does not divide heads=8", 3);
    row("tp_heads", 6, 7, "parallelism.tp", "tp=3 does not divide kv_heads=4", 3);
    row("tp_heads", 6, 7, "parallelism.tp", "tp=3 does not divide ffn_hidden=512", 3);
    row("global_batch", 4, 17, "training.global_batch", "global_batch=10 is not divisible by micro_batch*dp = 2*2 = 4",
        1);
    row("rank_order_dup", 6, 15, "parallelism.rank_order", "(tp appears 2 times, ep is missing)", 1);
    row("rank_order_axis", 9, 7, "parallelism.rank_order", "expected one of dp, tp, cp, ep, pp, found \"data\"", 1);
    row("ep_dp", 7, 7, "parallelism.ep", "ep=8 does not divide dp=4", 1);
    row("name_slash", 1, 7, "name", "name \"runs/tiny\" must not contain a path separator", 1);
    row("multi", 6, 14, "training.precision", "expected one of fp32, fp16, bf16, fp8, found \"fp4\"", 4);
    row("multi", 8, 7, "parallelism.tp", "expected a positive integer, found \"eight\"", 4);
    row("multi", 9, 9, "parallelism.zero", "expected one of 0, 1, 2, 3, found 5", 4);
    row("multi", 11, 3, "cluster.gpus_per_nod", "did you mean 'gpus_per_node'?", 4);
    row("unknown_section", 5, 1, "paralelism", "unknown key 'paralelism' at the top level; did you mean 'parallelism'?",
        1);
    row("list_for_scalar", 3, 11, "model.hidden", "expected a positive integer, found a list", 1);
    row("duplicate_key", 8, 3, "parallelism.tp", "duplicate key 'tp' (first given at line 6)", 1);
    row("bool_bad", 3, 16, "model.causal_mask", "expected true or false, found \"maybe\"", 1);
    row("gpt_kv", 7, 13, "model.kv_heads", "kv_heads=2 must equal heads=8", 1);
    row("moe_top_k", 11, 10, "model.top_k", "1 <= top_k <= experts=2, found top_k=3", 1);
    row("virtual_stages", 7, 19, "parallelism.virtual_stages", "needs schedule interleaved, found schedule 1f1b", 1);
    row("pp_layers", 6, 7, "parallelism.pp", "pp=4 exceeds layers=2", 1);
    row("empty_value", 3, 3, "model.layers", "expected a positive integer, found nothing", 1);
    // The GPU presets are the files of resources/gpus; "h100" begins exactly one of them.
    row("unknown_gpu", 6, 8, "cluster.gpu",
        "unknown GPU \"h100\"; known GPUs: a100-80gb, b200, h100-sxm, h200; did you mean 'h100-sxm'?", 1);
    // yaml-cpp alone reads the last line as name "abc " and the mid-file quote as a value of five lines.
    row("quote_last_line", 5, 7, "name",
        "unterminated quoted string: the \" opened here is not closed on this line (add the closing \"", 1);
    row("quote_mid_file", 4, 8, "cluster.gpu", "unterminated quoted string: the ' opened here is not closed", 1);
    row("second_document", 5, 1, "", "a second YAML document starts here; a config is one document", 1);
    // \t and \0 are YAML escapes inside double quotes: the value holds a tab (0x09) and a NUL (0x00).
    row("name_tab", 1, 7, "name", "the name contains the control character 0x09 (a tab); it names output files", 1);
    row("name_nul", 1, 7, "name", "the name contains the control character 0x00 (NUL)", 1);
    row("name_dot", 1, 7, "name", "name \".\" must not be only dots", 1);
    // 255 - 38 (kMaxNameBytes' derivation in configvalidator.h) = 217 bytes fit; the file's name has 218.
    row("name_too_long", 1, 7, "name", "the name is 218 bytes, more than the 217 that fit in a file name", 1);
    row("hf_alias", 3, 3, "model.num_attention_heads", "did you mean 'heads'?", 1);
    row("not_a_mapping", 1, 1, "", "expected a mapping with the sections", 1);
    row("unknown_preset", 2, 11, "model.preset", "unknown preset \"llama3-9b\"", 1);
    row("unknown_preset", 2, 11, "model.preset", "did you mean 'llama3-8b'?", 1);
    row("cp_seq_len", 6, 7, "parallelism.cp", "cp=3 does not divide seq_len=128", 1);
    row("too_large", 3, 11, "model.hidden", "no larger than 2147483647, found 99999999999999999999", 1);
    row("sequence_parallel_tp1", 7, 22, "parallelism.sequence_parallel", "no effect with tp=1", 0, false);
}

void TestConfig::badFiles()
{
    QFETCH(QString, file);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, keyPath);
    QFETCH(QString, reason);
    QFETCH(int, errors);
    QFETCH(bool, isError);

    const std::string path = badFile(file).toStdString();
    QVERIFY(QFile::exists(badFile(file)));
    const ConfigResult result = loadConfigFile(path);
    QCOMPARE(errorCount(result.diagnostics), errors);
    QCOMPARE(result.config.has_value(), errors == 0);
    for (const Diagnostic& d : result.diagnostics)
        QCOMPARE(d.file, path);

    const Diagnostic* d = findDiagnostic(result.diagnostics, keyPath.toStdString(), reason.toStdString());
    QVERIFY2(d, qPrintable(dump(result.diagnostics)));
    QCOMPARE(d->line, line);
    QCOMPARE(d->column, column);
    QCOMPARE(d->severity, isError ? Severity::Error : Severity::Warning);
}

void TestConfig::validate_data()
{
    QTest::addColumn<ConfigMutation>("mutation");
    QTest::addColumn<QString>("keyPath");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<int>("errors");
    QTest::addColumn<bool>("isError");

    // Each row changes the tiny preset (llama, 2 layers, hidden 256, ffn 512, heads 8, kv 4, seq 128,
    // global_batch 4, micro_batch 2, all degrees 1).
    auto row = [](const char* name, ConfigMutation m, const char* keyPath, const char* reason, int errors,
                   bool isError = true) {
        QTest::newRow(name) << std::move(m) << QString::fromUtf8(keyPath) << QString::fromUtf8(reason) << errors
                            << isError;
    };
    row(
        "recompute_modules without selective", [](Config& c) { c.training.recomputeModules = recompute_module::kMlp; },
        "training.recompute_modules",
        "recompute_modules chooses what recompute selective re-runs; recompute is none, so the list is ignored", 0,
        false);
    row(
        "mla_up_proj without MLA",
        [](Config& c) {
            c.training.recompute = Recompute::Selective;
            c.training.recomputeModules = recompute_module::kMlaUpProj;
        },
        "training.recompute_modules", "mla_up_proj needs multi-latent attention", 1);
    row(
        "moe_act on a dense model",
        [](Config& c) {
            c.training.recompute = Recompute::Selective;
            c.training.recomputeModules = recompute_module::kCoreAttn | recompute_module::kMoeAct;
        },
        "training.recompute_modules", "moe_act needs a moe model", 1);
    row(
        "no recompute modules",
        [](Config& c) {
            c.training.recompute = Recompute::Selective;
            c.training.recomputeModules = 0;
        },
        "training.recompute_modules", "an empty list re-runs nothing", 1);
    row(
        "fp8 main gradients",
        [](Config& c) {
            c.training.precision = Precision::Fp8;
            c.training.mainGradDtype = Precision::Fp8;
        },
        "training.main_grad_dtype", "expected fp32 or bf16 (fp8 training keeps bf16 weights), found fp8", 1);
    row(
        "fp8 serving",
        [](Config& c) {
            c.workload = Workload::Inference;
            c.training.precision = Precision::Fp8;
        },
        "training.precision", "FP8 serving is not modelled, so this serves in bf16", 0, false);
    row(
        "hidden % heads", [](Config& c) { c.model.hidden = 250; }, "model.hidden",
        "hidden=250 is not divisible by heads=8", 1);
    row(
        "kv_heads > heads", [](Config& c) { c.model.kvHeads = 16; }, "model.kv_heads", "kv_heads=16 exceeds heads=8",
        1);
    row(
        "heads % kv_heads", [](Config& c) { c.model.kvHeads = 3; }, "model.heads",
        "heads=8 is not divisible by kv_heads=3", 1);
    row(
        "gpt is MHA", [](Config& c) { c.model.family = Family::Gpt; }, "model.kv_heads",
        "kv_heads=4 must equal heads=8", 1);
    row(
        "moe without experts", [](Config& c) { c.model.family = Family::Moe; }, "model.experts",
        "family moe needs experts >= 1, found 0", 2); // and expert_ffn_hidden 0
    row(
        "moe top_k > experts",
        [](Config& c) {
            c.model.family = Family::Moe;
            c.model.experts = 4;
            c.model.topK = 5;
            c.model.expertFfnHidden = 256;
        },
        "model.top_k", "1 <= top_k <= experts=4, found top_k=5", 1);
    row(
        "experts without moe", [](Config& c) { c.model.experts = 4; }, "model.experts",
        "experts=4 needs family moe (family is llama)", 1);
    row(
        "global_batch", [](Config& c) { c.parallelism.dp = 3; }, "training.global_batch",
        "global_batch=4 is not divisible by micro_batch*dp = 2*3 = 6", 1);
    row(
        "tp vs heads", [](Config& c) { c.parallelism.tp = 16; }, "parallelism.tp", "tp=16 does not divide heads=8",
        2); // and kv_heads=4; ffn 512 is a multiple of 16
    row(
        "tp vs ffn",
        [](Config& c) {
            c.model.ffnHidden = 510;
            c.parallelism.tp = 4;
        },
        "parallelism.tp", "tp=4 does not divide ffn_hidden=510", 1);
    row(
        "pp > layers", [](Config& c) { c.parallelism.pp = 3; }, "parallelism.pp", "pp=3 exceeds layers=2", 1);
    row(
        "ep vs dp", [](Config& c) { c.parallelism.ep = 2; }, "parallelism.ep", "ep=2 does not divide dp=1", 1);
    row(
        "ep vs experts",
        [](Config& c) {
            makeMoe(c, 3, 3); // 128 tokens x 3 routes spread evenly over 3 experts (the next rows)
            c.parallelism.dp = 4;
            c.parallelism.ep = 2;
        },
        "parallelism.ep", "ep=2 does not divide experts=3", 1);
    // The model graph spreads a rank's routed tokens evenly over the experts: tiny's micro-batch of 1 x 128
    // tokens, top_k 1, over 6 experts is 21 1/3 each; with sequence parallelism over tp 2 the rank holds 64.
    row(
        "routed tokens vs experts", [](Config& c) { makeMoe(c, 6, 1); }, "parallelism.cp",
        "routes micro_batch*seq_len/cp*top_k = 1*128/1*1 = 128 tokens per rank, not divisible by experts=6", 1);
    row(
        "routed tokens vs experts, sequence parallel",
        [](Config& c) {
            makeMoe(c, 128, 1);
            c.parallelism.tp = 2;
            c.parallelism.sequenceParallel = true;
        },
        "parallelism.cp", "routes micro_batch*seq_len/(cp*tp)*top_k = 1*128/2*1 = 64 tokens per rank", 1);
    row(
        "ep without experts",
        [](Config& c) {
            c.parallelism.dp = 2;
            c.parallelism.ep = 2;
        },
        "parallelism.ep", "ep=2 has no effect", 0, false);
    row(
        "sequence_parallel, tp 1", [](Config& c) { c.parallelism.sequenceParallel = true; },
        "parallelism.sequence_parallel", "no effect with tp=1", 0, false);
    row(
        "cp vs seq_len", [](Config& c) { c.parallelism.cp = 3; }, "parallelism.cp", "cp=3 does not divide seq_len=128",
        1);
    row(
        "sequence_parallel vs seq_len",
        [](Config& c) {
            c.model.seqLen = 130;
            c.parallelism.tp = 4;
            c.parallelism.sequenceParallel = true;
        },
        "parallelism.sequence_parallel", "seq_len=130 divisible by cp*tp = 1*4 = 4", 1);
    row(
        "virtual stages need interleaved", [](Config& c) { c.parallelism.virtualStages = 2; },
        "parallelism.virtual_stages", "virtual_stages=2 needs schedule interleaved", 1);
    row(
        "interleaved layers",
        [](Config& c) {
            c.parallelism.schedule = Schedule::Interleaved;
            c.parallelism.pp = 2;
            c.parallelism.virtualStages = 2;
        },
        "parallelism.virtual_stages", "layers=2 divisible by pp*virtual_stages = 2*2 = 4", 1);
    row(
        // tiny: global_batch 4 / micro_batch 2 = 2 micro-batches, fewer than pp=4. Megatron-LM (d98e8a64) walks
        // them in groups of microbatch_group_size_per_vp_stage (default pp) and needs at least pp of them.
        "interleaved micro-batches",
        [](Config& c) {
            c.model.layers = 8;
            c.parallelism.schedule = Schedule::Interleaved;
            c.parallelism.pp = 4;
            c.parallelism.virtualStages = 2;
        },
        "parallelism.schedule", "needs at least pp=4 micro-batches, found the micro-batches per iteration", 1);
    // 6 micro-batches on pp 4 walk in groups of N = pp = 4, leaving a last group of 2 < pp: Megatron-LM raises
    // "The remainder of M ... divided by N ... should be 0, or larger than or equal to the pipeline-parallel size"
    // (schedules.py, d98e8a64). N = 6 (one group) is allowed.
    auto sixOnFour = [](Config& c) {
        c.model.layers = 8;
        c.training.globalBatch = 6;
        c.training.microBatch = 1;
        c.parallelism.schedule = Schedule::Interleaved;
        c.parallelism.pp = 4;
        c.parallelism.virtualStages = 2;
    };
    row("interleaved short last group", sixOnFour, "parallelism.schedule", "leaves a last group of 2 micro-batches", 1);
    row(
        "interleaved group size out of range",
        [sixOnFour](Config& c) {
            sixOnFour(c);
            c.parallelism.microBatchGroupSize = 3;
        },
        "parallelism.microbatch_group_size", "microbatch_group_size=3 must lie between pp=4 and", 1);
    row(
        "interleaved, one virtual stage", [](Config& c) { c.parallelism.schedule = Schedule::Interleaved; },
        "parallelism.schedule", "plain 1f1b", 0, false);
    row(
        "zero 4", [](Config& c) { c.parallelism.zero = 4; }, "parallelism.zero", "expected one of 0, 1, 2, 3, found 4",
        1);
    row(
        "rank order short",
        [](Config& c) {
            c.parallelism.rankOrder = { MeshAxis::Tp, MeshAxis::Cp, MeshAxis::Dp, MeshAxis::Pp };
        },
        "parallelism.rank_order", "found 4 axes (ep is missing)", 1);
    row(
        "name with ..", [](Config& c) { c.name = "a..b"; }, "name", "must not contain \"..\"", 1);
    row(
        "name with backslash", [](Config& c) { c.name = "a\\b"; }, "name", "must not contain a path separator", 1);
    row(
        "empty name", [](Config& c) { c.name.clear(); }, "name", "expected a non-empty name", 1);
    row(
        "optimizer", [](Config& c) { c.training.optimizer = "sgd"; }, "training.optimizer",
        "expected adam (the only optimizer modelled), found \"sgd\"", 1);
    row(
        "world size",
        [](Config& c) {
            c.parallelism.dp = int64_t(1) << 18;
            c.parallelism.cp = 128;
        },
        "parallelism.dp", "exceeds the supported maximum of 16777216 GPUs", 2); // and global_batch
    row(
        "bandwidth 0", [](Config& c) { c.cluster.interNodeBandwidthGbps = 0; }, "cluster.inter_node_bandwidth_gbps",
        "expected a positive number (GB/s), found 0", 1);
    row(
        "gpus_per_node 0", [](Config& c) { c.cluster.gpusPerNode = 0; }, "cluster.gpus_per_node",
        "expected a positive integer, found 0", 1);
    row(
        "layers 0", [](Config& c) { c.model.layers = 0; }, "model.layers", "expected a positive integer, found 0", 1);
    row(
        "negative bucket", [](Config& c) { c.parallelism.gradientBucketBytes = -1; }, "parallelism.gradient_bucket_mb",
        "expected a non-negative size, found -1 bytes", 1);
}

void TestConfig::validate()
{
    QFETCH(ConfigMutation, mutation);
    QFETCH(QString, keyPath);
    QFETCH(QString, reason);
    QFETCH(int, errors);
    QFETCH(bool, isError);

    Config config = loadPreset("tiny");
    QVERIFY(validateConfig(config).empty());
    mutation(config);
    const std::vector<Diagnostic> diagnostics = validateConfig(config);
    QCOMPARE(errorCount(diagnostics), errors);
    const Diagnostic* d = findDiagnostic(diagnostics, keyPath.toStdString(), reason.toStdString());
    QVERIFY2(d, qPrintable(dump(diagnostics)));
    QCOMPARE(d->severity, isError ? Severity::Error : Severity::Warning);
    QCOMPARE(d->line, 0);
    QCOMPARE(d->column, 0);
}

void TestConfig::anchoring_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("overrides");
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("keyPath");
    QTest::addColumn<QString>("reason");

    const QString tiny = QString::fromUtf8(kTinyText); // lines 1-4
    QTest::newRow("value in the file") << tiny + QLatin1String("parallelism:\n  tp: 16\n") << QStringList()
                                       << QStringLiteral("a.yaml") << 6 << 7 << QStringLiteral("parallelism.tp")
                                       << QStringLiteral("tp=16 does not divide heads=8");
    // kv_heads=4 comes from the preset: the problem is shown at "tiny" (line 2, column 11).
    QTest::newRow("value from the preset")
        << tiny + QLatin1String("parallelism:\n  dp: 1\n") << QStringList { QStringLiteral("model.family=gpt") }
        << QStringLiteral("a.yaml") << 2 << 11 << QStringLiteral("model.kv_heads")
        << QStringLiteral("kv_heads=4 must equal heads=8");
    // dp is not in the file: the world-size problem (2^25 > 2^24 GPUs) is shown at the "parallelism:" key.
    QTest::newRow("key not in the file") << tiny + QLatin1String("parallelism:\n  tp: 33554432\n") << QStringList()
                                         << QStringLiteral("a.yaml") << 5 << 1 << QStringLiteral("parallelism.dp")
                                         << QStringLiteral("exceeds the supported maximum");
    QTest::newRow("value from --set") << tiny << QStringList { QStringLiteral("parallelism.tp=16") }
                                      << QStringLiteral("<command line>") << 0 << 0 << QStringLiteral("parallelism.tp")
                                      << QStringLiteral("tp=16 does not divide heads=8");
}

void TestConfig::anchoring()
{
    QFETCH(QString, text);
    QFETCH(QStringList, overrides);
    QFETCH(QString, file);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, keyPath);
    QFETCH(QString, reason);

    std::vector<std::string> assignments;
    for (const QString& o : overrides)
        assignments.push_back(o.toStdString());
    const ConfigResult result = loadConfigText(text.toStdString(), "a.yaml", assignments);
    QVERIFY(!result.config);
    const Diagnostic* d = findDiagnostic(result.diagnostics, keyPath.toStdString(), reason.toStdString());
    QVERIFY2(d, qPrintable(dump(result.diagnostics)));
    QCOMPARE(qs(d->file), file);
    QCOMPARE(d->line, line);
    QCOMPARE(d->column, column);
}

void TestConfig::diagnosticToString()
{
    const Diagnostic made { Severity::Error, "a.yaml", 3, 7, "parallelism.tp", "tp=3 does not divide heads=32" };
    QCOMPARE(qs(made.toString()), QStringLiteral("a.yaml:3:7: error: parallelism.tp: tp=3 does not divide heads=32"));

    const std::string path = badFile(QStringLiteral("tp_string.yaml")).toStdString();
    const ConfigResult bad = loadConfigFile(path);
    QCOMPARE(bad.diagnostics.size(), size_t(1));
    QCOMPARE(qs(bad.diagnostics.front().toString()),
        qs(path) + QLatin1String(":7:7: error: parallelism.tp: expected a positive integer, found \"eight\""));

    const ConfigResult warned = loadConfigFile(badFile(QStringLiteral("sequence_parallel_tp1.yaml")).toStdString());
    QCOMPARE(warned.diagnostics.size(), size_t(1));
    QVERIFY(qs(warned.diagnostics.front().toString())
                .endsWith(QLatin1String(
                    ":7:22: warning: parallelism.sequence_parallel: sequence_parallel has no effect with tp=1")));

    const ConfigResult set = loadConfigOrPreset("tiny", { "parallelism.dp=0" });
    QCOMPARE(set.diagnostics.size(), size_t(1));
    QCOMPARE(qs(set.diagnostics.front().toString()),
        QStringLiteral("<command line>: error: parallelism.dp: expected a positive integer, found 0"));
}

void TestConfig::configOrPreset()
{
    const ConfigResult file = loadConfigOrPreset(STAGECRAFT_TEST_DATA "/config/good/design_example.yaml");
    QVERIFY2(file.config, qPrintable(dump(file.diagnostics)));
    QCOMPARE(file.config->name, std::string("llama3-70b-16k"));

    const ConfigResult preset = loadConfigOrPreset("mixtral-8x7b");
    QVERIFY2(preset.config, qPrintable(dump(preset.diagnostics)));
    QCOMPARE(preset.config->model.family, Family::Moe);

    const ConfigResult unknown = loadConfigOrPreset("llama3-8");
    QVERIFY(!unknown.config);
    QCOMPARE(unknown.diagnostics.size(), size_t(1));
    const Diagnostic& d = unknown.diagnostics.front();
    QCOMPARE(d.file, std::string("llama3-8"));
    QVERIFY2(d.message.find("did you mean 'llama3-8b'?") != std::string::npos, d.message.c_str());
    for (const std::string& name : presetNames())
        QVERIFY2(d.message.find(name) != std::string::npos, name.c_str());
}

void TestConfig::unreadableInput()
{
    const std::string missing = STAGECRAFT_TEST_DATA "/config/no-such-file.yaml";
    const ConfigResult noFile = loadConfigFile(missing);
    QVERIFY(!noFile.config);
    QCOMPARE(noFile.diagnostics.size(), size_t(1));
    QCOMPARE(noFile.diagnostics.front().file, missing);
    QVERIFY(noFile.diagnostics.front().message.find("cannot open") != std::string::npos);

    const ConfigResult directory = loadConfigFile(STAGECRAFT_TEST_DATA "/config");
    QCOMPARE(directory.diagnostics.size(), size_t(1));
    QVERIFY(directory.diagnostics.front().message.find("is a directory") != std::string::npos);

    // An alias that contains itself would expand forever.
    const ConfigResult recursive = loadConfigText("a: &x [*x]\n", "r.yaml");
    QCOMPARE(recursive.diagnostics.size(), size_t(1));
    QVERIFY(recursive.diagnostics.front().message.find("nesting deeper than") != std::string::npos);

    // An empty file lacks the model and training.global_batch, and says so once each.
    const ConfigResult empty = loadConfigText("", "e.yaml");
    QCOMPARE(errorCount(empty.diagnostics), 2);
    QVERIFY(findDiagnostic(empty.diagnostics, "model", "missing required section 'model'"));
    QVERIFY(findDiagnostic(empty.diagnostics, "training.global_batch", "missing required key 'global_batch'"));
}

void TestConfig::inputLimits_data()
{
    QTest::addColumn<QString>("path"); // "%big": a file of `bytes` bytes, "%fifo": a FIFO, both made here
    QTest::addColumn<qint64>("bytes");
    QTest::addColumn<QString>("reason");
    const QString limit = QStringLiteral("larger than the limit of 65536 bytes (64 KiB) for a config");
    QTest::newRow("one byte over") << QStringLiteral("%big") << qint64(65536 + 1) << limit;
    // python3 -c "print('[' + '1,'*5000000 + '1]')": the 10 MB one-line list of the bug report.
    QTest::newRow("10 MB list") << QStringLiteral("%big") << qint64(2 * 5000000 + 3) << limit;
    QTest::newRow("directory") << QStringLiteral(STAGECRAFT_TEST_DATA "/config") << qint64(0)
                               << QStringLiteral("is a directory, expected a YAML config file (a regular file)");
    QTest::newRow("character device, endless") << QStringLiteral("/dev/zero") << qint64(0)
                                               << QStringLiteral("is a character device, expected a YAML config file");
    QTest::newRow("FIFO without a writer") << QStringLiteral("%fifo") << qint64(0)
                                           << QStringLiteral("is a FIFO (named pipe), expected a YAML config file");
}

void TestConfig::inputLimits()
{
    QFETCH(QString, path);
    QFETCH(qint64, bytes);
    QFETCH(QString, reason);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    if (path == QLatin1String("%big")) {
        path = dir.filePath(QStringLiteral("big.yaml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QByteArray text = "[" + QByteArray("1,").repeated(int((bytes - 3) / 2)) + "1]";
        text.append(QByteArray(int(bytes - text.size()), '\n'));
        QCOMPARE(file.write(text), bytes);
    } else if (path == QLatin1String("%fifo")) {
        path = dir.filePath(QStringLiteral("pipe.yaml"));
        QCOMPARE(::mkfifo(QFile::encodeName(path).constData(), 0600), 0);
    }
    // Through the file and the preset-or-file entry points (the CLI's): both must return, not block or read on.
    for (const ConfigResult& result : { loadConfigFile(path.toStdString()), loadConfigOrPreset(path.toStdString()) }) {
        QVERIFY(!result.config);
        QCOMPARE(result.diagnostics.size(), size_t(1));
        QCOMPARE(qs(result.diagnostics.front().file), path);
        QVERIFY2(qs(result.diagnostics.front().message).contains(reason), qPrintable(dump(result.diagnostics)));
    }

    // Text is held to the same limit; a config of exactly the limit loads.
    std::string text = kTinyText;
    text += "#" + std::string(kMaxConfigBytes - text.size() - 2, '-') + "\n";
    QCOMPARE(text.size(), kMaxConfigBytes);
    const ConfigResult atLimit = loadConfigText(text, "limit.yaml");
    QVERIFY2(atLimit.config, qPrintable(dump(atLimit.diagnostics)));
    text += "\n";
    const ConfigResult over = loadConfigText(text, "over.yaml");
    QVERIFY(!over.config);
    QVERIFY(findDiagnostic(over.diagnostics, "", "the config is 65537 bytes, more than the limit of 65536 bytes"));
}

void TestConfig::yamlText_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("line"); // 0: the text loads
    QTest::addColumn<int>("column");
    QTest::addColumn<QString>("keyPath");
    QTest::addColumn<QString>("reason");
    const QString tiny = QString::fromUtf8(kTinyText); // lines 1-4
    const QString open = QStringLiteral("unterminated quoted string: the \" opened here");
    const QString openSingle = QStringLiteral("unterminated quoted string: the ' opened here");
    const QString second = QStringLiteral("a second YAML document starts here");
    QTest::newRow("open quote, last line, newline")
        << tiny + QLatin1String("name: \"abc\n") << 5 << 7 << QStringLiteral("name") << open;
    QTest::newRow("open quote, last line, no newline")
        << tiny + QLatin1String("name: \"abc") << 5 << 7 << QStringLiteral("name") << open;
    QTest::newRow("open quote, first line")
        << QLatin1String("name: \"abc\n") + tiny << 1 << 7 << QStringLiteral("name") << open;
    QTest::newRow("open quote, nested key") << tiny + QLatin1String("cluster:\n  gpus_per_node: 8\n  gpu: 'h100\n") << 7
                                            << 8 << QStringLiteral("cluster.gpu") << openSingle;
    QTest::newRow("open quote in a flow list")
        << tiny + QLatin1String("parallelism:\n  rank_order: [tp, \"cp, ep, dp, pp]\n") << 6 << 20
        << QStringLiteral("parallelism.rank_order") << open;
    QTest::newRow("escaped quote does not close")
        << tiny + QLatin1String("name: \"a\\\"\n") << 5 << 7 << QStringLiteral("name") << open;
    QTest::newRow("quote spanning lines")
        << tiny + QLatin1String("name: \"a\n  b\"\n") << 5 << 7 << QStringLiteral("name") << open;
    QTest::newRow("second document") << tiny + QLatin1String("---\nname: b\n") << 5 << 1 << QString() << second;
    QTest::newRow("empty second document") << tiny + QLatin1String("--- \n") << 5 << 1 << QString() << second;
    QTest::newRow("document after '...'") << tiny + QLatin1String("...\nname: b\n") << 6 << 1 << QString() << second;
    // yaml-cpp ends the document at a stray ',' and would read the rest as endless empty documents (found by
    // fuzz_config_loader: YAML::LoadAll never returned).
    QTest::newRow("stray comma before the first key")
        << QLatin1String(",\n") + tiny << 1 << 1 << QString() << QStringLiteral("malformed YAML: the document ends");
    // Accepted: quotes that are not quoted scalars, a leading '---', a closing '...', quotes in a block scalar.
    QTest::newRow("leading ---") << QLatin1String("%YAML 1.2\n---\n") + tiny << 0 << 0 << QString() << QString();
    QTest::newRow("closing ...") << tiny + QLatin1String("...\n# done\n") << 0 << 0 << QString() << QString();
    QTest::newRow("quote inside a plain value")
        << tiny + QLatin1String("name: it's \"x\n") << 0 << 0 << QString() << QString();
    QTest::newRow("quote in a comment") << tiny + QLatin1String("# it's \"quoted\nname: a # \"\n") << 0 << 0
                                        << QString() << QString();
    QTest::newRow("'' inside single quotes")
        << tiny + QLatin1String("name: 'it''s'\n") << 0 << 0 << QString() << QString();
    QTest::newRow("block scalar") << tiny + QLatin1String("name: >-\n  run \"one\n  ---\n") << 0 << 0 << QString()
                                  << QString();
}

void TestConfig::yamlText()
{
    QFETCH(QString, text);
    QFETCH(int, line);
    QFETCH(int, column);
    QFETCH(QString, keyPath);
    QFETCH(QString, reason);
    const ConfigResult result = loadConfigText(text.toStdString(), "t.yaml");
    if (line == 0) {
        QVERIFY2(result.config, qPrintable(dump(result.diagnostics)));
        return;
    }
    QVERIFY(!result.config);
    QCOMPARE(errorCount(result.diagnostics), 1);
    const Diagnostic* d = findDiagnostic(result.diagnostics, keyPath.toStdString(), reason.toStdString());
    QVERIFY2(d, qPrintable(dump(result.diagnostics)));
    QCOMPARE(d->line, line);
    QCOMPARE(d->column, column);
}

void TestConfig::synthesisAnchoring()
{
    // A loaded config knows where each key was given, also for keys from a preset or --set.
    const ConfigResult result =
        loadConfigText(std::string(kTinyText) + "parallelism:\n  tp: 2\n", "a.yaml", { "training.micro_batch=1" });
    QVERIFY2(result.config, qPrintable(dump(result.diagnostics)));
    const std::shared_ptr<const ConfigLocations> where = result.config->origin.locations;
    QVERIFY(where);
    QCOMPARE(where->find("parallelism.tp").line, 6);
    QCOMPARE(where->find("parallelism.tp").column, 7);
    QCOMPARE(where->find("model.hidden").line, 2); // from the preset: at "tiny"
    QCOMPARE(where->find("model.hidden").column, 11);
    QCOMPARE(qs(where->find("training.micro_batch").file), QStringLiteral("<command line>"));
    QCOMPARE(where->find("cluster.gpu").line, 0); // not given at all
    QCOMPARE(qs(where->find("cluster.gpu").file), QStringLiteral("a.yaml"));

    std::vector<Diagnostic> problems { { Severity::Error, {}, 0, 0, "parallelism.tp", "x" },
        { Severity::Error, "b.yaml", 9, 9, "parallelism.tp", "y" } };
    anchorDiagnostics(*result.config, problems);
    QCOMPARE(qs(problems[0].toString()), QStringLiteral("a.yaml:6:7: error: parallelism.tp: x"));
    QCOMPARE(qs(problems[1].toString()), QStringLiteral("b.yaml:9:9: error: parallelism.tp: y")); // kept

    // The origin is not part of the value.
    Config copy = *result.config;
    copy.origin = {};
    QVERIFY(copy == *result.config);
}

QTEST_GUILESS_MAIN(TestConfig)

#include "tst_config.moc"
