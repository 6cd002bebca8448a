// SPDX-License-Identifier: MIT
// Published serving measurements beside ours (issue #28). Each row names its source, the exact model, GPUs, plan,
// precision and lengths; ours is computed here from the presets and the GPU specs, fitted to nothing. The README's
// table "Serving: published measurements beside ours" must hold every figure this test computes (it fails
// otherwise, printing the row to paste), so the README cannot drift from the code.
//
// Sources (both NVIDIA's TensorRT-LLM documentation):
//  [A] TensorRT-LLM 0.14.0 performance overview, "Throughput Measurements" (in-flight batching, requests fed at an
//      infinite rate, output tokens/s): https://nvidia.github.io/TensorRT-LLM/performance/perf-overview.html
//      (the 0.14.0 version of the page), LLaMA v3 70B, input/output 1000/1000.
//  [B] TensorRT-LLM 0.5.0 performance, "High Throughput" (static batches), H100 GPUs (FP8), LLaMA 70B (Llama 2),
//      batch 64, TP 4: https://raw.githubusercontent.com/NVIDIA/TensorRT-LLM/release/0.5.0/docs/source/performance.md
#include "config/configloader.h"
#include "estimate/servingestimate.h"
#include "estimate/stepestimate.h"
#include "serving/servingsimulation.h"
#include "synthhelpers.h"

#include <QtTest>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace stagecraft;

namespace {

std::string readme()
{
    std::ifstream in(std::string(STAGECRAFT_SOURCE_DIR) + "/README.md");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Llama 2 70B's shapes (meta-llama/Llama-2-70b-hf config.json: the llama3-70b preset's layers, hidden, FFN, heads
/// and KV heads, vocabulary 32000, 4096 positions).
std::vector<std::string> llama2()
{
    return { "model.vocab=32000", "model.seq_len=4096", "model.rope_theta=10000" };
}

} // namespace

class TestServingPublished : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void publishedThroughput_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("row"); // the README row up to "ours" (model, GPUs, plan, precision, lengths)
        QTest::addColumn<QString>("gpu");
        QTest::addColumn<int>("tp");
        QTest::addColumn<bool>("fp8");
        QTest::addColumn<bool>("llama2");
        QTest::addColumn<int>("prompt");
        QTest::addColumn<int>("output");
        QTest::addColumn<int>("batch"); // > 0: one static batch (the estimate); 0: 1000 requests at once (simulated)
        QTest::addColumn<double>("theirs"); // output tokens/s
        QTest::newRow("A1") << "A"
                            << "Llama 3 70B | 4x H100 SXM 80GB | TP 4 | FP16 | 1000/1000"
                            << "h100-sxm" << 4 << false << false << 1000 << 1000 << 0 << 3730.2064;
        QTest::newRow("A2") << "A"
                            << "Llama 3 70B | 8x H100 SXM 80GB | TP 8 | FP16 | 1000/1000"
                            << "h100-sxm" << 8 << false << false << 1000 << 1000 << 0 << 5963.0914;
        QTest::newRow("A3") << "A"
                            << "Llama 3 70B | 4x H100 SXM 80GB | TP 4 | FP8 | 1000/1000"
                            << "h100-sxm" << 4 << true << false << 1000 << 1000 << 0 << 6925.0844;
        QTest::newRow("A4") << "A"
                            << "Llama 3 70B | 8x H100 SXM 80GB | TP 8 | FP8 | 1000/1000"
                            << "h100-sxm" << 8 << true << false << 1000 << 1000 << 0 << 10733.0804;
        QTest::newRow("A5") << "A"
                            << "Llama 3 70B | 8x H200 141GB | TP 8 | FP8 | 1000/1000"
                            << "h200" << 8 << true << false << 1000 << 1000 << 0 << 13075.5194;
        QTest::newRow("B1") << "B"
                            << "Llama 2 70B | 4x H100 SXM | TP 4 | FP8 | 128/128, batch 64"
                            << "h100-sxm" << 4 << true << true << 128 << 128 << 64 << 3317.0;
        QTest::newRow("B2") << "B"
                            << "Llama 2 70B | 4x H100 SXM | TP 4 | FP8 | 128/2048, batch 64"
                            << "h100-sxm" << 4 << true << true << 128 << 2048 << 64 << 2616.0;
        QTest::newRow("B3") << "B"
                            << "Llama 2 70B | 4x H100 SXM | TP 4 | FP8 | 2048/128, batch 64"
                            << "h100-sxm" << 4 << true << true << 2048 << 128 << 64 << 843.0;
        QTest::newRow("B4") << "B"
                            << "Llama 2 70B | 4x H100 SXM | TP 4 | FP8 | 2048/2048, batch 64"
                            << "h100-sxm" << 4 << true << true << 2048 << 2048 << 64 << 1583.0;
    }

    void publishedThroughput()
    {
        QFETCH(QString, source);
        QFETCH(QString, row);
        QFETCH(QString, gpu);
        QFETCH(int, tp);
        QFETCH(bool, fp8);
        QFETCH(bool, llama2);
        QFETCH(int, prompt);
        QFETCH(int, output);
        QFETCH(int, batch);
        QFETCH(double, theirs);
        std::vector<std::string> sets { "parallelism.tp=" + std::to_string(tp), "cluster.gpu=" + gpu.toStdString(),
            "inference.prompt_tokens=" + std::to_string(prompt), "inference.output_tokens=" + std::to_string(output),
            std::string("inference.weight_dtype=") + (fp8 ? "fp8" : "bf16") };
        if (llama2)
            for (const std::string& s : ::llama2())
                sets.push_back(s);
        double ours = 0;
        if (batch > 0) {
            // One static batch, as the 0.5.0 benchmark ran it: the serving estimate's output tokens/s.
            sets.push_back("inference.batch=" + std::to_string(batch));
            const auto r = test::synth("llama3-70b-serving", sets);
            std::string error;
            const std::optional<GpuSpec> g = gpuForConfig(r->config, error);
            QVERIFY(g);
            ServingEstimate e;
            QVERIFY2(estimateServing(*r, *g, EstimateOptions {}, e, error), error.c_str());
            ours = e.tokensPerS;
        } else {
            // 1000 requests at time 0 (an infinite rate), continuously batched with vLLM's defaults (256 running,
            // 8192 tokens per iteration): output tokens over the time to the last token.
            sets.push_back("inference.batch=1000");
            const ConfigResult loaded = loadConfigOrPreset("llama3-70b-serving", sets);
            QVERIFY(loaded.config);
            std::string error;
            const std::optional<GpuSpec> g = gpuForConfig(*loaded.config, error);
            QVERIFY(g);
            ServingSimulation s;
            QVERIFY2(simulateServing(*loaded.config, *g, EstimateOptions {}, s, error), error.c_str());
            QCOMPARE(s.finished, int64_t(1000));
            ours = s.outputTokensPerS;
        }
        char text[512];
        std::snprintf(text, sizeof text, "| %s | %s | %.0f | %.0f | %+.0f%% |", source.toLatin1().constData(),
            row.toLatin1().constData(), theirs, ours, 100 * (ours / theirs - 1));
        qInfo("%s", text);
        QVERIFY(ours > 0);
        QVERIFY2(readme().find(text) != std::string::npos, "README.md lacks this row (paste the line above)");
    }
};

QTEST_GUILESS_MAIN(TestServingPublished)
#include "tst_servingpublished.moc"
