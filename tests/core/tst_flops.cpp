// SPDX-License-Identifier: MIT
// FLOPs per training iteration against published closed forms.
#include "config/configloader.h"
#include "model/modelcost.h"
#include "model/modelgraph.h"

#include <QtTest>

using namespace stagecraft;

namespace {

Config gptConfig(int64_t batch, int64_t seq, int64_t layers, int64_t hidden, int64_t heads, int64_t vocab)
{
    Config c;
    c.model.family = Family::Gpt;
    c.model.layers = layers;
    c.model.hidden = hidden;
    c.model.ffnHidden = 4 * hidden;
    c.model.heads = heads;
    c.model.kvHeads = heads;
    c.model.vocab = vocab;
    c.model.seqLen = seq;
    c.model.causalMask = false; // both formulas count the full S x S attention
    c.model.attention = AttentionKernel::Eager; // and one Q K^T per forward pass (no fused-kernel recompute)
    c.model.tiedEmbeddings = true;
    c.training.globalBatch = batch;
    c.training.microBatch = 1;
    return c;
}

Config llamaConfig(int64_t batch, int64_t seq, int64_t layers, int64_t hidden, int64_t ffn, int64_t heads,
    int64_t kvHeads, int64_t vocab)
{
    Config c;
    c.model.family = Family::Llama;
    c.model.layers = layers;
    c.model.hidden = hidden;
    c.model.ffnHidden = ffn;
    c.model.heads = heads;
    c.model.kvHeads = kvHeads;
    c.model.vocab = vocab;
    c.model.seqLen = seq;
    c.model.causalMask = false;
    c.model.attention = AttentionKernel::Eager; // PaLM's 12 l h s counts Q K^T and P V once per forward
    c.training.globalBatch = batch;
    c.training.microBatch = 1;
    return c;
}

ModelCost costOf(const Config& c)
{
    auto graph = buildModelGraph(c.model, c.training.precision);
    ModelCost out;
    std::string error;
    if (!computeModelCost(*graph, c, out, error))
        qFatal("cost failed: %s", error.c_str());
    return out;
}

double relativeError(double actual, double expected)
{
    return std::abs(actual - expected) / expected;
}

} // namespace

class TestFlops : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void gptNarayanan_data()
    {
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("seq");
        QTest::addColumn<qint64>("layers");
        QTest::addColumn<qint64>("hidden");
        QTest::addColumn<qint64>("heads");
        QTest::addColumn<qint64>("vocab");
        // Shapes of Narayanan et al. 2021, Table 1 (1.7B, 18B, 175B, 1T) and the GPT-3 paper's 1.3B and 13B.
        QTest::newRow("gpt-1.3b") << qint64(512) << qint64(2048) << qint64(24) << qint64(2048) << qint64(16)
                                  << qint64(50257);
        QTest::newRow("gpt-1.7b") << qint64(512) << qint64(2048) << qint64(24) << qint64(2304) << qint64(24)
                                  << qint64(51200);
        QTest::newRow("gpt-13b") << qint64(1024) << qint64(2048) << qint64(40) << qint64(5120) << qint64(40)
                                 << qint64(50257);
        QTest::newRow("gpt-18b") << qint64(1024) << qint64(2048) << qint64(40) << qint64(6144) << qint64(48)
                                 << qint64(51200);
        QTest::newRow("gpt-175b") << qint64(1536) << qint64(2048) << qint64(96) << qint64(12288) << qint64(96)
                                  << qint64(51200);
        QTest::newRow("gpt-1t") << qint64(3072) << qint64(2048) << qint64(128) << qint64(25600) << qint64(160)
                                << qint64(51200);
        QTest::newRow("long-context") << qint64(64) << qint64(16384) << qint64(32) << qint64(4096) << qint64(32)
                                      << qint64(50257);
    }

    void gptNarayanan()
    {
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        QFETCH(qint64, layers);
        QFETCH(qint64, hidden);
        QFETCH(qint64, heads);
        QFETCH(qint64, vocab);
        const ModelCost c = costOf(gptConfig(batch, seq, layers, hidden, heads, vocab));
        // Narayanan et al. 2021 (SC'21) eq. 3 without recompute (3 passes instead of 4):
        // F = 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
        const double B = batch, s = seq, l = layers, h = hidden, V = vocab;
        const double expected = 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
        const double actual = c.flopsPerIteration;
        QVERIFY2(relativeError(actual, expected) < 0.01,
            qPrintable(QStringLiteral("actual %1 expected %2").arg(actual, 0, 'g', 12).arg(expected, 0, 'g', 12)));
        // The formula counts matmuls only; norms, softmax etc. only add.
        QVERIFY(actual > expected);
    }

    void gptNarayananFullRecompute_data()
    {
        gptNarayanan_data();
    }

    void gptNarayananFullRecompute()
    {
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        QFETCH(qint64, layers);
        QFETCH(qint64, hidden);
        QFETCH(qint64, heads);
        QFETCH(qint64, vocab);
        Config cfg = gptConfig(batch, seq, layers, hidden, heads, vocab);
        cfg.training.recompute = Recompute::Full;
        const ModelCost c = costOf(cfg);
        // Narayanan et al. 2021 eq. 3 (with activation recomputation):
        // F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)); the LM head is not recomputed.
        const double B = batch, s = seq, l = layers, h = hidden, V = vocab;
        const double expected = 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
        const double actual = c.flopsPerIteration;
        QVERIFY2(relativeError(actual, expected) < 0.01,
            qPrintable(QStringLiteral("actual %1 expected %2").arg(actual, 0, 'g', 12).arg(expected, 0, 'g', 12)));
    }

    void llamaPalm_data()
    {
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("seq");
        QTest::addColumn<qint64>("layers");
        QTest::addColumn<qint64>("hidden");
        QTest::addColumn<qint64>("ffn");
        QTest::addColumn<qint64>("heads");
        QTest::addColumn<qint64>("kvHeads");
        QTest::addColumn<qint64>("vocab");
        // Architectures from the model cards' config.json (Llama 2 7B, Llama 3 8B, 70B, 405B).
        QTest::newRow("llama2-7b") << qint64(1024) << qint64(4096) << qint64(32) << qint64(4096) << qint64(11008)
                                   << qint64(32) << qint64(32) << qint64(32000);
        QTest::newRow("llama3-8b") << qint64(512) << qint64(8192) << qint64(32) << qint64(4096) << qint64(14336)
                                   << qint64(32) << qint64(8) << qint64(128256);
        QTest::newRow("llama3-70b") << qint64(1024) << qint64(8192) << qint64(80) << qint64(8192) << qint64(28672)
                                    << qint64(64) << qint64(8) << qint64(128256);
        QTest::newRow("llama3-405b") << qint64(2048) << qint64(8192) << qint64(126) << qint64(16384) << qint64(53248)
                                     << qint64(128) << qint64(8) << qint64(128256);
        QTest::newRow("small-gqa") << qint64(64) << qint64(2048) << qint64(16) << qint64(2048) << qint64(5632)
                                   << qint64(16) << qint64(4) << qint64(32000);
    }

    void llamaPalm()
    {
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        QFETCH(qint64, layers);
        QFETCH(qint64, hidden);
        QFETCH(qint64, ffn);
        QFETCH(qint64, heads);
        QFETCH(qint64, kvHeads);
        QFETCH(qint64, vocab);
        const ModelCost c = costOf(llamaConfig(batch, seq, layers, hidden, ffn, heads, kvHeads, vocab));
        // Chowdhery et al. 2022 (PaLM), appendix B: FLOPs per token = 6 N + 12 l h s (training, full attention),
        // N the matmul weights: per layer q and o (h*h each), k and v (h * kv_heads*head_dim each), SwiGLU's three
        // matrices (h*ffn each); plus the untied output head h*V.
        const double h = hidden, l = layers, s = seq;
        const double kvDim = static_cast<double>(kvHeads) * (hidden / heads);
        const double nMatmul = l * (2.0 * h * h + 2.0 * h * kvDim + 3.0 * h * ffn) + h * vocab;
        const double tokens = static_cast<double>(batch) * seq;
        const double expected = tokens * (6.0 * nMatmul + 12.0 * l * h * s);
        const double actual = c.flopsPerIteration;
        QVERIFY2(relativeError(actual, expected) < 0.01,
            qPrintable(QStringLiteral("actual %1 expected %2").arg(actual, 0, 'g', 12).arg(expected, 0, 'g', 12)));
        QVERIFY(actual > expected);
    }

    void causalMaskHalvesAttention()
    {
        // A causal FlashAttention kernel skips the masked half of the S x S work: the difference is half of the
        // attention matmuls, 3 passes * l * (2 matmuls * 2 B s^2 h) / 2 = 6 l B s^2 h, plus half of the Q K^T its
        // backward recomputes (Dao 2023, Algorithm 2), l * 2 B s^2 h / 2 = l B s^2 h: 7 l B s^2 h in all (the
        // softmax adds < 1 % of that for head_dim 128).
        Config cfg = llamaConfig(8, 8192, 4, 4096, 14336, 32, 8, 128256);
        cfg.model.attention = AttentionKernel::Flash;
        const ModelCost full = costOf(cfg);
        cfg.model.causalMask = true;
        const ModelCost causal = costOf(cfg);
        const double expected = 7.0 * 4 * 8 * 8192.0 * 8192.0 * 4096;
        const double actual = full.flopsPerIteration - causal.flopsPerIteration;
        QVERIFY2(relativeError(actual, expected) < 0.01, qPrintable(QString::number(actual / expected)));
    }

    void eagerAttentionIgnoresTheCausalMask()
    {
        // Eager attention computes every score with a batched GEMM and masks it afterwards (Megatron-LM's baddbmm,
        // its masked softmax, then the bmm with V): the mask saves no FLOPs.
        Config cfg = llamaConfig(8, 8192, 4, 4096, 14336, 32, 8, 128256);
        const ModelCost full = costOf(cfg);
        cfg.model.causalMask = true;
        const ModelCost causal = costOf(cfg);
        QCOMPARE(causal.flopsPerIteration, full.flopsPerIteration);
    }

    void flashAttentionRecomputesScores()
    {
        // The fused kernel does the model's work (same forward and backward FLOPs as the unfused one) and, in
        // its backward, re-runs Q K^T and the softmax from the saved log-sum-exp (Dao 2023, FlashAttention-2,
        // Algorithm 2). Full attention (no causal mask): per layer and sequence 2 * a * s^2 * d FLOPs for Q K^T
        // plus 5 * a * s^2 for the softmax (max, subtract, exp, sum, divide), counted as recompute (HFU, not MFU).
        Config eager = llamaConfig(8, 8192, 4, 4096, 14336, 32, 8, 128256);
        Config flash = eager;
        flash.model.attention = AttentionKernel::Flash;
        const ModelCost e = costOf(eager), f = costOf(flash);
        QVERIFY(relativeError(f.forwardFlopsPerMicroBatch, e.forwardFlopsPerMicroBatch) < 1e-12);
        QVERIFY(relativeError(f.backwardFlopsPerMicroBatch, e.backwardFlopsPerMicroBatch) < 1e-12);
        const double sequences = 8, layers = 4, a = 32, s = 8192, d = 128;
        const double recomputed = sequences * layers * a * s * s * (2 * d + 5);
        QCOMPARE(f.flopsPerIteration - e.flopsPerIteration, recomputed);
        QCOMPARE(f.recomputeFlopsPerMicroBatch * double(f.microBatches), recomputed);
    }

    void todaysMoePresets_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<double>("total"); // parameters, derived by hand from the model card
        QTest::addColumn<double>("cardTotal");
        QTest::addColumn<double>("activated"); // parameters one token uses (embedding row included)
        QTest::addColumn<double>("cardActivated");
        QTest::addColumn<double>("matmulActive"); // active matmul weights N: attention, active experts, router, head
        QTest::addColumn<double>("attention"); // training FLOPs per token of Q K^T and P V, causal
        // DeepSeek-V3 (arXiv:2412.19437 §4.2, deepseek-ai/DeepSeek-V3 config.json): h 7168, 61 layers, 3 dense
        // (FFN 18432), 58 MoE (256 experts + 1 shared of 2048, top-8), vocab 129280, untied. MLA per layer: q_a
        // h*1536, q_b 1536*128*(128+64), kv_a h*(512+64), kv_b 512*128*(128+128), o 128*128*h, norms h + 1536 + 512;
        // MLP norm h. Router h*256. Causal attention per token and layer, 3 passes: 3 * a * s * (192 + 128).
        {
            const double h = 7168, v = 129280, s = 4096;
            const double mla = h * 1536 + 1536.0 * 128 * 192 + h * 576 + 512.0 * 128 * 256 + 128.0 * 128 * h;
            const double norms = 2 * h + 1536 + 512;
            const double expert = 3 * h * 2048, dense = 3 * h * 18432, router = h * 256;
            const double total = 2 * v * h + h + 61 * (mla + norms) + 3 * dense + 58 * (257 * expert + router);
            const double active = 2 * v * h + h + 61 * (mla + norms) + 3 * dense + 58 * (9 * expert + router);
            const double n = v * h + 61 * mla + 3 * dense + 58 * (9 * expert + router);
            QTest::newRow("deepseek-v3") << QStringLiteral("deepseek-v3") << total << 671e9 << active << 37e9 << n
                                         << 61 * 3 * 128 * s * (192.0 + 128);
        }
        // Qwen3 (arXiv:2505.09388 Table 2; Qwen/Qwen3-235B-A22B and Qwen3-30B-A3B config.json): GQA with head_dim
        // 128, QK-norm weights 2*128, no shared expert, untied. Per layer q and o h*a*128 each, k and v h*g*128 each,
        // router h*E, experts E*3*h*f; norms 2h; final norm h.
        auto qwen = [](const char* name, double h, double l, double a, double g, double e, double f, double cardTotal,
                        double cardActive) {
            const double v = 151936, s = 4096, k = 8;
            const double attn = 2 * h * a * 128 + 2 * h * g * 128;
            const double norms = 2 * h + 2 * 128;
            const double total = 2 * v * h + h + l * (attn + norms + h * e + e * 3 * h * f);
            const double active = 2 * v * h + h + l * (attn + norms + h * e + k * 3 * h * f);
            const double n = v * h + l * (attn + h * e + k * 3 * h * f);
            QTest::newRow(name) << QString::fromLatin1(name) << total << cardTotal << active << cardActive << n
                                << l * 3 * a * s * (128.0 + 128);
        };
        qwen("qwen3-235b-a22b", 4096, 94, 64, 4, 128, 1536, 235e9, 22e9);
        qwen("qwen3-30b-a3b", 2048, 48, 32, 4, 128, 768, 30.5e9, 3.3e9);
    }

    void todaysMoePresets()
    {
        QFETCH(QString, preset);
        QFETCH(double, total);
        QFETCH(double, cardTotal);
        QFETCH(double, activated);
        QFETCH(double, cardActivated);
        QFETCH(double, matmulActive);
        QFETCH(double, attention);
        ConfigResult loaded = loadConfigOrPreset(preset.toStdString(), { "training.recompute=none" });
        QVERIFY(loaded.config);
        const ModelCost c = costOf(*loaded.config);
        QCOMPARE(double(c.params), total);
        // The cards round: 671B / 37B (DeepSeek-V3), 235B / 22B and 30.5B / 3.3B (Qwen3).
        QVERIFY2(std::abs(total - cardTotal) / cardTotal < 0.005, qPrintable(QString::number(total)));
        QVERIFY2(std::abs(activated - cardActivated) / cardActivated < 0.02, qPrintable(QString::number(activated)));
        // Training FLOPs per token (model FLOPs: forward + backward) = 6 N + the attention term (PaLM appendix B
        // with top-k experts; causal attention counts half the S x S work).
        const double tokens = double(loaded.config->training.microBatch * loaded.config->parallelism.dp)
            * double(loaded.config->model.seqLen);
        const double perToken = (c.forwardFlopsPerMicroBatch + c.backwardFlopsPerMicroBatch) / tokens;
        const double expected = 6 * matmulActive + attention;
        QVERIFY2(relativeError(perToken, expected) < 0.01,
            qPrintable(QStringLiteral("actual %1 expected %2").arg(perToken, 0, 'g', 12).arg(expected, 0, 'g', 12)));
    }

    void moeActiveParameters()
    {
        // Mixtral 8x7B (Jiang et al. 2024): per token only top_k = 2 of 8 experts run. PaLM's 6N + 12lhs with N
        // the active matmul weights: attention (2*h*h + 2*h*1024), router h*E, 2 experts * 3*h*ffn, head h*V.
        Config cfg = llamaConfig(64, 4096, 32, 4096, 14336, 32, 8, 32000);
        cfg.model.family = Family::Moe;
        cfg.model.experts = 8;
        cfg.model.topK = 2;
        cfg.model.expertFfnHidden = 14336;
        const ModelCost c = costOf(cfg);
        const double h = 4096, l = 32, s = 4096;
        const double nActive = l * (2 * h * h + 2 * h * 1024 + h * 8 + 2 * 3 * h * 14336) + h * 32000;
        const double expected = 64.0 * s * (6.0 * nActive + 12.0 * l * h * s);
        const double actual = c.flopsPerIteration;
        QVERIFY2(relativeError(actual, expected) < 0.01,
            qPrintable(QStringLiteral("actual %1 expected %2").arg(actual, 0, 'g', 12).arg(expected, 0, 'g', 12)));
    }

    void microBatchingKeepsTotal()
    {
        // Splitting the same global batch into more micro-batches changes nothing in the FLOPs (linear in tokens).
        Config a = llamaConfig(64, 2048, 4, 2048, 5632, 16, 4, 32000);
        Config b = a;
        b.training.microBatch = 8;
        const ModelCost ca = costOf(a), cb = costOf(b);
        QCOMPARE(ca.microBatches, qint64(64));
        QCOMPARE(cb.microBatches, qint64(8));
        QCOMPARE(ca.flopsPerIteration, cb.flopsPerIteration);
    }
};

QTEST_GUILESS_MAIN(TestFlops)
#include "tst_flops.moc"
