// SPDX-License-Identifier: MIT
// Inference workloads (issue #18, phase 1): the `workload` key and the `inference` section.
#include "config/config.h"
#include "config/configloader.h"
#include "config/configvalidator.h"
#include "config/configwriter.h"
#include "config/diagnostic.h"
#include "estimate/servingestimate.h"
#include "estimate/stepestimate.h"
#include "memory/memorytimeline.h"
#include "synthesis/synthesis.h"
#include "synthhelpers.h"

#include <QFile>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

using namespace stagecraft;

namespace {

QString qs(std::string_view text)
{
    return QString::fromUtf8(text.data(), qsizetype(text.size()));
}

QString dump(const std::vector<Diagnostic>& diagnostics)
{
    QString out;
    for (const Diagnostic& d : diagnostics)
        out += QLatin1String("\n  ") + qs(d.toString());
    return out;
}

/// A serving config of the tiny preset's model, as a user would write it (line numbers matter to the tests).
const char* const kServing = R"(name: tiny-serving
workload: inference
model:
  preset: tiny
inference:
  batch: 8
  prompt_tokens: 64
  output_tokens: 32
  phases: both
  decode_steps: 3
  kv_cache_dtype: fp8
  block_size: 16
parallelism:
  tp: 2
  pp: 2
)";

} // namespace

namespace {

/// Loads a serving YAML text; a problem prints the diagnostics and fails the calling test.
std::optional<Config> serving(const std::string& yaml)
{
    ConfigResult r = loadConfigText(yaml, "serving.yaml");
    if (!r.config)
        qWarning("%s", qPrintable(dump(r.diagnostics)));
    return r.config;
}

std::shared_ptr<const SynthesisResult> synthesized(const Config& config)
{
    SynthesisOptions options;
    options.threads = 1;
    SynthesisOutcome out = synthesize(config, nullptr, nullptr, options);
    if (!out.result)
        qWarning("%s", qPrintable(dump(out.diagnostics)));
    return out.result;
}

/// Model FLOPs of one phase over all ranks: every compute node of that phase on every rank, each value counted
/// once (a node that `replication` ranks compute alike, such as a norm under tp, counts 1/replication per rank).
double phaseFlops(const SynthesisResult& r, int32_t step)
{
    double total = 0;
    for (size_t c = 0; c < r.classes.size(); ++c) {
        double perRank = 0;
        for (const ProgramNode& n : r.classes[c].nodes)
            if (n.kind == NodeKind::Compute && n.op >= 0 && r.graph->ops[static_cast<size_t>(n.op)].step == step)
                perRank += static_cast<double>(n.flops)
                    / static_cast<double>(r.plan->opReplication[static_cast<size_t>(n.op)]);
        total += perRank * static_cast<double>(r.classes[c].rankCount);
    }
    return total;
}

/// Model dimensions the formulas below need, read from the config (the inputs, not the code under test).
struct Dims
{
    double h, ffn, heads, kvHeads, d, vocab, layers, experts, topK, expertFfn, sharedFfn, denseLayers;
    double qLora, kvLora, dNope, dRope, dV;
    bool moe, mla;
};

Dims dimsOf(const ModelConfig& m)
{
    Dims x {};
    x.h = double(m.hidden);
    x.ffn = double(m.ffnHidden);
    x.heads = double(m.heads);
    x.kvHeads = double(m.kvHeads);
    x.d = double(m.headDim > 0 ? m.headDim : m.hidden / m.heads);
    x.vocab = double(m.vocab);
    x.layers = double(m.layers);
    x.experts = double(m.experts);
    x.topK = double(m.topK);
    x.expertFfn = double(m.expertFfnHidden);
    x.sharedFfn = double(m.sharedExpertFfnHidden);
    x.denseLayers = double(m.firstDenseLayers);
    x.qLora = double(m.qLoraRank);
    x.kvLora = double(m.kvLoraRank);
    x.dNope = double(m.qkNopeHeadDim);
    x.dRope = double(m.qkRopeHeadDim);
    x.dV = double(m.vHeadDim);
    x.moe = m.family == Family::Moe;
    x.mla = m.kvLoraRank > 0;
    return x;
}

/// Parameters one token passes through in a decoder layer (llama / moe families; RMSNorm weights included):
/// attention projections, the two norms, and the FFN: SwiGLU's 3*h*F, or for an MoE layer the router h*E, top_k
/// routed experts of 3*h*F_e and the shared expert's 3*h*F_s.
double activeLayerParams(const Dims& x, bool moeLayer)
{
    double attention = 0;
    if (x.mla) // DeepSeek-V3 section 2.1.1: W_DQ, q norm, W_UQ (nope and rope), W_DKV, W_KR, kv norm, W_UK, W_UV, W_O
        attention = x.h * x.qLora + x.qLora + x.qLora * x.heads * (x.dNope + x.dRope) + x.h * x.kvLora + x.h * x.dRope
            + x.kvLora + x.kvLora * x.heads * (x.dNope + x.dV) + x.heads * x.dV * x.h;
    else // W_Q, W_K, W_V, W_O with grouped-query attention
        attention = 2 * x.h * x.heads * x.d + 2 * x.h * x.kvHeads * x.d;
    const double ffn =
        moeLayer ? x.h * x.experts + x.topK * 3 * x.h * x.expertFfn + 3 * x.h * x.sharedFfn : 3 * x.h * x.ffn;
    return attention + ffn + 2 * x.h;
}

/// Decoder-layer parameters a token passes through, summed over the layers (the first `denseLayers` dense).
double activeDecoderParams(const Dims& x)
{
    const double moeLayers = x.moe ? x.layers - x.denseLayers : 0;
    return (x.layers - moeLayers) * activeLayerParams(x, false) + moeLayers * activeLayerParams(x, true);
}

} // namespace

class TestInference : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void loadsServingConfig()
    {
        const ConfigResult r = loadConfigText(kServing, "serving.yaml");
        QVERIFY2(r.config, qPrintable(dump(r.diagnostics)));
        QVERIFY2(r.diagnostics.empty(), qPrintable(dump(r.diagnostics)));
        const Config& c = *r.config;
        QCOMPARE(c.workload, Workload::Inference);
        QCOMPARE(c.inference.batch, int64_t(8));
        QCOMPARE(c.inference.promptTokens, int64_t(64));
        QCOMPARE(c.inference.outputTokens, int64_t(32));
        QCOMPARE(c.inference.phases, InferencePhases::Both);
        QCOMPARE(c.inference.decodeSteps, int64_t(3));
        QCOMPARE(c.inference.kvCacheDtype, KvCacheDtype::Fp8);
        QCOMPARE(c.inference.blockSize, int64_t(16));
        QCOMPARE(decodeSteps(c.inference), int64_t(3));
        QCOMPARE(promptTokens(c), int64_t(64));
    }

    void defaults()
    {
        // Without the section: one sequence of model.seq_len tokens, 128 output tokens of which 4 decode steps are
        // written (min(4, output_tokens - 1)), bf16 cache in blocks of 16. No training section is needed.
        const ConfigResult r = loadConfigText("workload: inference\nmodel:\n  preset: tiny\n", "defaults.yaml");
        QVERIFY2(r.config, qPrintable(dump(r.diagnostics)));
        QCOMPARE(r.config->inference, InferenceConfig {});
        QCOMPARE(promptTokens(*r.config), r.config->model.seqLen);
        QCOMPARE(decodeSteps(r.config->inference), int64_t(4));
        InferenceConfig few;
        few.outputTokens = 3;
        QCOMPARE(decodeSteps(few), int64_t(2));
        few.phases = InferencePhases::Prefill;
        QCOMPARE(decodeSteps(few), int64_t(0));
        // A training config is unchanged by the new keys: workload defaults to training.
        const ConfigResult tiny = loadConfigOrPreset("tiny");
        QVERIFY(tiny.config);
        QCOMPARE(tiny.config->workload, Workload::Training);
    }

    void errors_data()
    {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("keyPath");
        QTest::addColumn<QString>("reason");
        auto row = [](const char* name, const char* from, const char* to, int line, int column, const char* key,
                       const char* reason) {
            QTest::newRow(name) << QString::fromUtf8(from) << QString::fromUtf8(to) << line << column
                                << QString::fromUtf8(key) << QString::fromUtf8(reason);
        };
        // Parse errors point at the value; semantic errors at the key's value too (anchored by the loader).
        row("workload", "workload: inference", "workload: serving", 2, 11, "workload",
            "expected one of training, inference, found \"serving\"");
        row("batch zero", "batch: 8", "batch: 0", 6, 10, "inference.batch", "expected a positive integer, found 0");
        row("phases", "phases: both", "phases: decoding", 9, 11, "inference.phases",
            "expected one of prefill, decode, both, found \"decoding\"");
        row("kv dtype", "kv_cache_dtype: fp8", "kv_cache_dtype: int4", 11, 19, "inference.kv_cache_dtype",
            "expected one of bf16, fp8, found \"int4\"");
        row("block size", "block_size: 16", "block_size: -16", 12, 15, "inference.block_size",
            "expected a positive integer, found -16");
        row("unknown key", "block_size: 16", "block_sz: 16", 12, 3, "inference.block_sz",
            "unknown key 'block_sz' in inference");
        row("batch not divisible", "batch: 8", "batch: 5", 6, 10, "inference.batch",
            "batch=5 is not divisible by dp*pp = 1*2 = 2");
        row("decode steps", "decode_steps: 3", "decode_steps: 40", 10, 17, "inference.decode_steps",
            "decode_steps=40 exceeds output_tokens - 1 = 31");
        row("one output token", "output_tokens: 32", "output_tokens: 1", 8, 18, "inference.output_tokens",
            "phases both needs output_tokens >= 2");
        row("cp with decode", "pp: 2", "pp: 2\n  cp: 2", 16, 7, "parallelism.cp",
            "decode steps of one token are not context-parallel here");
        row("moe decode routing", "preset: tiny", "preset: tiny\n  family: moe\n  experts: 16\n  top_k: 2", 9, 10,
            "inference.batch",
            "a decode step routes (batch/pp)*top_k = 8 tokens, not divisible by experts*dp = 16*1 (each rank's tokens "
            "spread evenly over the experts); the smallest batch that is: 16");
    }

    void trainingKeysIgnored_data()
    {
        // Issue #28: the training-only keys a training preset brings along are ignored for serving with a note at
        // the key (as the gradient keys are), and the config loads and synthesizes.
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("keyPath");
        QTest::addColumn<QString>("reason");
        QTest::newRow("zero") << "pp: 2"
                              << "pp: 2\n  zero: 1" << 16 << 9 << "parallelism.zero"
                              << "zero=1 shards training state; ignored for serving (weights are held whole)";
        QTest::newRow("interleaved") << "pp: 2"
                                     << "pp: 2\n  schedule: interleaved\n  virtual_stages: 2" << 16 << 13
                                     << "parallelism.schedule"
                                     << "schedule interleaved with virtual_stages 2 orders training micro-batches; "
                                        "ignored for serving";
        QTest::newRow("recompute") << "parallelism:"
                                   << "training:\n  recompute: full\nparallelism:" << 14 << 14 << "training.recompute"
                                   << "recompute full re-runs the forward before a backward; ignored for serving";
    }

    void trainingKeysIgnored()
    {
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(QString, keyPath);
        QFETCH(QString, reason);
        std::string yaml = kServing;
        const size_t at = yaml.find(from.toStdString());
        QVERIFY(at != std::string::npos);
        yaml.replace(at, size_t(from.size()), to.toStdString());
        const ConfigResult r = loadConfigText(yaml, "serving.yaml");
        QVERIFY2(r.config, qPrintable(dump(r.diagnostics)));
        const SynthesisOutcome out = synthesize(*r.config);
        QVERIFY2(out.result, qPrintable(dump(out.diagnostics)));
        const auto it = std::find_if(out.diagnostics.begin(), out.diagnostics.end(), [&](const Diagnostic& d) {
            return d.keyPath == keyPath.toStdString() && d.message.find(reason.toStdString()) != std::string::npos;
        });
        QVERIFY2(it != out.diagnostics.end(), qPrintable(dump(out.diagnostics)));
        QCOMPARE(it->severity, Severity::Note);
        QCOMPARE(it->line, line);
        QCOMPARE(it->column, column);
        // What was built is the serving plan: weights whole, no recompute, one chunk per stage.
        QCOMPARE(out.result->config.parallelism.zero, 0);
        QCOMPARE(out.result->config.training.recompute, Recompute::None);
        QCOMPARE(out.result->config.parallelism.virtualStages, int64_t(1));
    }

    void trainingPresetServes()
    {
        // The issue's command: llama3-70b (sequence parallel, ZeRO-1, interleaved over 5 chunks) switched to
        // inference on tp 8. The decode probe used to fail on a sequence-parallel split of the resident prompt
        // (Seq/(cp*tp) = 2046/8) that no decode op uses; sequence parallelism does not change a decode step, so the
        // time per output token is the same without it.
        const std::vector<std::string> sets { "parallelism.tp=8", "parallelism.pp=1", "parallelism.dp=1",
            "parallelism.cp=1", "workload=inference", "inference.batch=16", "inference.prompt_tokens=2048",
            "inference.output_tokens=512" };
        auto tpot = [](const std::vector<std::string>& overrides) {
            const auto r = test::synth("llama3-70b", overrides);
            std::string error;
            const std::optional<GpuSpec> gpu = gpuForConfig(r->config, error);
            ServingEstimate e;
            if (!gpu || !estimateServing(*r, *gpu, EstimateOptions {}, e, error))
                qFatal("no serving estimate: %s", error.c_str());
            return e.tpotS;
        };
        const double withSp = tpot(sets);
        std::vector<std::string> without = sets;
        without.push_back("parallelism.sequence_parallel=false");
        QVERIFY(withSp > 0);
        QCOMPARE(withSp, tpot(without));
    }

    void errors()
    {
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(QString, keyPath);
        QFETCH(QString, reason);
        std::string yaml = kServing;
        const size_t at = yaml.find(from.toStdString());
        QVERIFY(at != std::string::npos);
        yaml.replace(at, size_t(from.size()), to.toStdString());
        const ConfigResult r = loadConfigText(yaml, "bad-serving.yaml");
        QVERIFY(!r.config);
        const auto it = std::find_if(r.diagnostics.begin(), r.diagnostics.end(), [&](const Diagnostic& d) {
            return d.keyPath == keyPath.toStdString() && d.message.find(reason.toStdString()) != std::string::npos;
        });
        QVERIFY2(it != r.diagnostics.end(), qPrintable(dump(r.diagnostics)));
        QCOMPARE(it->severity, Severity::Error);
        QCOMPARE(it->file, std::string("bad-serving.yaml"));
        QCOMPARE(it->line, line);
        QCOMPARE(it->column, column);
        // The CLI form: file:line:col: error: message.
        QVERIFY2(qs(it->toString()).startsWith(QStringLiteral("bad-serving.yaml:%1:%2: error: ").arg(line).arg(column)),
            qPrintable(qs(it->toString())));
    }

    void roundTrip_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::newRow("serving") << qs(kServing);
        QTest::newRow("prefill only, cp2")
            << QStringLiteral("workload: inference\nmodel:\n  preset: tiny\ninference:\n  phases: prefill\n"
                              "  batch: 2\nparallelism:\n  cp: 2\n  tp: 2\n  sequence_parallel: true\n");
        QTest::newRow("decode only") << QStringLiteral(
            "workload: inference\nmodel:\n  preset: tiny\ninference:\n  phases: decode\n  batch: 4\n"
            "  output_tokens: 9\n  block_size: 32\n");
    }

    void roundTrip()
    {
        // toYaml() writes every inference key (and no training.global_batch, which serving does not use); the
        // loader reads it back to the same config and the same text.
        QFETCH(QString, yaml);
        const ConfigResult first = loadConfigText(yaml.toStdString(), "first.yaml");
        QVERIFY2(first.config, qPrintable(dump(first.diagnostics)));
        const std::string written = toYaml(*first.config);
        QVERIFY(written.find("\nworkload: inference\n") != std::string::npos);
        QVERIFY(written.find("global_batch") == std::string::npos);
        const ConfigResult second = loadConfigText(written, "second.yaml");
        QVERIFY2(second.config && second.diagnostics.empty(), qPrintable(dump(second.diagnostics) + qs(written)));
        QVERIFY(*second.config == *first.config);
        QCOMPARE(qs(toYaml(*second.config)), qs(written));
    }

    // ---- programs: the KV cache, FLOPs per phase, memory ----------------------------------------------------

    void kvCacheBytes_data()
    {
        QTest::addColumn<QString>("yaml");
        auto row = [](const char* name, const char* preset, const char* inference, const char* parallelism) {
            QTest::newRow(name) << QStringLiteral("workload: inference\nmodel:\n  preset: %1\ninference:\n%2"
                                                  "parallelism:\n%3")
                                       .arg(QString::fromLatin1(preset), QString::fromLatin1(inference),
                                           QString::fromLatin1(parallelism));
        };
        // Prompts of 1000 tokens are not a multiple of the block: rounding shows.
        const char* both = "  batch: 8\n  prompt_tokens: 1000\n  output_tokens: 64\n  decode_steps: 4\n";
        row("llama3-70b tp8", "llama3-70b", both, "  tp: 8\n");
        row("llama3-70b tp4 pp2", "llama3-70b", both, "  tp: 4\n  pp: 2\n");
        row("llama3-70b tp8 fp8 cache, decode only", "llama3-70b",
            "  batch: 8\n  prompt_tokens: 1000\n  phases: decode\n  kv_cache_dtype: fp8\n", "  tp: 8\n");
        row("mixtral-8x7b dp8 ep8", "mixtral-8x7b",
            "  batch: 64\n  prompt_tokens: 1000\n  decode_steps: 3\n  block_size: 32\n", "  dp: 8\n  ep: 8\n");
        row("deepseek-v3 dp8 ep8 (MLA)", "deepseek-v3", "  batch: 256\n  prompt_tokens: 1000\n", "  dp: 8\n  ep: 8\n");
        row("deepseek-v3 tp8 (MLA latent on every tp rank)", "deepseek-v3", "  batch: 32\n  prompt_tokens: 1000\n",
            "  tp: 8\n");
        row("llama3-70b tp4 cp2 prefill", "llama3-70b", "  batch: 8\n  prompt_tokens: 4040\n  phases: prefill\n",
            "  tp: 4\n  cp: 2\n  sequence_parallel: true\n");
        // The two serving presets.
        for (const char* preset : { "llama3-70b-serving", "deepseek-v3-serving" }) {
            QFile file(QStringLiteral(STAGECRAFT_SOURCE_DIR "/resources/presets/%1.yaml").arg(QLatin1String(preset)));
            QVERIFY(file.open(QIODevice::ReadOnly));
            QTest::newRow(preset) << QString::fromUtf8(file.readAll());
        }
    }

    void kvCacheBytes()
    {
        // Per rank of stage s, with B sequences over dp replicas, n decode steps, block b, e bytes per element:
        //   layers_s * (B/dp) * T * E * e, where the positions allocated per sequence are
        //   T = ceil(P/cp / b) * b after a prefill-only program, and T = ceil((P + n) / b) * b otherwise (the
        //   prompt in whole blocks plus one block each time a decode step's position P + k - 1 starts one);
        //   E = 2 * kv_heads/tp * head_dim for GQA (keys and values), kv_lora_rank + qk_rope_head_dim for MLA (the
        //   latent and the shared rotary key, held whole on every tp rank: MLA has no per-head cache to split).
        QFETCH(QString, yaml);
        const std::optional<Config> config = serving(yaml.toStdString());
        QVERIFY(config);
        const std::shared_ptr<const SynthesisResult> r = synthesized(*config);
        QVERIFY(r);
        const ModelConfig& m = config->model;
        const ParallelismConfig& p = config->parallelism;
        const InferenceConfig& in = config->inference;
        const int64_t prompt = promptTokens(*config);
        const int64_t steps = decodeSteps(in);
        const int64_t block = in.blockSize;
        const int64_t positions =
            steps == 0 ? (prompt / p.cp + block - 1) / block * block : (prompt + steps + block - 1) / block * block;
        const int64_t headDim = m.headDim > 0 ? m.headDim : m.hidden / m.heads;
        const int64_t perPosition =
            m.kvLoraRank > 0 ? m.kvLoraRank + m.qkRopeHeadDim : 2 * (m.kvHeads / p.tp) * headDim;
        const int64_t elementBytes = in.kvCacheDtype == KvCacheDtype::Fp8 ? 1 : 2;
        QCOMPARE(int64_t(r->summaries.size()), p.pp);
        for (const ClassSummary& s : r->summaries) {
            const int64_t expected = m.layers / p.pp * (in.batch / p.dp) * positions * perPosition * elementBytes;
            QCOMPARE(s.kvCacheBytes, expected);
            // The timeline holds the whole cache at the end, inside the peak; activations_peak leaves it out.
            const MemoryTimeline& t = r->memory[static_cast<size_t>(s.stage)];
            QVERIFY(!t.series.empty());
            QCOMPARE(t.series.back()[static_cast<size_t>(MemoryCategory::KvCache)], expected);
            QVERIFY(s.peakBytes >= s.weightBytes + expected);
            // Serving holds no gradients and no optimizer state.
            QCOMPARE(s.gradientBytes, int64_t(0));
            QCOMPARE(s.optimizerBytes, int64_t(0));
        }
    }

    void cacheGrowsEachDecodeStep()
    {
        // Blocks of 1 token: every decode step allocates each layer's next position, so the cache on the timeline
        // at the end of step k is L * B * (P + k) * 2 * kv_heads/tp * head_dim * 2 bytes (tiny: 2 layers, 4 kv heads
        // of 32). It never shrinks while the programs run.
        const std::optional<Config> config = serving("workload: inference\nmodel:\n  preset: tiny\ninference:\n"
                                                     "  batch: 2\n  prompt_tokens: 20\n  output_tokens: 8\n"
                                                     "  decode_steps: 5\n  block_size: 1\n");
        QVERIFY(config);
        const std::shared_ptr<const SynthesisResult> r = synthesized(*config);
        QVERIFY(r);
        const ClassProgram& program = r->classes.front();
        const MemoryTimeline& t = r->memory.front();
        const auto cacheAt = [&](size_t step) { return t.series[step][static_cast<size_t>(MemoryCategory::KvCache)]; };
        const int64_t perPosition = 2 * 2 * 4 * 32 * 2; // layers * (K, V) * kv_heads * head_dim * bytes
        int64_t previous = 0;
        std::vector<int64_t> endOfStep(6, -1);
        for (size_t i = 0; i < program.nodes.size(); ++i) {
            QVERIFY(cacheAt(i) >= previous);
            previous = cacheAt(i);
            const ProgramNode& n = program.nodes[i];
            if (n.kind == NodeKind::Compute && n.op >= 0)
                endOfStep[static_cast<size_t>(r->graph->ops[static_cast<size_t>(n.op)].step)] = cacheAt(i);
        }
        for (int64_t k = 0; k <= 5; ++k)
            QCOMPARE(endOfStep[static_cast<size_t>(k)], 2 * (20 + k) * perPosition);
    }

    void decodeFlopsPerToken_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::newRow("llama3-70b tp8") << QStringLiteral("workload: inference\nmodel:\n  preset: llama3-70b\n"
                                                          "inference:\n  batch: 8\n  prompt_tokens: 2000\n"
                                                          "parallelism:\n  tp: 8\n");
        QTest::newRow("llama3-70b tp4 pp2") << QStringLiteral("workload: inference\nmodel:\n  preset: llama3-70b\n"
                                                              "inference:\n  batch: 8\n  prompt_tokens: 2000\n"
                                                              "parallelism:\n  tp: 4\n  pp: 2\n");
        QTest::newRow("mixtral-8x7b dp8 ep8") << QStringLiteral("workload: inference\nmodel:\n  preset: mixtral-8x7b\n"
                                                                "inference:\n  batch: 64\n  prompt_tokens: 2000\n"
                                                                "parallelism:\n  dp: 8\n  ep: 8\n");
        QTest::newRow("deepseek-v3 dp8 ep8 (MLA, absorbed)")
            << QStringLiteral("workload: inference\nmodel:\n  preset: deepseek-v3\ninference:\n  batch: 256\n"
                              "  prompt_tokens: 2000\nparallelism:\n  dp: 8\n  ep: 8\n");
    }

    void decodeFlopsPerToken()
    {
        // A decode step runs one token of each of the B sequences. Per token, the weights it passes through cost
        // 2 * N_activated (the embedding is a gather: N_activated counts the decoder layers, the final norm and the
        // LM head, and for MoE the router and top_k experts of each MoE layer), and attention over the L = P + k
        // cached positions of step k costs, per layer and query head and position,
        //   GQA: 2 * (head_dim + head_dim)               (q.k and p.v, Vaswani et al. 2017)
        //   MLA absorbed: 2 * (kv_lora + rope) + 2 * kv_lora (scores against the latent and the rotary key, then
        //   the context in latent space; DeepSeek-V2 section 2.1.2). Its W_UK and W_UV products, once per token,
        //   are 2 * their parameters and so part of 2 * N_activated.
        // So F_k / B = 2 * N_activated + 2 * layers * heads * L * c, within 1 % (norms, RoPE, SwiGLU, softmax and
        // the sampler are O(h) per token and left out).
        QFETCH(QString, yaml);
        const std::optional<Config> config = serving(yaml.toStdString());
        QVERIFY(config);
        const std::shared_ptr<const SynthesisResult> r = synthesized(*config);
        QVERIFY(r);
        const Dims x = dimsOf(config->model);
        const double activated = activeDecoderParams(x) + x.h + x.h * x.vocab;
        const double perPosition = x.mla ? 2 * (x.kvLora + x.dRope) + 2 * x.kvLora : 2 * (x.d + x.d);
        const double batch = double(config->inference.batch);
        const double prompt = double(promptTokens(*config));
        QCOMPARE(decodeSteps(config->inference), int64_t(4));
        for (int32_t k = 1; k <= 4; ++k) {
            const double expected = 2 * activated + x.layers * x.heads * (prompt + k) * perPosition;
            const double measured = phaseFlops(*r, k) / batch;
            QVERIFY2(std::abs(measured / expected - 1) < 0.01,
                qPrintable(
                    QStringLiteral("step %1: %2 FLOP per token, expected %3").arg(k).arg(measured).arg(expected)));
        }
        // Each later step attends over one more position: the difference of steps 4 and 1 is the attention of 3
        // positions (2 % for the softmax of each score, 5 FLOPs next to 4*head_dim).
        const double grown = (phaseFlops(*r, 4) - phaseFlops(*r, 1)) / batch;
        const double expectedGrowth = 3 * x.layers * x.heads * perPosition;
        QVERIFY2(grown >= expectedGrowth && grown < expectedGrowth * 1.02,
            qPrintable(QStringLiteral("%1 vs %2").arg(grown).arg(expectedGrowth)));
    }

    void prefillFlops_data()
    {
        decodeFlopsPerToken_data();
    }

    void prefillFlops()
    {
        // The prefill runs the P prompt tokens of each sequence through the decoder layers (2 * N_decoder * P, MoE:
        // the activated parameters), the LM head for the last position only (2 * h * V), and causal attention:
        // per layer and head, the P^2/2 (query, key) pairs of the lower triangle (our causal convention: half of
        // the P x P work) at 2 * (d_qk + d_v) each, d_qk = head_dim (MLA: qk_nope + qk_rope) and d_v = head_dim
        // (MLA: v_head_dim, the un-absorbed form, as training runs it). Within 1 %.
        QFETCH(QString, yaml);
        const std::optional<Config> config = serving(yaml.toStdString());
        QVERIFY(config);
        const std::shared_ptr<const SynthesisResult> r = synthesized(*config);
        QVERIFY(r);
        const Dims x = dimsOf(config->model);
        const double prompt = double(promptTokens(*config));
        const double qk = x.mla ? x.dNope + x.dRope : x.d;
        const double v = x.mla ? x.dV : x.d;
        const double expected = 2 * activeDecoderParams(x) * prompt + 2 * x.h * x.vocab
            + x.layers * x.heads * prompt * prompt / 2 * 2 * (qk + v);
        const double measured = phaseFlops(*r, 0) / double(config->inference.batch);
        QVERIFY2(std::abs(measured / expected - 1) < 0.01,
            qPrintable(QStringLiteral("%1 FLOP per sequence, expected %2").arg(measured).arg(expected)));
    }

    void weightsOnly()
    {
        // llama3-70b on tp8: each rank holds 1/8 of every matrix (the vocabulary padded to 129024, a multiple of
        // 128*8) and every norm weight whole, in bf16; nothing else is resident.
        const std::optional<Config> config = serving("workload: inference\nmodel:\n  preset: llama3-70b\n"
                                                     "inference:\n  batch: 8\n  prompt_tokens: 1000\n"
                                                     "parallelism:\n  tp: 8\n");
        QVERIFY(config);
        const std::shared_ptr<const SynthesisResult> r = synthesized(*config);
        QVERIFY(r);
        const int64_t h = 8192, f = 28672, heads = 64, kv = 8, d = 128, layers = 80, vpad = 129024, tp = 8;
        const int64_t matrices = layers * (2 * h * heads * d + 2 * h * kv * d + 3 * h * f) + 2 * vpad * h;
        const int64_t norms = layers * 2 * h + h;
        QCOMPARE(r->summaries.front().weightBytes, 2 * (matrices / tp + norms));
    }

    void noTrainingEstimate()
    {
        // The step-time estimate models a training iteration; for serving it says it has none rather than
        // answering with one (estimateServing() is the serving estimate: tst_servingestimate).
        const std::optional<Config> config = serving(kServing);
        QVERIFY(config);
        const std::shared_ptr<const SynthesisResult> r = synthesized(*config);
        QVERIFY(r);
        std::string error;
        const std::optional<GpuSpec> gpu = gpuForConfig(r->config, error);
        QVERIFY2(gpu, error.c_str());
        StepEstimate estimate;
        QVERIFY(!estimateStep(*r, *gpu, EstimateOptions {}, estimate, error));
        QVERIFY2(error.find("no step-time estimate for inference") != std::string::npos, error.c_str());
    }

    void tiedEmbeddingsOnAPipeline()
    {
        // gpt2 ties its head to the embedding: with pp 2 the first stage holds it for the embedding and the last
        // for the head (vocab 50257 padded to 50304 = 393 * 128; h 768; bf16), and no warning about the gradient
        // all-reduce between them, which serving does not have.
        const std::optional<Config> config = serving("workload: inference\nmodel:\n  preset: gpt2\ninference:\n"
                                                     "  batch: 4\n  prompt_tokens: 128\nparallelism:\n  pp: 2\n");
        QVERIFY(config);
        const std::shared_ptr<const SynthesisResult> r = synthesized(*config);
        QVERIFY(r);
        for (const Diagnostic& d : r->warnings)
            QVERIFY2(d.keyPath != "model.tied_embeddings", d.message.c_str());
        const auto holds = [&](const ClassProgram& program) {
            for (const Buffer& b : program.buffers)
                if (b.resident && b.tensor >= 0 && r->graph->tensor(TensorId { b.tensor }).name == "embedding.weight")
                    return b.bytes;
            return int64_t(0);
        };
        QCOMPARE(holds(r->classes[0]), int64_t(50304) * 768 * 2);
        QCOMPARE(holds(r->classes[1]), int64_t(50304) * 768 * 2);
    }

    void pipelineSendsTokensBack()
    {
        // tp4 pp2, 8 sequences in 2 micro-batches of 4: the last stage samples each micro-batch's next token and
        // sends it to the first stage for the prefill and every decode step but the last (4 steps: 4 sends per
        // micro-batch, 4 sequences * 4 bytes each); the first stage sends each phase's hidden states forward,
        // 4 * P * h * 2 bytes in the prefill and 4 * h * 2 in a decode step.
        const std::optional<Config> config = serving("workload: inference\nmodel:\n  preset: llama3-70b\n"
                                                     "inference:\n  batch: 8\n  prompt_tokens: 1000\n"
                                                     "parallelism:\n  tp: 4\n  pp: 2\n");
        QVERIFY(config);
        const std::shared_ptr<const SynthesisResult> r = synthesized(*config);
        QVERIFY(r);
        QCOMPARE(r->cost.microBatches, int64_t(2));
        const ClassSummary& first = r->summaries[0];
        const ClassSummary& last = r->summaries[1];
        QCOMPARE(last.sendCount, int64_t(2 * 4));
        QCOMPARE(last.sendBytes, int64_t(2 * 4 * 4 * 4));
        QCOMPARE(first.recvCount, int64_t(2 * 4));
        QCOMPARE(first.sendCount, int64_t(2 * 5));
        QCOMPARE(first.sendBytes, int64_t(2 * (4 * 1000 * 8192 * 2 + 4 * 4 * 8192 * 2)));
    }
};

QTEST_GUILESS_MAIN(TestInference)
#include "tst_inference.moc"
