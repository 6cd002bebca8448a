// SPDX-License-Identifier: MIT
// The serving estimate (issue #18): time to first token, time per output token, what a decode step reads, the
// largest batch that fits, and the serving sweep. Every expected value is derived in the comments from the model's
// published shapes and the GPU preset (resources/gpus/h100-sxm.yaml: 989.5 TFLOP/s dense bf16, 3350 GB/s HBM,
// GEMM efficiency 0.801, FlashAttention forward 0.55, memory-bound kernels 0.85 of HBM).
#include "config/configvalidator.h"
#include "config/presets.h"
#include "estimate/servingestimate.h"
#include "estimate/sweep.h"
#include "model/modelcost.h"
#include "synthhelpers.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace stagecraft;

namespace {

/// Model shapes in doubles, from the loaded config (the published values of the preset).
struct Shapes
{
    double layers, h, ffn, heads, kvHeads, headDim, vocab;
};

Shapes shapesOf(const Config& c)
{
    const ModelConfig& m = c.model;
    const double headDim = m.headDim > 0 ? double(m.headDim) : double(m.hidden) / double(m.heads);
    return { double(m.layers), double(m.hidden), double(m.ffnHidden), double(m.heads), double(m.kvHeads), headDim,
        double(m.vocab) };
}

ServingEstimate served(const SynthesisResult& r)
{
    std::string error;
    const std::optional<GpuSpec> gpu = gpuForConfig(r.config, error);
    if (!gpu)
        qFatal("%s", error.c_str());
    ServingEstimate e;
    if (!estimateServing(r, *gpu, EstimateOptions {}, e, error))
        qFatal("serving estimate failed: %s", error.c_str());
    return e;
}

/// A training preset's model served on dp x tp x pp (ep experts' parallel degree) with `inference` settings: the
/// preset's own training plan (ZeRO, recompute, interleaving, cp) replaced.
std::vector<std::string> serving(
    int64_t dp, int64_t tp, int64_t pp, int64_t ep, const std::vector<std::string>& inference)
{
    std::vector<std::string> sets { "workload=inference", "parallelism.dp=" + std::to_string(dp),
        "parallelism.tp=" + std::to_string(tp), "parallelism.pp=" + std::to_string(pp), "parallelism.cp=1",
        "parallelism.ep=" + std::to_string(ep), "parallelism.zero=0", "parallelism.schedule=1f1b",
        "parallelism.virtual_stages=1", "parallelism.sequence_parallel=false", "parallelism.first_stage_layers=0",
        "parallelism.last_stage_layers=0", "training.recompute=none", "cluster.preset=dgx-h100" };
    for (const std::string& set : inference)
        sets.push_back("inference." + set);
    return sets;
}

/// llama3-70b serving a batch of `batch` on dp 1 x tp 8 (one DGX H100), prompt 2048, output 256.
std::vector<std::string> llama70bTp8(int batch)
{
    return serving(1, 8, 1, 1, { "batch=" + std::to_string(batch), "prompt_tokens=2048", "output_tokens=256" });
}

/// Weights a decode step of llama3-70b on dp 1 x tp t x pp 1 reads per rank, bytes (bf16): every decoder layer's
/// q, k, v, o and gate/up/down split over tp plus its two replicated RMSNorm weights, the final norm, the LM head
/// over the padded vocabulary split over tp, and the B rows the embedding lookup reads (B * h * 2).
double llamaDecodeWeightBytes(const Config& c, double batch)
{
    const Shapes s = shapesOf(c);
    const double tp = double(c.parallelism.tp);
    const double kv = s.kvHeads * s.headDim;
    const double perLayer = (2 * s.h * s.h + 2 * s.h * kv + 3 * s.h * s.ffn) / tp + 2 * s.h;
    // Megatron-LM's padding to a multiple of 128 * tp (modelcost.h): 128256 -> 129024 for tp 8.
    const double vocab = double(paddedVocab(c.model.vocab, c.parallelism.tp));
    return 2 * (s.layers * perLayer + s.h + s.h * vocab / tp + batch * s.h);
}

} // namespace

class TestServingEstimate : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void decodeStepBytes_data()
    {
        QTest::addColumn<int>("batch");
        QTest::newRow("batch 1") << 1;
        QTest::newRow("batch 64 (the llama3-70b-serving preset)") << 64;
    }

    void decodeStepBytes()
    {
        // llama3-70b on tp 8: one KV head of 128 per rank (kv_heads 8 / tp 8). A decode step at context L (the
        // prompt plus k cached positions in step k) reads, per rank,
        //   weights: see llamaDecodeWeightBytes(),
        //   KV cache: layers * B * L * 2 (keys and values) * 1 * 128 * 2 bytes, and writes the step's own position,
        //             layers * B * 2 * 128 * 2 bytes: layers * B * 512 * (L + 1) in all.
        // The first decode step of the generation has L = P + 1 = 2049, the last L = P + O - 1 = 2303.
        QFETCH(int, batch);
        const std::shared_ptr<const SynthesisResult> r = test::synth("llama3-70b", llama70bTp8(batch));
        const ServingEstimate e = served(*r);
        QCOMPARE(e.classes.size(), size_t(1));
        const Shapes s = shapesOf(r->config);
        const double cachePerPosition = s.layers * batch * 2 * (s.kvHeads / 8) * s.headDim * 2;
        const double weights = llamaDecodeWeightBytes(r->config, batch);
        const DecodeStepCost& first = e.classes[0].firstStep;
        const DecodeStepCost& last = e.classes[0].lastStep;
        QCOMPARE(first.contextTokens, int64_t(2049));
        QCOMPARE(last.contextTokens, int64_t(2303));
        QCOMPARE(double(first.weightBytes), weights);
        QCOMPARE(double(last.weightBytes), weights);
        QCOMPARE(double(first.kvCacheBytes), cachePerPosition * (2049 + 1));
        QCOMPARE(double(last.kvCacheBytes), cachePerPosition * (2303 + 1));
        // The HBM-bound time is the bytes at 3350 GB/s * 0.85.
        QCOMPARE(first.hbmTimeS, double(first.bytes) / (3350e9 * 0.85));
        QCOMPARE(first.bytes, first.weightBytes + first.kvCacheBytes + first.activationBytes);
        // 1,204 kernels a step: 15 per decoder layer (attention norm, q, k, v, RoPE of q and k, flash attention,
        // o, residual; MLP norm, gate, up, SwiGLU, down, residual) and the embedding, final norm, LM head, sampler.
        QCOMPARE(first.kernels, int64_t(80 * 15 + 4));
        QCOMPARE(first.kernelGapS, double(first.kernels) * 2e-6);
    }

    void memoryBoundDecode_data()
    {
        QTest::addColumn<int>("batch");
        QTest::addColumn<bool>("overheads");
        QTest::newRow("batch 1, no kernel gaps or link latencies") << 1 << false;
        QTest::newRow("batch 1, the preset's gaps and latencies") << 1 << true;
        QTest::newRow("batch 8, no kernel gaps or link latencies") << 8 << false;
    }

    void memoryBoundDecode()
    {
        // Issue #18: the TPOT of a memory-bound decode equals the bytes a step reads over HBM bandwidth times the
        // preset's efficiency, within 2 %. llama3-70b tp8 with 1 or 8 sequences, TPOT the mean of the first and the
        // last decode step, so the cache is read at the mean context (2049 + 2303) / 2 (its read grows linearly).
        // Bytes a step moves per rank (bf16, h = 8192, F = 28672, 128-wide KV head, 129024-word padded vocabulary):
        //   weights: llamaDecodeWeightBytes();
        //   KV cache: 80 * B * 512 * (L + 1) (decodeStepBytes());
        //   activations: per layer, 2 B bytes times 17 h (the two norms read and write h, q, k, v, gate and up
        //     read it, o and down write it, the two residual adds read two and write one) + 6 h/8 (q's output,
        //     RoPE of q in and out, attention's query in and context out, o's input) + 2 * 128 (k before RoPE,
        //     written and read) + 6 F/8 (gate and up out, SwiGLU reads two and writes one, down in); and once a
        //     step 2 B (h + 2 h + h + V/8 + V) (embedding out, final norm, LM head in and out, the sampler's
        //     gathered logits) + 8 B (token ids in and out).
        // Time at 3350e9 * 0.85 bytes/s, plus what the model adds:
        //   - the k and v projections (8192 -> 128 per rank) are the kernels the GEMM model times compute-bound:
        //     one 128-column output tile, split over K into floor(8192 / (4 * 65)) = 31 slices on 132 SMs, runs at
        //     989.5e12 * 0.801 * (B / 128) * (31 / 132) FLOP/s; each does 2 B * 8192 * 128 FLOPs instead of moving
        //     its bytes (the 8192 * 128 weights, B h in, B 128 out), 160 a step;
        //   - the tensor-parallel collectives' bandwidth: 161 all-reduces of B h 2 bytes at 2 (8 - 1) / 8 of it over
        //     360 GB/s (450 GB/s NVLink at 0.8) and the all-gather of the logits, (8 - 1) * B * V/8 * 2 bytes;
        //   - with the preset's overheads on, a 2 us gap after each of the 1,204 kernels and 3 latency steps of
        //     5 us (ceil(log2 8) within a node) for each of the 162 collectives.
        QFETCH(int, batch);
        QFETCH(bool, overheads);
        std::vector<std::string> sets = llama70bTp8(batch);
        if (!overheads)
            sets.insert(sets.end(),
                { "cluster.kernel_launch_us=0", "cluster.intra_node_latency_us=0", "cluster.inter_node_latency_us=0" });
        const std::shared_ptr<const SynthesisResult> r = test::synth("llama3-70b", sets);
        const ServingEstimate e = served(*r);
        const Shapes s = shapesOf(r->config);
        const double b = batch, vocab = double(paddedVocab(r->config.model.vocab, 8)), hbm = 3350e9 * 0.85;
        const double meanContext = (2049.0 + 2303.0) / 2;
        const double cache = s.layers * b * 512 * (meanContext + 1);
        const double activations = s.layers * 2 * b * (17 * s.h + 6 * s.h / 8 + 2 * 128 + 6 * s.ffn / 8)
            + 2 * b * (4 * s.h + vocab / 8 + vocab) + 8 * b;
        const double bytes = llamaDecodeWeightBytes(r->config, b) + cache + activations;
        const double kvProjectionCompute = 2 * b * s.h * 128 / (989.5e12 * 0.801 * (b / 128) * (31.0 / 132));
        const double kvProjectionMemory = (s.h * 128 * 2 + b * s.h * 2 + b * 128 * 2) / hbm;
        const double links = 161 * 2 * 7.0 / 8 * b * s.h * 2 / 360e9 + 7 * b * vocab / 8 * 2 / 360e9;
        double expected = bytes / hbm + 160 * (kvProjectionCompute - kvProjectionMemory) + links;
        if (overheads)
            expected += (80 * 15 + 4) * 2e-6 + (80 * 2 + 2) * 3 * 5e-6;
        QVERIFY2(std::abs(e.tpotS / expected - 1) < 0.02,
            qPrintable(QStringLiteral("TPOT %1 ms, expected %2 ms").arg(e.tpotS * 1e3).arg(expected * 1e3)));
        // The bytes are the estimate's own: the step's HBM-bound time is that of the formula's bytes.
        QVERIFY(std::abs(double(e.classes[0].firstStep.bytes + e.classes[0].lastStep.bytes) / 2 / bytes - 1) < 1e-3);
        // Memory-bound: the step's kernels would take less time at their FLOP rates than at HBM speed.
        QVERIFY(e.classes[0].lastStep.computeTimeS < e.classes[0].lastStep.hbmTimeS);
    }

    void computeBoundPrefill()
    {
        // The TTFT of a compute-bound prefill: llama3-8b on one H100, 4 prompts of 4096 tokens (T = 16384), the
        // prefill alone. Its time is the FLOPs at the kernels' rates plus the memory-bound element-wise kernels:
        //   GEMMs: 2 * T * per-layer weights (q, k, v, o, gate, up, down) * layers + 2 * B * h * V (the LM head of
        //          the last position), at 989.5e12 * 0.801;
        //   flash attention: per layer, B * heads * P^2/2 causal (query, key) pairs at 2 * (128 + 128) FLOPs, at
        //          989.5e12 * 0.55 (the softmax adds 5 FLOPs per pair, 2 %, left out);
        //   element-wise kernels at 3350e9 * 0.85, per layer: the two RMSNorms (read and write T * h), the RoPE of
        //          q and k (read and write T * h and T * 1024), the two residual adds (read two, write one T * h),
        //          SwiGLU (read two, write one T * ffn); 2 bytes an element;
        //   a 2 us gap after each of the 32 * 15 + 4 kernels.
        // On top, GEMM wave quantization (the q, k, v and o projections' 4096 and 1024 output tiles fill 32 and 8
        // waves of 132 SMs, the last 3 % empty) and the LM head, whose 4 rows make it read its 1 GB of weights at
        // HBM speed (0.4 ms): about 1.5 %, so the estimate is within [1, 1.02] of this sum.
        const std::shared_ptr<const SynthesisResult> r =
            test::synth("llama3-8b", serving(1, 1, 1, 1, { "batch=4", "prompt_tokens=4096", "phases=prefill" }));
        const ServingEstimate e = served(*r);
        const Shapes s = shapesOf(r->config);
        const double batch = 4, prompt = 4096, tokens = batch * prompt, kv = s.kvHeads * s.headDim;
        const double layerWeights = 2 * s.h * s.h + 2 * s.h * kv + 3 * s.h * s.ffn;
        const double gemm = (2 * tokens * layerWeights * s.layers + 2 * batch * s.h * s.vocab) / (989.5e12 * 0.801);
        const double flash = s.layers * batch * s.heads * prompt * prompt / 2 * 2 * (2 * s.headDim) / (989.5e12 * 0.55);
        const double elementwise = s.layers * 2
            * (2 * 2 * tokens * s.h + 2 * tokens * (s.h + kv) + 2 * 3 * tokens * s.h + 3 * tokens * s.ffn)
            / (3350e9 * 0.85);
        const double gaps = (s.layers * 15 + 4) * 2e-6;
        const double expected = gemm + flash + elementwise + gaps;
        QVERIFY2(e.ttftS >= expected && e.ttftS < expected * 1.02,
            qPrintable(QStringLiteral("TTFT %1 s, expected %2 s (GEMMs %3, attention %4, element-wise %5)")
                           .arg(e.ttftS)
                           .arg(expected)
                           .arg(gemm)
                           .arg(flash)
                           .arg(elementwise)));
        // A prefill-only plan has no decode: no TPOT, and its throughput is the B first tokens over the TTFT.
        QCOMPARE(e.tpotS, 0.0);
        QCOMPARE(e.tokensPerS, batch / e.ttftS);
    }

    void throughputDefinitions_data()
    {
        QTest::addColumn<QString>("phases");
        QTest::newRow("both") << QStringLiteral("both");
        QTest::newRow("decode") << QStringLiteral("decode");
    }

    void throughputDefinitions()
    {
        // Over the generation of the batch: B * O output tokens in TTFT + (O - 1) * TPOT (decode only: the
        // B * (O - 1) decode tokens in (O - 1) * TPOT, no TTFT); per replica / dp, per GPU / world. TPOT is the
        // mean of the first and the last decode step. tp 4 x dp 2, B = 16, O = 64.
        QFETCH(QString, phases);
        const std::shared_ptr<const SynthesisResult> r = test::synth("llama3-70b",
            serving(2, 4, 1, 1,
                { "batch=16", "prompt_tokens=1000", "output_tokens=64", "phases=" + phases.toStdString() }));
        const ServingEstimate e = served(*r);
        const bool prefill = phases == QLatin1String("both");
        QCOMPARE(e.ttftS > 0, prefill);
        QCOMPARE(e.tpotS, (e.tpotFirstS + e.tpotLastS) / 2);
        QVERIFY(e.tpotLastS > e.tpotFirstS); // 62 more cached positions to read
        const double time = e.ttftS + 63 * e.tpotS;
        QCOMPARE(e.generationTimeS, time);
        QCOMPARE(e.tokensPerS, 16 * (prefill ? 64 : 63) / time);
        QCOMPARE(e.tokensPerSPerReplica, e.tokensPerS / 2);
        QCOMPARE(e.tokensPerSPerGpu, e.tokensPerS / 8);
        QCOMPARE(e.decodeTokensPerSPerGpu, 16 / e.tpotS / 8);
    }

    void pipelineDecode()
    {
        // tp 4 x pp 2: each stage serves both micro-batches of 4 sequences in a step, and a micro-batch's next
        // step waits for its token from the last stage. A step then takes at least the two stages' work on one
        // micro-batch each (one round trip) and at least each stage's work on both micro-batches; its kernels on
        // stage s are classes[s].lastStep.kernelTimeS (both micro-batches).
        const std::shared_ptr<const SynthesisResult> r =
            test::synth("llama3-70b", serving(1, 4, 2, 1, { "batch=8", "prompt_tokens=1000", "output_tokens=16" }));
        const ServingEstimate e = served(*r);
        QCOMPARE(e.classes.size(), size_t(2));
        const double stage0 = e.classes[0].lastStep.kernelTimeS, stage1 = e.classes[1].lastStep.kernelTimeS;
        QVERIFY2(e.tpotLastS >= std::max(stage0, stage1), qPrintable(QString::number(e.tpotLastS)));
        QVERIFY2(e.tpotLastS >= (stage0 + stage1) / 2, qPrintable(QString::number(e.tpotLastS)));
        // Each stage reads its 40 layers' weights once per micro-batch: twice a step.
        const Shapes s = shapesOf(r->config);
        const double kv = s.kvHeads * s.headDim;
        const double layer = 2 * ((2 * s.h * s.h + 2 * s.h * kv + 3 * s.h * s.ffn) / 4 + 2 * s.h);
        QVERIFY(double(e.classes[0].lastStep.weightBytes) >= 2 * 40 * layer);
        QVERIFY(double(e.classes[0].lastStep.weightBytes) < 2 * 40 * layer * 1.01); // + 2 * 4 embedding rows
    }

    void maxSequences()
    {
        // The largest batch: each sequence's cache at the end of the generation, P + O - 1 = 2303 positions in
        // blocks of 16 = 2304, is 80 layers * 2 * 1 KV head * 128 * 2 bytes * 2304 per rank of tp 8. Beside the
        // resident weights and the programs' transient peak (their own figures, inputs here), floor(room / that)
        // sequences fit; the batch step of dp 1 x pp 1 is 1.
        const std::shared_ptr<const SynthesisResult> r = test::synth("llama3-70b", llama70bTp8(64));
        const ServingEstimate e = served(*r);
        const int64_t perSequence = int64_t(80) * 2 * 1 * 128 * 2 * 2304;
        const ServingClassEstimate& c = e.classes[0];
        QCOMPARE(c.kvCacheBytesPerSequence, perSequence);
        QCOMPARE(c.generationKvCacheBytes, 64 * perSequence);
        QCOMPARE(c.weightBytes, r->summaries[0].weightBytes);
        QCOMPARE(c.activationPeakBytes, r->summaries[0].activationPeakBytes);
        const int64_t hbm = int64_t(80) << 30;
        const int64_t room = hbm - c.weightBytes - c.activationPeakBytes;
        QCOMPARE(e.maxSequences, room / perSequence);
        QCOMPARE(e.generationPeakBytes, c.weightBytes + c.activationPeakBytes + 64 * perSequence);
        QVERIFY(e.maxSequences >= 64); // the preset's batch fits

        // MoE decode batches come in steps: with dp 4 and 8 experts of top-2 (mixtral-8x7b), a step's routed
        // tokens (B / pp) * 2 spread over 8 * 4 expert slots: B a multiple of lcm(4, 32 / gcd(2, 32)) = 16.
        const std::shared_ptr<const SynthesisResult> moe =
            test::synth("mixtral-8x7b", serving(4, 2, 1, 4, { "batch=16", "prompt_tokens=1000" }));
        QCOMPARE(inferenceBatchStep(moe->config), int64_t(16));
        const ServingEstimate m = served(*moe);
        QCOMPARE(m.maxSequences % 16, int64_t(0));
        QVERIFY(m.maxSequences >= 16);
    }

    void presetsSynthesizeAndFit_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<int64_t>("world");
        QTest::newRow("llama3-70b-serving") << QStringLiteral("llama3-70b-serving") << int64_t(8);
        QTest::newRow("deepseek-v3-serving") << QStringLiteral("deepseek-v3-serving") << int64_t(32);
    }

    void presetsSynthesizeAndFit()
    {
        // The two serving presets load, synthesize and are estimated; their batch fits their GPUs for the whole
        // generation.
        QFETCH(QString, preset);
        QFETCH(int64_t, world);
        const std::vector<std::string> names = presetNames();
        QVERIFY(std::find(names.begin(), names.end(), preset.toStdString()) != names.end());
        const std::shared_ptr<const SynthesisResult> r = test::synth(preset.toStdString(), {});
        QVERIFY(isInference(r->config));
        QCOMPARE(r->worldSize(), world);
        const ServingEstimate e = served(*r);
        QVERIFY(e.ttftS > 0 && e.tpotS > 0 && e.tokensPerSPerGpu > 0);
        QVERIFY(e.maxSequences >= r->config.inference.batch);
        QVERIFY(e.generationPeakBytes <= e.hbmBytes);
    }

    void servingSweep()
    {
        // llama3-70b-serving on 8 GPUs: every (dp, tp, pp) with dp * tp * pp = 8 and 64 divisible by dp * pp:
        // 10 meshes. tp 1 holds all 70.6 B parameters in bf16, 141 GB > 80 GiB: out of memory. The rest fit;
        // ranked by output tokens/s per GPU, highest first.
        std::string error;
        const ConfigResult loaded = loadConfigOrPreset("llama3-70b-serving");
        QVERIFY(loaded.config);
        const std::optional<GpuSpec> gpu = gpuForConfig(*loaded.config, error);
        QVERIFY(gpu);
        SweepOptions options;
        options.threads = 2;
        const SweepResult all = sweep(*loaded.config, 8, *gpu, EstimateOptions {}, nullptr, options);
        QVERIFY2(all.error.empty(), all.error.c_str());
        QVERIFY(all.serving);
        QCOMPARE(all.candidates, int64_t(10));
        for (size_t i = 1; i < all.ranked.size(); ++i)
            QVERIFY(all.ranked[i - 1].tokensPerSPerGpu >= all.ranked[i].tokensPerSPerGpu);
        int outOfMemory = 0;
        for (const SweepCandidate& c : all.rejected) {
            QCOMPARE(c.rejection, SweepRejection::OutOfMemory);
            QCOMPARE(c.tp, int64_t(1));
            QVERIFY(c.peakBytes > gpu->hbmBytes);
            QVERIFY(70.5e9 * 2 > double(gpu->hbmBytes));
            ++outOfMemory;
        }
        QCOMPARE(outOfMemory, 1);
        QCOMPARE(all.ranked.size(), size_t(9));

        // A TPOT limit between the fastest and the slowest fitting plan: the plans over it are rejected with
        // their TPOT, the others ranked in the same order as before.
        std::vector<double> tpots;
        for (const SweepCandidate& c : all.ranked)
            tpots.push_back(c.tpotS);
        std::sort(tpots.begin(), tpots.end());
        options.tpotLimitS = (tpots[tpots.size() / 2] + tpots[tpots.size() / 2 + 1]) / 2;
        const SweepResult limited = sweep(*loaded.config, 8, *gpu, EstimateOptions {}, nullptr, options);
        QCOMPARE(limited.tpotLimitS, options.tpotLimitS);
        size_t over = 0;
        for (const SweepCandidate& c : all.ranked)
            over += c.tpotS > options.tpotLimitS ? 1 : 0;
        QVERIFY(over > 0 && over < all.ranked.size());
        QCOMPARE(limited.ranked.size(), all.ranked.size() - over);
        for (const SweepCandidate& c : limited.ranked)
            QVERIFY(c.tpotS <= options.tpotLimitS);
        size_t rejectedForTpot = 0;
        for (const SweepCandidate& c : limited.rejected)
            if (c.rejection == SweepRejection::OverTpotLimit) {
                QVERIFY(c.tpotS > options.tpotLimitS);
                QCOMPARE(c.reasonKey, std::string("tpot"));
                ++rejectedForTpot;
            }
        QCOMPARE(rejectedForTpot, over);
        size_t k = 0;
        for (const SweepCandidate& c : all.ranked)
            if (c.tpotS <= options.tpotLimitS)
                QCOMPARE(limited.ranked[k++].index, c.index);
    }

    void moeServingSweep()
    {
        // MoE plans try every ep dividing dp, ep = dp being DeepSeek-style data-parallel attention with expert
        // parallelism. Over dp * tp * pp = 8 that is sum over the meshes of the divisors of dp: dp 8 (1 mesh, 4
        // divisors), dp 4 (2 meshes, 3), dp 2 (3 meshes, 2), dp 1 (4 meshes, 1) = 4 + 6 + 6 + 4 = 20 plans.
        std::string error;
        const ConfigResult loaded = loadConfigOrPreset(
            "mixtral-8x7b", serving(1, 1, 1, 1, { "batch=64", "prompt_tokens=1000", "output_tokens=32" }));
        QVERIFY(loaded.config);
        const std::optional<GpuSpec> gpu = gpuForConfig(*loaded.config, error);
        QVERIFY(gpu);
        const SweepResult r = sweep(*loaded.config, 8, *gpu, EstimateOptions {}, nullptr, SweepOptions {});
        QVERIFY2(r.error.empty(), r.error.c_str());
        QCOMPARE(r.candidates, int64_t(20));
        bool dpAttention = false;
        for (const SweepCandidate& c : r.ranked)
            dpAttention = dpAttention || (c.dp == 8 && c.ep == 8 && c.tp == 1);
        QVERIFY(dpAttention);
    }
};

QTEST_GUILESS_MAIN(TestServingEstimate)
#include "tst_servingestimate.moc"
