// SPDX-License-Identifier: MIT
// Hugging Face config.json import: one config per supported architecture (written from the model cards, see
// tests/data/hf/README.md) reproduces its preset and a parameter count derived by hand; broken configs are refused
// at the right file:line:col; model.hf_config in a YAML config; `stagecraft import-hf` round-trips.
#include "config/configloader.h"
#include "config/hfimport.h"
#include "config/presets.h"
#include "model/modelcost.h"
#include "model/modelgraph.h"
#include "synthhelpers.h"

#include <QProcess>
#include <QtTest>
#include <filesystem>
#include <fstream>

using namespace stagecraft;
using stagecraft::test::readFile;
using stagecraft::test::TempDir;

namespace {

const std::string s_good = STAGECRAFT_TEST_DATA "/hf/good/";
const std::string s_broken = STAGECRAFT_TEST_DATA "/hf/broken/";

std::string dump(const std::vector<Diagnostic>& diagnostics)
{
    std::string out;
    for (const Diagnostic& d : diagnostics)
        out += d.toString() + "\n";
    return out;
}

ModelCost modelCost(const ModelConfig& model)
{
    Config config;
    config.model = model;
    config.training.globalBatch = 1;
    const auto graph = buildModelGraph(config.model, config.training.precision);
    ModelCost cost;
    std::string error;
    if (!computeModelCost(*graph, config, cost, error))
        qFatal("cost failed: %s", error.c_str());
    return cost;
}

/// Every trainable parameter of the checkpoint: the main model's and the MTP modules' own.
int64_t parameters(const ModelConfig& model)
{
    const ModelCost cost = modelCost(model);
    return cost.params + cost.mtpParams;
}

void writeFile(const std::filesystem::path& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
}

struct Run
{
    int exitCode = -1;
    QString out;
    QString err;
};

Run runStagecraft(const QStringList& args)
{
    QProcess p;
    p.start(QStringLiteral(STAGECRAFT_CLI), args);
    if (!p.waitForFinished(120000))
        qFatal("stagecraft did not finish");
    return { p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError()) };
}

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

class TestHfImport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void presets_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("preset");
        QTest::addColumn<bool>("presetSeqLen"); // import with the preset's seq_len (else the default)
        QTest::addColumn<qint64>("expected");

        // meta-llama/Llama-2-7b-hf. h 4096, 32 layers, MHA, ffn 11008, vocab 32000: per layer q,k,v,o 4*4096^2 =
        // 67,108,864 + gate/up/down 3*4096*11008 = 135,266,304 + 2 norms 8,192 = 202,383,360; 32 layers
        // 6,476,267,520; embedding + untied head 2*32000*4096 = 262,144,000; final norm 4,096 => 6,738,415,616 (the
        // safetensors total of the card).
        QTest::newRow("LlamaForCausalLM") << "llama-2-7b.json"
                                          << "llama2-7b" << false << qint64(6'738'415'616);
        // mistralai/Mistral-7B-v0.1. Per layer q 4096*4096 + k,v 2*4096*1024 + o 4096*4096 = 41,943,040; gate/up/down
        // 3*4096*14336 = 176,160,768; 2 norms 8,192 => 218,112,000; 32 layers 6,979,584,000; embedding + head
        // 2*32000*4096 = 262,144,000; final norm 4,096 => 7,241,732,096.
        QTest::newRow("MistralForCausalLM") << "mistral-7b.json"
                                            << "mistral-7b" << false << qint64(7'241'732'096);
        // mistralai/Mixtral-8x7B-v0.1. Per layer attention 41,943,040 (as Mistral) + 8 experts 8*3*4096*14336 =
        // 1,409,286,144 + router 4096*8 = 32,768 + 2 norms 8,192 => 1,451,270,144; 32 layers 46,440,644,608;
        // embedding + head 262,144,000; final norm 4,096 => 46,702,792,704.
        QTest::newRow("MixtralForCausalLM") << "mixtral-8x7b.json"
                                            << "mixtral-8x7b" << false << qint64(46'702'792'704);
        // Qwen/Qwen2-7B. h 3584, 28 heads of 128, 4 KV heads (kv dim 512), ffn 18944, vocab 152064, untied. Per
        // layer q 3584*3584 + bias 3584 = 12,848,640; k, v 2*(3584*512 + 512) = 3,671,040; o 3584*3584 = 12,845,056;
        // gate/up/down 3*3584*18944 = 203,685,888; 2 norms 7,168 => 233,057,792; 28 layers 6,525,618,176;
        // embedding + head 2*152064*3584 = 1,089,994,752; final norm 3,584 => 7,615,616,512.
        QTest::newRow("Qwen2ForCausalLM") << "qwen2-7b.json"
                                          << "qwen2-7b" << false << qint64(7'615'616'512);
        // Qwen/Qwen3-8B. h 4096, 32 heads of 128, 8 KV heads, ffn 12288, vocab 151936, untied, QK-norm. Per layer
        // q 4096*4096 = 16,777,216; k, v 2*4096*1024 = 8,388,608; o 16,777,216; q_norm + k_norm 2*128 = 256;
        // gate/up/down 3*4096*12288 = 150,994,944; 2 norms 8,192 => 192,946,432; 36 layers 6,946,071,552;
        // embedding + head 2*151936*4096 = 1,244,659,712; final norm 4,096 => 8,190,735,360.
        QTest::newRow("Qwen3ForCausalLM") << "qwen3-8b.json"
                                          << "qwen3-8b" << false << qint64(8'190'735'360);
        // Qwen/Qwen3-235B-A22B. h 4096, 64 heads of 128 (q dim 8192), 4 KV heads (kv dim 512), 128 experts of
        // ffn 1536, vocab 151936, untied. Per layer q 4096*8192 = 33,554,432; k, v 2*4096*512 = 4,194,304; o
        // 8192*4096 = 33,554,432; q_norm + k_norm 256; router 4096*128 = 524,288; experts 128*3*4096*1536 =
        // 2,415,919,104; 2 norms 8,192 => 2,487,755,008; 94 layers 233,848,970,752; embedding + head 1,244,659,712;
        // final norm 4,096 => 235,093,634,560.
        QTest::newRow("Qwen3MoeForCausalLM") << "qwen3-235b-a22b.json"
                                             << "qwen3-235b-a22b" << true << qint64(235'093'634'560);
        // deepseek-ai/DeepSeek-V3. h 7168, 61 layers (3 dense), 128 heads, MLA q_lora 1536, kv_lora 512, nope 128,
        // rope 64, v 128; dense ffn 18432; 256 routed experts + 1 shared of 2048; vocab 129280; 1 MTP module.
        // MLA per layer: q_a 7168*1536 = 11,010,048; q_a norm 1,536; q_b 1536*128*192 = 37,748,736; kv_a
        // 7168*(512+64) = 4,128,768; kv_a norm 512; kv_b 512*128*(128+128) = 16,777,216; o 128*128*7168 =
        // 117,440,512 => 187,107,328. 2 norms 14,336. Dense FFN 3*7168*18432 = 396,361,728 => dense layer
        // 583,483,392, 3 of them 1,750,450,176. MoE FFN: routed 256*3*7168*2048 = 11,274,289,152, shared
        // 3*7168*2048 = 44,040,192, router 256*7168 = 1,835,008 => 11,320,164,352; MoE layer 11,507,286,016, 58 of
        // them 667,422,588,928. Embedding + head 2*129280*7168 = 1,853,358,080; final norm 7,168. Main model
        // 671,026,404,352 (the paper's 671B; the checkpoint adds 256 routing-bias values per MoE layer, 14,848).
        // The MTP module (DeepSeek-V3 report section 2.2: embedding and output head shared with the main model):
        // 2 norms 14,336 + projection 2*7168*7168 = 102,760,448 + one MoE layer 11,507,286,016 + final norm 7,168
        // => 11,610,067,968. Total 682,636,472,320.
        QTest::newRow("DeepseekV3ForCausalLM") << "deepseek-v3.json"
                                               << "deepseek-v3" << true << qint64(682'636'472'320);
        // openai-community/gpt2 (124M). h 768, 12 layers, ffn 3072, vocab 50257, 1024 learned positions, tied. Per
        // layer 2 LayerNorms 4*768 = 3,072; qkv 768*2304 + 2304 = 1,771,776; proj 768*768 + 768 = 590,592; fc
        // 768*3072 + 3072 = 2,362,368; proj 3072*768 + 768 = 2,360,064 => 7,087,872; 12 layers 85,054,464; token
        // embedding 50257*768 = 38,597,376; positions 1024*768 = 786,432; final LayerNorm 1,536 => 124,439,808.
        QTest::newRow("GPT2LMHeadModel") << "gpt2.json"
                                         << "gpt2" << false << qint64(124'439'808);
    }

    void presets()
    {
        QFETCH(QString, file);
        QFETCH(QString, preset);
        QFETCH(bool, presetSeqLen);
        QFETCH(qint64, expected);
        const std::string path = s_good + file.toStdString();
        const std::optional<std::string_view> presetYaml = presetText(preset.toStdString());
        std::optional<Config> presetConfig;
        if (presetYaml) {
            ConfigResult loaded = loadConfigOrPreset(preset.toStdString());
            QVERIFY2(loaded.config, dump(loaded.diagnostics).c_str());
            presetConfig = loaded.config;
        }
        HfImportOptions options;
        if (presetSeqLen && presetConfig)
            options.seqLen = presetConfig->model.seqLen;
        const HfImport imported = importHfConfigFile(path, options);
        // Every field of a published config is mapped or known to be informational: not even a warning.
        QVERIFY2(imported.diagnostics.empty(), dump(imported.diagnostics).c_str());
        QVERIFY(imported.model);
        QCOMPARE(qs(imported.architecture),
            QTest::currentDataTag() ? QString::fromLatin1(QTest::currentDataTag()) : QString());
        // The multi-token prediction modules' own weights (11,610,067,968 for DeepSeek-V3, derived above) are
        // reported apart: `params` is the main model's with or without them.
        const int64_t mtpOwn = imported.model->mtpModules > 0 ? qint64(11'610'067'968) : 0;
        QCOMPARE(modelCost(*imported.model).params, expected - mtpOwn);
        QCOMPARE(modelCost(*imported.model).mtpParams, mtpOwn);
        QCOMPARE(parameters(*imported.model), expected);
        if (!presetConfig)
            QSKIP("the preset is not in this branch yet");
        // The preset's model keys, but for the ones a config.json does not say (execution choices of ours).
        ModelConfig want = presetConfig->model;
        want.preset.clear();
        want.attention = imported.model->attention;
        want.moeCapacityFactor = imported.model->moeCapacityFactor;
        want.moeRoutingImbalance = imported.model->moeRoutingImbalance;
        QCOMPARE(imported.model->family, want.family);
        QCOMPARE(imported.model->layers, want.layers);
        QCOMPARE(imported.model->hidden, want.hidden);
        QCOMPARE(imported.model->ffnHidden, want.ffnHidden);
        QCOMPARE(imported.model->heads, want.heads);
        QCOMPARE(imported.model->kvHeads, want.kvHeads);
        QCOMPARE(imported.model->vocab, want.vocab);
        QCOMPARE(imported.model->seqLen, want.seqLen);
        QCOMPARE(imported.model->experts, want.experts);
        QCOMPARE(imported.model->topK, want.topK);
        QCOMPARE(imported.model->expertFfnHidden, want.expertFfnHidden);
        QCOMPARE(imported.model->sharedExpertFfnHidden, want.sharedExpertFfnHidden);
        QCOMPARE(imported.model->tiedEmbeddings, want.tiedEmbeddings);
        QCOMPARE(imported.model->ropeTheta, want.ropeTheta);
        QCOMPARE(imported.model->headDim, want.headDim);
        QCOMPARE(imported.model->qkNorm, want.qkNorm);
        QCOMPARE(imported.model->qkvBias, want.qkvBias);
        QCOMPARE(imported.model->kvLoraRank, want.kvLoraRank);
        QCOMPARE(imported.model->firstDenseLayers, want.firstDenseLayers);
        // The card's config.json of deepseek-v3 has one MTP module; the preset may leave it out (mtp_modules).
        const int64_t cardMtp = preset == QLatin1String("deepseek-v3") ? 1 : 0;
        QCOMPARE(imported.model->mtpModules, cardMtp);
        ModelConfig withoutMtp = *imported.model;
        withoutMtp.mtpModules = want.mtpModules;
        QVERIFY(withoutMtp == want); // and every other field
        QCOMPARE(parameters(presetConfig->model), expected - (cardMtp - want.mtpModules) * mtpOwn);
    }

    void broken_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("keyPath");
        QTest::addColumn<QString>("fragment");
        auto row = [](const char* file, int line, int column, const char* keyPath, const char* fragment) {
            QTest::newRow(file) << QString::fromLatin1(file) << line << column << QString::fromLatin1(keyPath)
                                << QString::fromUtf8(fragment);
        };
        row("syntax-error.json", 4, 3, "", "malformed JSON: expected ',' or '}' after an object member, found '\"'");
        row("unknown-architecture.json", 3, 5, "architectures", "unknown architecture \"FalconForCausalLM\"");
        row("missing-hidden-size.json", 1, 1, "hidden_size", "missing field \"hidden_size\" (the model width)");
        row("string-for-number.json", 6, 24, "num_hidden_layers",
            "expected a positive integer (the number of "
            "decoder layers), found \"32\" (a string)");
        row("negative-value.json", 7, 26, "num_key_value_heads",
            "expected a positive integer (the number of "
            "key/value heads), found -8");
        row("mlp-bias.json", 5, 15, "mlp_bias", "true is not supported: biases on the feed-forward projections");
        row("sliding-window.json", 9, 21, "sliding_window",
            "sliding-window attention of 2048 tokens is shorter than seq_len 4096 and is not modelled");
        row("decoder-sparse-step.json", 3, 26, "decoder_sparse_step",
            "expected 1 (every layer a mixture of experts), found 2");
        row("2 MB file", 0, 0, "", "larger than the limit of 65536 bytes (64 KiB) for a config.json");
        row("directory", 0, 0, "", "is a directory, expected a Hugging Face config.json (a regular file)");
    }

    void broken()
    {
        QFETCH(QString, file);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(QString, keyPath);
        QFETCH(QString, fragment);
        TempDir dir;
        std::string path = s_broken + file.toStdString();
        if (file == QLatin1String("2 MB file")) {
            path = (dir.path() / "config.json").string();
            std::string text = "{\"architectures\": [\"LlamaForCausalLM\"], \"padding\": \"";
            text += std::string(2 * 1024 * 1024, 'x') + "\"}\n";
            writeFile(path, text);
        } else if (file == QLatin1String("directory")) {
            path = (dir.path() / "config.json").string();
            std::filesystem::create_directory(path);
        }
        const HfImport imported = importHfConfigFile(path);
        QVERIFY(!imported.model);
        std::vector<Diagnostic> errors;
        for (const Diagnostic& d : imported.diagnostics) {
            if (d.severity == Severity::Error)
                errors.push_back(d);
        }
        QVERIFY2(errors.size() == 1, dump(imported.diagnostics).c_str());
        const Diagnostic& d = errors.front();
        QCOMPARE(qs(d.file), qs(path));
        QCOMPARE(d.line, line);
        QCOMPARE(d.column, column);
        QCOMPARE(qs(d.keyPath), keyPath);
        QVERIFY2(qs(d.message).contains(fragment), d.toString().c_str());
        // The printed form starts with file:line:col (file alone when the problem is the file itself).
        QString expectedStart = qs(path);
        if (line > 0)
            expectedStart += QLatin1Char(':') + QString::number(line) + QLatin1Char(':') + QString::number(column);
        expectedStart += QLatin1String(": error: ");
        QVERIFY2(qs(d.toString()).startsWith(expectedStart), d.toString().c_str());
    }

    void jsonSyntax_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("trailing comma") << "{\"a\": 1,\n}" << 2 << 1 << "(a trailing comma?)";
        QTest::newRow("single quotes") << "{'a': 1}" << 1 << 2 << "expected a member name in double quotes";
        QTest::newRow("leading zero") << "{\"a\": 012}" << 1 << 7 << "leading zero";
        QTest::newRow("open string") << "{\"a\": \"x}\n" << 1 << 7 << "does not close on its line";
        QTest::newRow("two values") << "{} {}" << 1 << 4 << "expected the end of the file";
        QTest::newRow("empty") << "" << 1 << 1 << "found the end of the file";
        QTest::newRow("duplicate key") << "{\"a\": 1,\n \"a\": 2}" << 2 << 2
                                       << "duplicate key \"a\" (first given at "
                                          "line 1)";
        QTest::newRow("deep") << QString(100, QLatin1Char('[')) << 1 << 66 << "nested deeper than 64 levels";
        QTest::newRow("not an object") << "[1]" << 1 << 1 << "expected a JSON object";
    }

    void jsonSyntax()
    {
        QFETCH(QString, json);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(QString, fragment);
        const HfImport imported = importHfConfigText(json.toStdString(), "inline.json");
        QVERIFY(!imported.model);
        QVERIFY(!imported.diagnostics.empty());
        const Diagnostic& d = imported.diagnostics.front();
        QVERIFY2(qs(d.message).contains(fragment), d.toString().c_str());
        QCOMPARE(d.line, line);
        QCOMPARE(d.column, column);
    }

    void unknownFieldsWarn()
    {
        // A field we neither map nor know to be informational is ignored with a warning at its key; a byte-order
        // mark and \u escapes are fine.
        std::string text = readFile(s_good + "mistral-7b.json");
        text.insert(text.find("\"vocab_size\""), "\"frobnicate\": {\"x\": \"\\u00e9\"},\n  ");
        const HfImport imported = importHfConfigText("\xEF\xBB\xBF" + text, "extra.json");
        QVERIFY2(imported.model, dump(imported.diagnostics).c_str());
        QCOMPARE(imported.diagnostics.size(), size_t(1));
        const Diagnostic& d = imported.diagnostics.front();
        QCOMPARE(d.severity, Severity::Warning);
        QCOMPARE(d.keyPath, std::string("frobnicate"));
        QCOMPARE(d.line, 23);
        QCOMPARE(d.column, 3);
    }

    void seqLen()
    {
        // The default is min(max_position_embeddings, 4096); a longer one is asked for explicitly, and it makes
        // Mistral's 4096-token sliding window matter.
        const HfImport shortSeq = importHfConfigFile(s_good + "mistral-7b.json", { 2048, {} });
        QVERIFY(shortSeq.model);
        QCOMPARE(shortSeq.model->seqLen, qint64(2048));
        const HfImport longSeq = importHfConfigFile(s_good + "mistral-7b.json", { 8192, { "<command line>", 0, 0 } });
        QVERIFY(!longSeq.model);
        QCOMPARE(longSeq.diagnostics.front().keyPath, std::string("sliding_window"));
        // GPT-2 has 1024 learned positions: no more.
        const HfImport gpt2 = importHfConfigFile(s_good + "gpt2.json", { 2048, { "<command line>", 0, 0 } });
        QVERIFY(!gpt2.model);
        QVERIFY(gpt2.diagnostics.front().message.find("learned position embeddings for 1024") != std::string::npos);
    }

    void yamlHfConfig()
    {
        // model.hf_config is relative to the YAML file's folder; keys in the YAML override the JSON's.
        TempDir dir;
        std::filesystem::create_directory(dir.path() / "models");
        std::filesystem::copy_file(s_good + "mistral-7b.json", dir.path() / "models" / "config.json");
        const std::filesystem::path yaml = dir.path() / "run.yaml";
        writeFile(yaml, "model:\n  hf_config: models/config.json\n  layers: 4\ntraining:\n  global_batch: 8\n");
        const ConfigResult result = loadConfigFile(yaml.string());
        QVERIFY2(result.config, dump(result.diagnostics).c_str());
        QVERIFY2(result.diagnostics.empty(), dump(result.diagnostics).c_str());
        ModelConfig expected = *importHfConfigFile(s_good + "mistral-7b.json").model;
        expected.layers = 4;
        QVERIFY(result.config->model == expected);

        // A problem in the JSON points into the JSON, with its own path.
        std::string broken = readFile(s_good + "mistral-7b.json");
        broken.replace(broken.find("\"num_key_value_heads\": 8"), 24, "\"num_key_value_heads\": 6");
        writeFile(dir.path() / "models" / "config.json", broken);
        const ConfigResult bad = loadConfigFile(yaml.string());
        QVERIFY(!bad.config);
        bool pointsIntoJson = false;
        for (const Diagnostic& d : bad.diagnostics) {
            pointsIntoJson = pointsIntoJson
                || (d.file == (dir.path() / "models" / "config.json").string() && d.line == 13 && d.column == 26
                    && d.keyPath == "model.heads"
                    && d.message.find("not divisible by kv_heads=6") != std::string::npos);
        }
        QVERIFY2(pointsIntoJson, dump(bad.diagnostics).c_str());

        // Not together with a preset; a missing file is named.
        const ConfigResult both =
            loadConfigText("model:\n  preset: tiny\n  hf_config: x.json\ntraining:\n  global_batch: 8\n", "both.yaml");
        QVERIFY(!both.config);
        QVERIFY(dump(both.diagnostics).find("give model.preset or model.hf_config, not both") != std::string::npos);
        const ConfigResult missing = loadConfigText(
            "model:\n  hf_config: nowhere.json\ntraining:\n  global_batch: 8\n", (dir.path() / "run.yaml").string());
        QVERIFY(!missing.config);
        QVERIFY2(dump(missing.diagnostics)
                     .find((dir.path() / "nowhere.json").string() + ": error: cannot open the Hugging Face config")
                != std::string::npos,
            dump(missing.diagnostics).c_str());
    }

    void cli()
    {
        // `stagecraft import-hf` prints a config that loads back to the same model, named after the file.
        TempDir dir;
        const std::string out = (dir.path() / "mixtral.yaml").string();
        const Run written = runStagecraft(
            { QStringLiteral("import-hf"), qs(s_good + "mixtral-8x7b.json"), QStringLiteral("--out"), qs(out) });
        QVERIFY2(written.exitCode == 0, qPrintable(written.err));
        QVERIFY(written.out.isEmpty());
        const ConfigResult reloaded = loadConfigFile(out);
        QVERIFY2(reloaded.config, dump(reloaded.diagnostics).c_str());
        QVERIFY(reloaded.diagnostics.empty());
        QCOMPARE(reloaded.config->name, std::string("mixtral-8x7b"));
        QVERIFY(reloaded.config->model == *importHfConfigFile(s_good + "mixtral-8x7b.json").model);
        QCOMPARE(reloaded.config->training.globalBatch, kHfImportGlobalBatch);

        const Run printed = runStagecraft({ QStringLiteral("import-hf"), qs(s_good + "gpt2.json"),
            QStringLiteral("--name"), QStringLiteral("small"), QStringLiteral("--seq-len"), QStringLiteral("512") });
        QVERIFY2(printed.exitCode == 0, qPrintable(printed.err));
        const ConfigResult fromStdout = loadConfigText(printed.out.toStdString(), "stdout.yaml");
        QVERIFY2(fromStdout.config, dump(fromStdout.diagnostics).c_str());
        QCOMPARE(fromStdout.config->name, std::string("small"));
        ModelConfig expected = *importHfConfigFile(s_good + "gpt2.json").model;
        expected.seqLen = 512;
        QVERIFY(fromStdout.config->model == expected);

        // Bad input: exit 2 and file:line:col on stderr.
        const std::string bad = s_broken + "mlp-bias.json";
        const Run refused = runStagecraft({ QStringLiteral("import-hf"), qs(bad) });
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains(qs(bad) + QLatin1String(":5:15: error: mlp_bias: ")), qPrintable(refused.err));
        QVERIFY(refused.out.isEmpty());
    }

    void defaultName()
    {
        QCOMPARE(hfDefaultName("/models/Qwen3-8B/config.json"), std::string("Qwen3-8B"));
        QCOMPARE(hfDefaultName("dir/mistral-7b.json"), std::string("mistral-7b"));
        QCOMPARE(hfDefaultName("llama.config.json"), std::string("llama"));
        QCOMPARE(hfDefaultName("a b.json"), std::string("a-b"));
    }
};

QTEST_GUILESS_MAIN(TestHfImport)
#include "tst_hfimport.moc"
