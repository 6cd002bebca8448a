// SPDX-License-Identifier: MIT
// Serving over time (issue #28): the request trace reader, generated arrivals, the continuous-batching scheduler
// (conservation, KV capacity, preemption, Little's law) and the static batch reproduced by the simulation. Expected
// values come from the inputs themselves (counts, sums), from Python's csv module over the shipped Azure excerpts
// (resources/traces/README.md), or from closed forms derived in the comments.
#include "config/configloader.h"
#include "estimate/servingestimate.h"
#include "estimate/stepestimate.h"
#include "export/traceexporter.h"
#include "serving/iterationexport.h"
#include "serving/iterationtimemodel.h"
#include "serving/requesttrace.h"
#include "serving/servingrequest.h"
#include "serving/servingscheduler.h"
#include "serving/servingsimulation.h"
#include "serving/slosweep.h"
#include "synthesis/synthesis.h"
#include "synthhelpers.h"

#include <QtTest>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

using namespace stagecraft;

namespace {

/// An iteration of `fixedS` plus `perTokenS` per token computed (prefill chunks and decode tokens alike).
class LinearCost final : public IterationCost
{
public:
    LinearCost(double fixedS, double perTokenS)
        : m_fixedS(fixedS)
        , m_perTokenS(perTokenS)
    {
    }
    double iterationS(const IterationShape& s) const override
    {
        double tokens = double(s.decodeSequences * (1 + s.speculativeTokens));
        for (const PrefillChunk& c : s.chunks)
            tokens += double(c.tokens);
        return m_fixedS + m_perTokenS * tokens;
    }

private:
    double m_fixedS, m_perTokenS;
};

std::vector<ReplicaRequest> poissonRequests(int n, double rate, int64_t prompt, int64_t output, uint64_t seed)
{
    Config c;
    c.workload = Workload::Inference;
    c.inference.arrival = RequestArrival::Poisson;
    c.inference.requestRate = rate;
    c.inference.requests = n;
    c.inference.promptTokens = prompt;
    c.inference.outputTokens = output;
    c.inference.lengthDistribution = LengthDistribution::Uniform;
    c.inference.lengthCv = 0.5;
    c.inference.seed = int64_t(seed);
    std::vector<ServingRequest> generated;
    std::string error;
    if (!generateRequests(c, generated, error))
        qFatal("%s", error.c_str());
    std::vector<ReplicaRequest> out;
    for (size_t i = 0; i < generated.size(); ++i)
        out.push_back(
            { int64_t(i), generated[i].arrivalS, generated[i].promptTokens, generated[i].outputTokens, 0, 0, -1 });
    return out;
}

std::string traceFile(const char* name)
{
    return std::string(STAGECRAFT_SOURCE_DIR) + "/resources/traces/" + name;
}

} // namespace

class TestServingSimulation : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void traceParses_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("rows");
        QTest::addColumn<double>("lastArrival");
        QTest::addColumn<qlonglong>("promptSum");
        QTest::addColumn<qlonglong>("outputSum");
        QTest::newRow("plain, no header") << "0,10,5\n1.5,20,6\n" << 2 << 1.5 << 30LL << 11LL;
        QTest::newRow("header any order, CRLF, no last newline")
            << "output_tokens,arrival_s,prompt_tokens\r\n7,2,100\r\n8,0.5,50" << 2 << 1.5 << 150LL << 15LL;
        QTest::newRow("azure names and date-times")
            << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n"
               "2023-11-16 18:17:04.0319600,3180,8\n"
            << 2 << 0.052 << 7988LL << 18LL;
        QTest::newRow("quoted cells with a doubled quote inside a header")
            << "\"arrival\",\"prompt\",\"output\"\n\"3\",\"4\",\"5\"\n\n"
            << 1 << 0.0 << 4LL << 5LL;
        QTest::newRow("unsorted rows are sorted, times from the earliest") << "10,1,2\n4,1,2\n"
                                                                           << 2 << 6.0 << 2LL << 4LL;
        QTest::newRow("byte order mark") << "\xef\xbb\xbf"
                                            "0,1,1\n"
                                         << 1 << 0.0 << 1LL << 1LL;
    }

    void traceParses()
    {
        QFETCH(QString, text);
        QFETCH(int, rows);
        QFETCH(double, lastArrival);
        QFETCH(qlonglong, promptSum);
        QFETCH(qlonglong, outputSum);
        const RequestTrace t = parseRequestTrace(text.toStdString(), "t.csv", 0);
        for (const Diagnostic& d : t.diagnostics)
            qWarning("%s", d.toString().c_str());
        QVERIFY(t.diagnostics.empty());
        QCOMPARE(int(t.requests.size()), rows);
        QVERIFY(std::abs(t.requests.back().arrivalS - lastArrival) < 1e-6);
        qlonglong p = 0, o = 0;
        for (const ServingRequest& r : t.requests) {
            p += r.promptTokens;
            o += r.outputTokens;
        }
        QCOMPARE(p, promptSum);
        QCOMPARE(o, outputSum);
    }

    void traceErrors_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("expected"); // the first diagnostic, whole
        QTest::newRow("negative prompt") << QByteArray("0,10,5\n1,-3,4\n")
                                         << "t.csv:2:3: error: inference.trace: prompt tokens: expected an integer "
                                            "from 1 to 10000000, found \"-3\"";
        QTest::newRow("too few cells") << QByteArray("0,10\n")
                                       << "t.csv:1:5: error: inference.trace: expected 3 comma-separated cells "
                                          "(arrival, prompt tokens, output tokens), found 2";
        QTest::newRow("unknown header, escaped")
            << QByteArray("when\x01\"x,prompt,output\n1,2,3\n")
            << "t.csv:1:1: error: inference.trace: unknown column \"when\\x01\\\"x\" in the header; expected "
               "arrival_s (or timestamp), prompt_tokens (or ContextTokens) and output_tokens (or GeneratedTokens)";
        QTest::newRow("open quote") << QByteArray("1,\"2,3\n")
                                    << "t.csv:1:3: error: inference.trace: a quoted cell is not closed on its line";
        QTest::newRow("bad date") << QByteArray("0,1,1\n2023-13-01 00:00:00,1,1\n")
                                  << "t.csv:2:1: error: inference.trace: arrival: expected seconds (a non-negative "
                                     "number) or a date-time YYYY-MM-DD HH:MM:SS[.fraction], found "
                                     "\"2023-13-01 00:00:00\"";
        QTest::newRow("empty") << QByteArray("\n\n") << "t.csv:2:1: error: inference.trace: the trace holds no request";
        QTest::newRow("binary") << QByteArray("0,1,1\n\xff\xfe,1,1\n")
                                << "t.csv:2:1: error: inference.trace: arrival: expected seconds (a non-negative "
                                   "number) or a date-time YYYY-MM-DD HH:MM:SS[.fraction], found \"\\xff\\xfe\"";
    }

    void traceErrors()
    {
        QFETCH(QByteArray, text);
        QFETCH(QString, expected);
        const RequestTrace t = parseRequestTrace(std::string_view(text.constData(), size_t(text.size())), "t.csv", 0);
        QVERIFY(!t.diagnostics.empty());
        QVERIFY(t.requests.empty());
        QCOMPARE(QString::fromStdString(t.diagnostics.front().toString()), expected);
    }

    void traceLimits()
    {
        // A directory and a missing file are refused with a message; the request cap keeps the first rows.
        RequestTrace t = readRequestTrace(STAGECRAFT_TEST_DATA, 0);
        QCOMPARE(int(t.diagnostics.size()), 1);
        QVERIFY(QString::fromStdString(t.diagnostics[0].message).contains(QLatin1String("directory")));
        t = readRequestTrace(traceFile("no-such-trace.csv"), 0);
        QCOMPARE(int(t.diagnostics.size()), 1);
        t = readRequestTrace(traceFile("azure-llm-2023-conv-first1000.csv"), 10);
        QCOMPARE(int(t.requests.size()), 10);
        QCOMPARE(t.requests[1].promptTokens, int64_t(396)); // the file's second row: 396 context tokens
    }

    void azureExcerpts_data()
    {
        // Python's csv module over the shipped files (resources/traces/README.md).
        QTest::addColumn<QString>("file");
        QTest::addColumn<qlonglong>("promptSum");
        QTest::addColumn<qlonglong>("outputSum");
        QTest::addColumn<double>("spanS");
        QTest::newRow("conv") << "azure-llm-2023-conv-first1000.csv" << 1014189LL << 247262LL << 216.0273931;
        QTest::newRow("code") << "azure-llm-2023-code-first1000.csv" << 2122354LL << 27621LL << 521.5885761;
    }

    void azureExcerpts()
    {
        QFETCH(QString, file);
        QFETCH(qlonglong, promptSum);
        QFETCH(qlonglong, outputSum);
        QFETCH(double, spanS);
        const RequestTrace t = readRequestTrace(traceFile(file.toLatin1().constData()), 0);
        QVERIFY(t.diagnostics.empty());
        QCOMPARE(int(t.requests.size()), 1000);
        qlonglong p = 0, o = 0;
        for (const ServingRequest& r : t.requests) {
            p += r.promptTokens;
            o += r.outputTokens;
        }
        QCOMPARE(p, promptSum);
        QCOMPARE(o, outputSum);
        QVERIFY(std::abs(t.requests.back().arrivalS - spanS) < 1e-6);
    }

    void generatedArrivals_data()
    {
        QTest::addColumn<int>("arrival");
        QTest::addColumn<double>("cv");
        QTest::newRow("poisson") << int(RequestArrival::Poisson) << 1.0;
        QTest::newRow("gamma cv 3") << int(RequestArrival::Gamma) << 3.0;
        QTest::newRow("gamma cv 0.5") << int(RequestArrival::Gamma) << 0.5;
    }

    void generatedArrivals()
    {
        // 20,000 gaps: the sample mean of the gaps is within 4 standard errors (cv / sqrt(n)) of 1/rate, the
        // sample CV within 10% of the asked one (Poisson gaps have CV 1); lengths uniform with mean 500 and CV 0.5.
        QFETCH(int, arrival);
        QFETCH(double, cv);
        Config c;
        c.workload = Workload::Inference;
        c.inference.arrival = RequestArrival(arrival);
        c.inference.requestRate = 4;
        c.inference.arrivalCv = cv;
        c.inference.requests = 20000;
        c.inference.promptTokens = 500;
        c.inference.outputTokens = 100;
        c.inference.lengthDistribution = LengthDistribution::Uniform;
        c.inference.lengthCv = 0.5;
        std::vector<ServingRequest> r;
        std::string error;
        QVERIFY(generateRequests(c, r, error));
        QCOMPARE(int(r.size()), 20000);
        std::vector<double> gaps;
        for (size_t i = 1; i < r.size(); ++i)
            gaps.push_back(r[i].arrivalS - r[i - 1].arrivalS);
        const double n = double(gaps.size());
        const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / n;
        double var = 0;
        for (double g : gaps)
            var += (g - mean) * (g - mean);
        const double sampleCv = std::sqrt(var / (n - 1)) / mean;
        QVERIFY2(std::abs(mean - 0.25) < 4 * 0.25 * cv / std::sqrt(n), qPrintable(QString::number(mean)));
        QVERIFY2(std::abs(sampleCv - cv) < 0.1 * cv, qPrintable(QString::number(sampleCv)));
        double prompt = 0;
        int64_t lo = 1 << 30, hi = 0;
        for (const ServingRequest& x : r) {
            prompt += double(x.promptTokens);
            lo = std::min(lo, x.promptTokens);
            hi = std::max(hi, x.promptTokens);
        }
        // Uniform over 500 * (1 -+ sqrt(3) * 0.5) = [67, 933].
        QVERIFY(std::abs(prompt / double(r.size()) - 500) < 5);
        QVERIFY(lo >= 66 && hi <= 934);
        // Deterministic for a seed.
        std::vector<ServingRequest> again;
        QVERIFY(generateRequests(c, again, error));
        QVERIFY(again == r);
    }

    void schedulerConservation_data()
    {
        QTest::addColumn<double>("rate");
        QTest::addColumn<qlonglong>("kvBlocks");
        QTest::addColumn<bool>("swap");
        QTest::addColumn<bool>("chunked");
        QTest::addColumn<qlonglong>("speculative");
        QTest::addColumn<bool>("preempts");
        // Ample cache, light load: nobody is preempted.
        QTest::newRow("underloaded") << 2.0 << 100000LL << false << true << 0LL << false;
        // A cache of 400 blocks of 16 (6,400 tokens) for requests of ~700 tokens each: preemptions by recompute.
        QTest::newRow("tight cache, recompute") << 40.0 << 400LL << false << true << 0LL << true;
        QTest::newRow("tight cache, swap") << 40.0 << 400LL << true << true << 0LL << true;
        QTest::newRow("no chunked prefill") << 40.0 << 400LL << false << false << 0LL << true;
        QTest::newRow("speculative, 3 drafts") << 40.0 << 400LL << false << true << 3LL << true;
    }

    void schedulerConservation()
    {
        QFETCH(double, rate);
        QFETCH(qlonglong, kvBlocks);
        QFETCH(bool, swap);
        QFETCH(bool, chunked);
        QFETCH(qlonglong, speculative);
        QFETCH(bool, preempts);
        const std::vector<ReplicaRequest> requests = poissonRequests(3000, rate, 500, 200, 7);
        SchedulerSettings s;
        s.maxBatchedTokens = 2048;
        s.maxSequences = 64;
        s.chunkedPrefill = chunked;
        s.blockSize = 16;
        s.kvBlocks = kvBlocks;
        s.preemptBySwap = swap;
        s.swapSPerBlock = 1e-5;
        s.speculativeTokens = speculative;
        s.acceptanceRate = 0.6;
        const LinearCost cost(0.01, 2e-5);
        const ReplicaRun run = simulateReplica(requests, s, cost);
        // Requests in = requests out; each finished after it arrived, its first token between; tokens generated =
        // the sum of the outputs.
        int64_t finished = 0, generated = 0, expected = 0, preempted = 0;
        for (size_t i = 0; i < requests.size(); ++i) {
            const RequestOutcome& o = run.outcomes[i];
            QVERIFY(!o.rejected);
            QVERIFY(o.finishS >= o.firstTokenS && o.firstTokenS > requests[i].readyS);
            finished += o.finishS >= 0;
            generated += o.generatedTokens;
            expected += requests[i].outputTokens;
            preempted += o.preemptions > 0;
        }
        QCOMPARE(finished, int64_t(requests.size()));
        QCOMPARE(generated, expected);
        // KV blocks never above capacity; no more running than max_sequences; the budget held.
        for (const ServingSample& x : run.samples) {
            QVERIFY(x.kvBlocksUsed <= kvBlocks);
            QVERIFY(x.running <= 64);
            QVERIFY(x.prefillTokens + x.decodeSequences * (1 + speculative) <= 2048);
        }
        QCOMPARE(preempted > 0, preempts); // and every preempted request finished (above)
        QCOMPARE(run.preemptions > 0, preempts);
        // Little's law: the time-average of requests in the system (from the iterations) = throughput x mean
        // latency, within 3% (arrivals join the count at the next iteration's start).
        double area = 0, latency = 0, end = 0;
        for (const ServingSample& x : run.samples)
            area += double(x.running + x.waiting) * x.durationS;
        for (size_t i = 0; i < requests.size(); ++i) {
            latency += run.outcomes[i].finishS - requests[i].readyS;
            end = std::max(end, run.outcomes[i].finishS);
        }
        const double span = end - requests.front().readyS;
        const double L = area / span, lambdaW = double(requests.size()) / span * latency / double(requests.size());
        QVERIFY2(std::abs(L - lambdaW) < 0.03 * lambdaW,
            qPrintable(QStringLiteral("L %1, lambda W %2").arg(L).arg(lambdaW)));
    }

    void staticBatchUnchanged_data()
    {
        QTest::addColumn<QStringList>("sets");
        QTest::newRow("tiny, tp 1") << QStringList { QStringLiteral("parallelism.tp=1"),
            QStringLiteral("parallelism.pp=1") };
        QTest::newRow("tiny, tp 2 x pp 2")
            << QStringList { QStringLiteral("parallelism.tp=2"), QStringLiteral("parallelism.pp=2") };
        QTest::newRow("tiny, fp8 weights and cache") << QStringList { QStringLiteral("parallelism.tp=2"),
            QStringLiteral("inference.weight_dtype=fp8"), QStringLiteral("inference.kv_cache_dtype=fp8") };
    }

    void staticBatchUnchanged()
    {
        // The scheduler given one batch (every request at time 0, a token budget and a sequence limit that hold it
        // whole, a cache that holds it) runs one prefill of the batch, then one decode step per token: each
        // request's TTFT is the static estimate's, its TPOT the estimate's mean over the decode steps, its end the
        // generation's end.
        QFETCH(QStringList, sets);
        std::vector<std::string> overrides { "workload=inference", "inference.batch=8", "inference.prompt_tokens=64",
            "inference.output_tokens=32", "inference.max_batched_tokens=512", "inference.max_sequences=8",
            "cluster.gpu=h100-sxm" };
        for (const QString& set : sets)
            overrides.push_back(set.toStdString());
        const auto r = test::synth("tiny", overrides);
        std::string error;
        const std::optional<GpuSpec> gpu = gpuForConfig(r->config, error);
        QVERIFY(gpu);
        ServingEstimate e;
        QVERIFY2(estimateServing(*r, *gpu, EstimateOptions {}, e, error), error.c_str());
        ServingSimulation s;
        QVERIFY2(simulateServing(r->config, *gpu, EstimateOptions {}, s, error), error.c_str());
        QCOMPARE(s.finished, int64_t(8));
        QCOMPARE(s.preemptions, int64_t(0));
        for (size_t i = 0; i < s.ttftSamples.size(); ++i) {
            QVERIFY2(std::abs(s.ttftSamples[i] - e.ttftS) <= 1e-6 * e.ttftS,
                qPrintable(QStringLiteral("TTFT %1 vs %2").arg(s.ttftSamples[i]).arg(e.ttftS)));
            QVERIFY2(std::abs(s.tpotSamples[i] - e.tpotS) <= 1e-6 * e.tpotS,
                qPrintable(QStringLiteral("TPOT %1 vs %2").arg(s.tpotSamples[i]).arg(e.tpotS)));
            QVERIFY(std::abs(s.e2eSamples[i] - e.generationTimeS) <= 1e-6 * e.generationTimeS);
        }
        QVERIFY(std::abs(s.outputTokensPerS - e.tokensPerS) <= 1e-6 * e.tokensPerS);
    }

    void fp8WeightsHalveGemmReads()
    {
        // llama3-8b on one H100 (tp 1): an FP8 decode step reads each projection weight at 1 byte instead of 2, so
        // its weight bytes fall by half the projections' bf16 bytes: layers * (2 h^2 + 2 h kv + 3 h ffn) bytes
        // (q and o: h x h; k and v: h x kv with kv = kv_heads * head_dim; gate, up, down: h x ffn). The LM head
        // and the embedding rows stay bf16.
        auto decodeOf = [](const char* dtype) {
            const auto r = test::synth("llama3-8b",
                { "workload=inference", "inference.batch=8", "inference.prompt_tokens=512",
                    "inference.output_tokens=64", "parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=1",
                    "parallelism.cp=1", std::string("inference.weight_dtype=") + dtype });
            std::string error;
            const std::optional<GpuSpec> gpu = gpuForConfig(r->config, error);
            ServingEstimate e;
            if (!gpu || !estimateServing(*r, *gpu, EstimateOptions {}, e, error))
                qFatal("%s", error.c_str());
            return e;
        };
        const ServingEstimate bf16 = decodeOf("bf16"), fp8 = decodeOf("fp8");
        const ConfigResult loaded = loadConfigOrPreset("llama3-8b");
        const ModelConfig& m = loaded.config->model;
        const int64_t kv = m.kvHeads * (m.hidden / m.heads);
        const int64_t half = m.layers * (2 * m.hidden * m.hidden + 2 * m.hidden * kv + 3 * m.hidden * m.ffnHidden);
        QCOMPARE(bf16.classes[0].firstStep.weightBytes - fp8.classes[0].firstStep.weightBytes, half);
        QCOMPARE(bf16.classes[0].weightBytes - fp8.classes[0].weightBytes, half);
        QVERIFY(fp8.tpotS < bf16.tpotS && fp8.ttftS < bf16.ttftS);
        QVERIFY(fp8.maxSequences > bf16.maxSequences);
    }

    void disaggregatedConserves()
    {
        // 2 prefill replicas (tp 2) and 2 decode replicas (tp 1) of tiny: every request finishes once, its first
        // token from a prefill replica, its cache moved, its last token on a decode replica; the KV transfer of a
        // prompt is its positions' bytes over the link plus the link's latency.
        const ConfigResult loaded = loadConfigOrPreset("tiny",
            { "workload=inference", "inference.batch=2", "inference.prompt_tokens=64", "inference.output_tokens=16",
                "inference.arrival=poisson", "inference.request_rate=200", "inference.requests=300",
                "inference.prefill_replicas=2", "inference.prefill_tp=2", "parallelism.dp=2", "parallelism.tp=1",
                "cluster.gpu=h100-sxm" });
        QVERIFY(loaded.config);
        std::string error;
        const std::optional<GpuSpec> gpu = gpuForConfig(*loaded.config, error);
        ServingSimulation s;
        QVERIFY2(simulateServing(*loaded.config, *gpu, EstimateOptions {}, s, error), error.c_str());
        QCOMPARE(s.requests, int64_t(300));
        QCOMPARE(s.finished, int64_t(300));
        QCOMPARE(s.prefillReplicas, int64_t(2));
        QCOMPARE(s.gpus, int64_t(2 * 2 + 2 * 1));
        QCOMPARE(int(s.runs.size()), 4);
        int64_t prefillDone = 0, decodeDone = 0;
        for (size_t q = 0; q < s.runs.size(); ++q)
            for (const RequestOutcome& o : s.runs[q].outcomes)
                (q < 2 ? prefillDone : decodeDone) += o.finishS >= 0;
        QCOMPARE(prefillDone, int64_t(300));
        QCOMPARE(decodeDone, int64_t(300));
        QVERIFY(s.kvTransferS > 0);
        for (size_t i = 0; i < s.e2eSamples.size(); ++i)
            QVERIFY(s.e2eSamples[i] > s.ttftSamples[i] + float(s.kvTransferS) * 0.99f);
    }

    void sloSweepRanksByGpus()
    {
        // tiny at 400 requests/s within TTFT 50 ms and TPOT 5 ms: every ranked plan's GPUs are its replicas times
        // its GPUs per replica, the list ascends, and one replica of each serves its rate within the bounds.
        const ConfigResult loaded = loadConfigOrPreset("tiny",
            { "workload=inference", "inference.batch=1", "inference.prompt_tokens=64", "inference.output_tokens=16",
                "cluster.gpu=h100-sxm" });
        QVERIFY(loaded.config);
        std::string error;
        const std::optional<GpuSpec> gpu = gpuForConfig(*loaded.config, error);
        SloSweepOptions o;
        o.requestRate = 400;
        o.sloTtftS = 0.05;
        o.sloTpotS = 0.005;
        o.requests = 200;
        o.maxGpusPerReplica = 2;
        const SloSweepResult r = sloSweep(*loaded.config, *gpu, EstimateOptions {}, o);
        QVERIFY2(r.error.empty(), r.error.c_str());
        QVERIFY(!r.ranked.empty());
        bool sawDisaggregated = false;
        for (size_t i = 0; i < r.ranked.size(); ++i) {
            const SloPlan& p = r.ranked[i];
            QCOMPARE(p.gpus, p.replicas * p.tp * p.pp + p.prefillReplicas * p.prefillTp * p.prefillPp);
            QVERIFY(p.replicas == int64_t(std::ceil(400 / p.ratePerReplica - 1e-9)));
            if (i > 0)
                QVERIFY(r.ranked[i - 1].gpus <= p.gpus);
            sawDisaggregated = sawDisaggregated || p.disaggregated;
        }
        QVERIFY(sawDisaggregated);
        // The best colocated plan at its rate per replica meets the SLOs for 90% of requests.
        const auto best =
            std::find_if(r.ranked.begin(), r.ranked.end(), [](const SloPlan& p) { return !p.disaggregated; });
        QVERIFY(best != r.ranked.end());
        Config c = *loaded.config;
        c.parallelism.tp = best->tp;
        c.parallelism.pp = best->pp;
        c.inference.arrival = RequestArrival::Poisson;
        c.inference.requestRate = best->ratePerReplica;
        c.inference.requests = 200;
        c.inference.sloTtftMs = 50;
        c.inference.sloTpotMs = 5;
        ServingSimulation s;
        QVERIFY2(simulateServing(c, *gpu, EstimateOptions {}, s, error), error.c_str());
        QVERIFY2(s.goodputFraction >= 0.85, qPrintable(QString::number(s.goodputFraction)));
    }

    void speculativeStepsPerToken()
    {
        // One request of output 1 + 6 * E tokens alone: with k drafts of acceptance a, a decode step yields
        // E = (1 - a^(k+1)) / (1 - a) tokens (k = 2, a = 0.5: 1.75), so 42 output tokens after the prefill's one
        // take ceil(42 / 1.75) = 24 decode steps: 25 iterations in all.
        SchedulerSettings s;
        s.kvBlocks = 1000;
        s.speculativeTokens = 2;
        s.acceptanceRate = 0.5;
        const LinearCost cost(1, 0);
        const ReplicaRun run = simulateReplica({ { 0, 0, 100, 43, 0, 0, -1 } }, s, cost);
        QCOMPARE(run.iterations, int64_t(25));
        QCOMPARE(run.outcomes[0].generatedTokens, int64_t(43));
        QCOMPARE(run.outcomes[0].finishS, 25.0);
    }

    void samplesRecordTheIterationShape()
    {
        // Three prompts of 100 tokens at t = 0, 4 output tokens each, a budget that holds them whole: iteration 0
        // computes the three prompts (3 chunks, 300 tokens) and samples each first token; iteration k >= 1 decodes
        // all three, each reading its 100 + k positions (the cache plus the new token).
        std::vector<ReplicaRequest> requests;
        for (int i = 0; i < 3; ++i)
            requests.push_back({ i, 0.0, 100, 4, 0, 0, -1 });
        SchedulerSettings s;
        s.maxBatchedTokens = 4096;
        s.kvBlocks = 1000;
        const ReplicaRun run = simulateReplica(requests, s, LinearCost(0.01, 1e-5));
        QCOMPARE(int(run.samples.size()), 4); // the prefill and output - 1 = 3 decode steps
        QCOMPARE(run.samples[0].prefillChunks, 3);
        QCOMPARE(run.samples[0].prefillTokens, int64_t(300));
        QCOMPARE(run.samples[0].decodeSequences, int64_t(0));
        for (int k = 1; k <= 3; ++k) {
            QCOMPARE(run.samples[size_t(k)].prefillChunks, 0);
            QCOMPARE(run.samples[size_t(k)].decodeSequences, int64_t(3));
            QCOMPARE(run.samples[size_t(k)].decodeContextTokens, 3.0 * (100 + k));
        }
    }

    void servingIterationExports()
    {
        // tiny served as one static batch of 4 prompts of 64 tokens, 16 output tokens, on tp 2 x pp 2: iteration 0
        // is the 4 prompts, iteration 3 decodes the 4 sequences at 64 + 3 positions each (see above).
        const ConfigResult loaded = loadConfigOrPreset("tiny",
            { "workload=inference", "inference.batch=4", "inference.prompt_tokens=64", "inference.output_tokens=16",
                "parallelism.dp=1", "parallelism.tp=2", "parallelism.pp=2", "parallelism.zero=0",
                "cluster.gpu=h100-sxm" });
        QVERIFY(loaded.config);
        std::string error;
        const std::optional<GpuSpec> gpu = gpuForConfig(*loaded.config, error);
        QVERIFY(gpu);
        ServingIterationPick first;
        QVERIFY2(pickServingIteration(*loaded.config, *gpu, EstimateOptions {}, 0, 1, first, error), error.c_str());
        QCOMPARE(first.iterations, int64_t(16)); // one prefill, 15 decode steps
        QCOMPARE(first.prefillChunks, int64_t(4));
        QCOMPARE(first.prefillTokens, int64_t(4 * 64));
        QVERIFY(first.prefill && !first.decode);
        QCOMPARE(first.prefill->inference.batch, int64_t(4)); // a multiple of pp 2 already
        QCOMPARE(first.prefill->inference.promptTokens, int64_t(64));
        QCOMPARE(first.prefill->inference.phases, InferencePhases::Prefill);

        ServingIterationPick third;
        QVERIFY2(pickServingIteration(*loaded.config, *gpu, EstimateOptions {}, 3, 2, third, error), error.c_str());
        QVERIFY(!third.prefill && third.decode);
        QCOMPARE(third.decodeSequences, int64_t(4));
        QCOMPARE(third.decodeContextTokens, 4.0 * 67);
        // The window of 2 steps ends at the iteration's context: a cache of 67 - 2 positions, then 2 steps.
        QCOMPARE(third.decode->inference.batch, int64_t(4));
        QCOMPARE(third.decode->inference.promptTokens, int64_t(65));
        QCOMPARE(third.decode->inference.decodeSteps, int64_t(2));
        QCOMPARE(third.decode->inference.phases, InferencePhases::Decode);
        QCOMPARE(third.decode->name, loaded.config->name + "-iter3-decode");
        QCOMPARE(
            third.decode->parallelism.tp * third.decode->parallelism.pp * third.decode->parallelism.dp, int64_t(4));

        // Both parts synthesize and export as trace sets of the replica's 4 ranks.
        QTemporaryDir dir;
        for (const Config* c : { &*first.prefill, &*third.decode }) {
            const SynthesisOutcome outcome = synthesize(*c);
            QVERIFY(outcome.result);
            ExportOptions options;
            options.directory = dir.path().toStdString();
            options.name = c->name;
            const ExportSummary sum = exportTrace(*outcome.result, options);
            QCOMPARE(sum.files, int64_t(4));
            for (int r = 0; r < 4; ++r)
                QVERIFY(QFile::exists(dir.filePath(QString::fromStdString(c->name + "." + std::to_string(r) + ".et"))));
            QVERIFY(QFile::exists(dir.filePath(QString::fromStdString(c->name + ".json"))));
        }

        // `longest`: the iteration the simulation timed longest (the first of equals).
        ServingSimulation simulation;
        QVERIFY2(simulateServing(*loaded.config, *gpu, EstimateOptions {}, simulation, error), error.c_str());
        size_t longest = 0;
        for (size_t i = 0; i < simulation.runs[0].samples.size(); ++i)
            if (simulation.runs[0].samples[i].durationS > simulation.runs[0].samples[longest].durationS)
                longest = i;
        ServingIterationPick worst;
        QVERIFY2(pickServingIteration(*loaded.config, *gpu, EstimateOptions {}, kLongestIteration, 1, worst, error),
            error.c_str());
        QCOMPARE(worst.iteration, int64_t(longest));
        QCOMPARE(worst.durationS, simulation.runs[0].samples[longest].durationS);
        int64_t parsed = 0;
        QVERIFY(parseServingIteration("longest", parsed) && parsed == kLongestIteration);
        QVERIFY(parseServingIteration("17", parsed) && parsed == 17);
        QVERIFY(!parseServingIteration("-3", parsed) && !parseServingIteration("7x", parsed)
            && !parseServingIteration("", parsed) && !parseServingIteration("99999999999999999999", parsed));

        // Past the run's end, a bad window, a training config: refused with the reason.
        ServingIterationPick none;
        QVERIFY(!pickServingIteration(*loaded.config, *gpu, EstimateOptions {}, 16, 1, none, error));
        QVERIFY2(error.find("ran 16 iterations") != std::string::npos, error.c_str());
        QVERIFY(!pickServingIteration(*loaded.config, *gpu, EstimateOptions {}, 0, 0, none, error));
        QVERIFY2(error.find("window") != std::string::npos, error.c_str());
        const ConfigResult training = loadConfigOrPreset("tiny", {});
        QVERIFY(!pickServingIteration(*training.config, *gpu, EstimateOptions {}, 0, 1, none, error));
        QVERIFY2(error.find("inference") != std::string::npos, error.c_str());
    }

    void rejectsWhatNeverFits()
    {
        // 10 blocks of 16 = 160 tokens: a request of 100 + 100 can never hold its cache; the next one runs.
        SchedulerSettings s;
        s.kvBlocks = 10;
        const LinearCost cost(1, 0);
        const ReplicaRun run = simulateReplica({ { 0, 0, 100, 100, 0, 0, -1 }, { 1, 0, 50, 10, 0, 0, -1 } }, s, cost);
        QVERIFY(run.outcomes[0].rejected);
        QVERIFY(!run.outcomes[1].rejected);
        QCOMPARE(run.outcomes[1].generatedTokens, int64_t(10));
    }
};

QTEST_GUILESS_MAIN(TestServingSimulation)
#include "tst_servingsimulation.moc"
