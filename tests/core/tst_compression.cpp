// SPDX-License-Identifier: MIT
// Compressed micro-batches (SynthesisOptions::compressMicroBatches, issue 17 item 12): the interactive path builds
// only the micro-batches a 1F1B or interleaved schedule needs to fill, run and drain its pipeline, and extends the
// rest. Every figure it states must be the full synthesis's: each row below synthesizes the plan both ways and
// compares. The reference is the plain synthesize() of the whole iteration, which never runs the compression code.
// Integer sums (FLOPs, nodes, bytes and counts by collective type, memory) must be equal; times from the
// step-time estimate, doubles summed in another order, agree to 1e-9 relative.
#include "config/configloader.h"
#include "config/programsize.h"
#include "estimate/stepestimate.h"
#include "export/traceexporter.h"
#include "model/modelcost.h"
#include "synthesis/synthesis.h"
#include "synthhelpers.h"

#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

using namespace stagecraft;
using namespace stagecraft::test;

namespace {

constexpr double kTimeTolerance = 1e-9; // relative, for the step-time estimate's doubles

Config load(const std::string& preset, const std::vector<std::string>& sets)
{
    ConfigResult loaded = loadConfigOrPreset(preset, sets);
    if (!loaded.config) {
        for (const Diagnostic& d : loaded.diagnostics)
            qWarning("%s", d.toString().c_str());
        qFatal("config %s does not load", preset.c_str());
    }
    return *loaded.config;
}

std::shared_ptr<const SynthesisResult> run(const Config& config, bool compress)
{
    SynthesisOptions options;
    options.compressMicroBatches = compress;
    SynthesisOutcome out = synthesize(config, nullptr, nullptr, options);
    if (!out.result) {
        for (const Diagnostic& d : out.diagnostics)
            qWarning("%s", d.toString().c_str());
        qFatal("synthesis failed (compress %d)", compress ? 1 : 0);
    }
    return out.result;
}

bool closeTo(double a, double b)
{
    return std::abs(a - b) <= kTimeTolerance * std::max({ 1e-30, std::abs(a), std::abs(b) });
}

/// Every per-micro-batch override the plans share: a few layers keep the full syntheses quick.
std::vector<std::string> plan(const std::vector<std::string>& sets)
{
    return std::vector<std::string> { "parallelism.cp=1", "parallelism.ep=1", "parallelism.virtual_stages=1",
        "parallelism.first_stage_layers=0", "parallelism.last_stage_layers=0" }
    + sets;
}

} // namespace

class TestCompression : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void matchesFullSynthesis_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("sets"); // space-separated overrides
        // m = global_batch / (micro_batch * dp) micro-batches per rank; each is more than twice the kept count
        // (pp + 1 for 1F1B, 3 pp for interleaved) plus a period, so each row is compressed.
        QTest::newRow("1f1b pp4 dp2 tp2 zero1")
            << QStringLiteral("llama3-8b")
            << QStringLiteral("model.layers=8 parallelism.pp=4 parallelism.dp=2 parallelism.tp=2 parallelism.zero=1 "
                              "parallelism.sequence_parallel=true parallelism.schedule=1f1b training.global_batch=80");
        QTest::newRow("interleaved pp2 v2 dp2 zero1")
            << QStringLiteral("llama3-8b")
            << QStringLiteral("model.layers=8 parallelism.pp=2 parallelism.dp=2 parallelism.tp=1 parallelism.zero=1 "
                              "parallelism.schedule=interleaved parallelism.virtual_stages=2 training.global_batch=48");
        QTest::newRow("interleaved pp4 v2 tp2 no dp")
            << QStringLiteral("llama3-8b")
            << QStringLiteral("model.layers=8 parallelism.pp=4 parallelism.dp=1 parallelism.tp=2 "
                              "parallelism.sequence_parallel=false parallelism.zero=0 parallelism.schedule=interleaved "
                              "parallelism.virtual_stages=2 training.global_batch=40");
        QTest::newRow("1f1b pp2 dp4 zero3 recompute full")
            << QStringLiteral("llama2-7b")
            << QStringLiteral("model.layers=4 parallelism.pp=2 parallelism.dp=4 parallelism.tp=1 parallelism.zero=3 "
                              "parallelism.schedule=1f1b training.recompute=full training.global_batch=80");
        QTest::newRow("1f1b pp2 tp4 sp selective no dp")
            << QStringLiteral("llama3-8b")
            << QStringLiteral("model.layers=4 parallelism.pp=2 parallelism.dp=1 parallelism.tp=4 "
                              "parallelism.sequence_parallel=true parallelism.zero=0 parallelism.schedule=1f1b "
                              "training.recompute=selective training.global_batch=20");
        QTest::newRow("moe mixtral pp2 dp2 ep2")
            << QStringLiteral("mixtral-8x7b")
            << QStringLiteral("model.layers=4 parallelism.pp=2 parallelism.dp=2 parallelism.ep=2 parallelism.tp=1 "
                              "parallelism.zero=1 parallelism.schedule=1f1b training.global_batch=40");
        QTest::newRow("1f1b pp8 60 micro-batches")
            << QStringLiteral("llama3-8b")
            << QStringLiteral("model.layers=8 parallelism.pp=8 parallelism.dp=1 parallelism.tp=1 parallelism.zero=0 "
                              "parallelism.schedule=1f1b training.global_batch=60");
        QTest::newRow("interleaved pp8 v2 80 micro-batches")
            << QStringLiteral("llama3-8b")
            << QStringLiteral("model.layers=16 parallelism.pp=8 parallelism.dp=1 parallelism.tp=1 parallelism.zero=0 "
                              "parallelism.schedule=interleaved parallelism.virtual_stages=2 training.global_batch=80");
        // Uneven stages: one layer on the first and on the last stage, which also holds the 128,256-word LM head,
        // two on each middle one. The stages' step times differ, so the pipeline's critical path is not the same on
        // every stage: the kept count must still reach the affine regime.
        QTest::newRow("1f1b pp4 uneven stages, heavy head")
            << QStringLiteral("llama3-8b")
            << QStringLiteral("model.layers=6 parallelism.pp=4 parallelism.dp=1 parallelism.tp=1 parallelism.zero=0 "
                              "parallelism.schedule=1f1b parallelism.first_stage_layers=1 "
                              "parallelism.last_stage_layers=1 training.global_batch=40");
        QTest::newRow("1f1b pp16 deepseek-like depth, 64 micro-batches")
            << QStringLiteral("llama3-8b")
            << QStringLiteral("model.layers=16 parallelism.pp=16 parallelism.dp=1 parallelism.tp=1 parallelism.zero=0 "
                              "parallelism.schedule=1f1b training.global_batch=64");
        QTest::newRow("pp1 64 micro-batches")
            << QStringLiteral("llama3-8b")
            << QStringLiteral("model.layers=4 parallelism.pp=1 parallelism.dp=1 parallelism.tp=1 parallelism.zero=0 "
                              "parallelism.schedule=1f1b training.global_batch=64");
        QTest::newRow("pp1 interleaved dp2 cp2")
            << QStringLiteral("llama3-8b")
            << QStringLiteral("model.layers=4 parallelism.pp=1 parallelism.dp=2 parallelism.tp=1 parallelism.zero=1 "
                              "parallelism.schedule=interleaved training.global_batch=40 parallelism.cp=2");
    }

    void matchesFullSynthesis()
    {
        QFETCH(QString, preset);
        QFETCH(QString, sets);
        const Config config = load(preset.toStdString(), plan(toOverrides(sets.split(QLatin1Char(' ')))));
        const int64_t m = microBatchesPerIteration(config);
        int64_t period = 0;
        const int64_t kept = compressedMicroBatches(config, &period);
        QVERIFY2(kept > 0, "the row must be a compressed plan");
        QCOMPARE(period, config.parallelism.schedule == Schedule::Interleaved ? config.parallelism.pp : int64_t(1));
        QCOMPARE((m - kept) % period, int64_t(0));

        const auto full = run(config, false);
        const auto compressed = run(config, true);
        QVERIFY(!full->compressed());
        QVERIFY(compressed->compressed());
        QCOMPARE(compressed->compression->microBatches, m);
        QCOMPARE(compressed->compression->keptMicroBatches, kept);
        QCOMPARE(compressed->config.training.globalBatch, config.training.globalBatch);
        QCOMPARE(compressed->cost.microBatches, full->cost.microBatches);
        QCOMPARE(compressed->cost.flopsPerIteration, full->cost.flopsPerIteration);
        // The programs really are smaller: no micro-batch id beyond the kept ones.
        for (const ClassProgram& p : compressed->classes)
            for (const ProgramNode& n : p.nodes)
                QVERIFY(n.microBatch < kept);

        QCOMPARE(compressed->summaries.size(), full->summaries.size());
        for (size_t c = 0; c < full->summaries.size(); ++c) {
            const ClassSummary& a = full->summaries[c];
            const ClassSummary& b = compressed->summaries[c];
            QCOMPARE(b.ranks, a.ranks);
            QCOMPARE(b.flops, a.flops);
            QCOMPARE(b.matmulFlops, a.matmulFlops);
            QCOMPARE(b.replicatedFlops, a.replicatedFlops);
            QCOMPARE(b.replicatedMatmulFlops, a.replicatedMatmulFlops);
            QCOMPARE(b.nodes, a.nodes);
            QCOMPARE(b.nodes, int64_t(full->classes[c].nodes.size()));
            QVERIFY(int64_t(compressed->classes[c].nodes.size()) < a.nodes);
            for (size_t t = 0; t < a.collectiveBytes.size(); ++t) {
                QCOMPARE(b.collectiveBytes[t], a.collectiveBytes[t]);
                QCOMPARE(b.collectiveCount[t], a.collectiveCount[t]);
            }
            QCOMPARE(b.sendBytes, a.sendBytes);
            QCOMPARE(b.recvBytes, a.recvBytes);
            QCOMPARE(b.sendCount, a.sendCount);
            QCOMPARE(b.recvCount, a.recvCount);
            // 1F1B and interleaved bound the micro-batches in flight: the peak of the kept programs is the
            // full iteration's, byte for byte, by category.
            QCOMPARE(b.weightBytes, a.weightBytes);
            QCOMPARE(b.gradientBytes, a.gradientBytes);
            QCOMPARE(b.optimizerBytes, a.optimizerBytes);
            QCOMPARE(b.activationPeakBytes, a.activationPeakBytes);
            QCOMPARE(b.peakBytes, a.peakBytes);
            QCOMPARE(compressed->memory[c].atPeak, full->memory[c].atPeak);
            QCOMPARE(compressed->memory[c].peakBytes, full->memory[c].peakBytes);
        }

        std::string error;
        const std::optional<GpuSpec> gpu = gpuForConfig(config, error);
        QVERIFY2(gpu, error.c_str());
        StepEstimate a, b;
        QVERIFY2(estimateStep(*full, *gpu, EstimateOptions {}, a, error), error.c_str());
        EstimateSchedule schedule;
        QVERIFY2(estimateStep(*compressed, *gpu, EstimateOptions {}, b, error, &schedule), error.c_str());
        // The schedule the views draw is the kept programs'.
        QCOMPARE(schedule.classes.size(), compressed->classes.size());
        for (size_t c = 0; c < schedule.classes.size(); ++c)
            QCOMPARE(schedule.classes[c].size(), compressed->classes[c].nodes.size());
        auto compareTime = [](double full, double compressed, const char* what, size_t c) {
            if (!closeTo(full, compressed))
                QFAIL(qPrintable(QStringLiteral("%1 of class %2: full %3, compressed %4")
                                     .arg(QString::fromLatin1(what))
                                     .arg(c)
                                     .arg(full, 0, 'g', 17)
                                     .arg(compressed, 0, 'g', 17)));
        };
        compareTime(a.iterationTimeS, b.iterationTimeS, "iteration time", 0);
        QVERIFY(!QTest::currentTestFailed());
        compareTime(a.pipelineTimeS, b.pipelineTimeS, "pipeline time", 0);
        compareTime(a.mfu, b.mfu, "MFU", 0);
        compareTime(a.hfu, b.hfu, "HFU", 0);
        compareTime(a.tokensPerS, b.tokensPerS, "tokens/s", 0);
        QCOMPARE(b.modelFlops, a.modelFlops);
        QCOMPARE(b.classes.size(), a.classes.size());
        for (size_t c = 0; c < a.classes.size(); ++c) {
            compareTime(a.classes[c].stepTimeS, b.classes[c].stepTimeS, "step time", c);
            compareTime(a.classes[c].computeTimeS, b.classes[c].computeTimeS, "compute time", c);
            compareTime(a.classes[c].communicationTimeS, b.classes[c].communicationTimeS, "communication time", c);
            compareTime(
                a.classes[c].exposedCommunicationS, b.classes[c].exposedCommunicationS, "exposed communication", c);
            compareTime(a.classes[c].flops, b.classes[c].flops, "FLOPs", c);
            // A share: compared absolutely.
            QVERIFY2(std::abs(a.classes[c].bubbleFraction - b.classes[c].bubbleFraction) <= kTimeTolerance,
                qPrintable(QStringLiteral("bubble of class %1: %2 vs %3")
                               .arg(c)
                               .arg(a.classes[c].bubbleFraction)
                               .arg(b.classes[c].bubbleFraction)));
        }
    }

    /// Why the kept programs' memory is the iteration's: 1F1B holds at most pp - stage micro-batches in flight and
    /// interleaved a bounded number of passes, so past the kept count the peak does not grow. Shown on full
    /// syntheses alone (no compression code): the peak per stage at m = kept equals that at m = kept + 5 periods.
    void peakMemoryIndependentOfMicroBatches_data()
    {
        QTest::addColumn<QString>("sets");
        QTest::newRow("1f1b pp4 tp2") << QStringLiteral(
            "model.layers=8 parallelism.pp=4 parallelism.tp=2 parallelism.dp=1 parallelism.schedule=1f1b");
        QTest::newRow("interleaved pp2 v2 zero1 dp2")
            << QStringLiteral("model.layers=8 parallelism.pp=2 parallelism.dp=2 parallelism.tp=1 parallelism.zero=1 "
                              "parallelism.schedule=interleaved parallelism.virtual_stages=2");
    }

    void peakMemoryIndependentOfMicroBatches()
    {
        QFETCH(QString, sets);
        std::vector<std::string> base = plan(toOverrides(sets.split(QLatin1Char(' '))));
        const Config probe = load("llama3-8b", base);
        // kept for a plan with many micro-batches (the count does not depend on m once it compresses).
        Config many = probe;
        many.training.globalBatch = 1000 * probe.training.microBatch * probe.parallelism.dp;
        int64_t period = 0;
        const int64_t kept = compressedMicroBatches(many, &period);
        QVERIFY(kept > 0);
        Config atKept = probe, beyond = probe;
        atKept.training.globalBatch = kept * probe.training.microBatch * probe.parallelism.dp;
        beyond.training.globalBatch = (kept + 5 * period) * probe.training.microBatch * probe.parallelism.dp;
        const auto a = run(atKept, false);
        const auto b = run(beyond, false);
        QCOMPARE(a->summaries.size(), b->summaries.size());
        for (size_t c = 0; c < a->summaries.size(); ++c) {
            QCOMPARE(b->summaries[c].peakBytes, a->summaries[c].peakBytes);
            QCOMPARE(b->summaries[c].activationPeakBytes, a->summaries[c].activationPeakBytes);
            QVERIFY(b->summaries[c].flops > a->summaries[c].flops); // the plans do differ
        }
    }

    /// The views must not show a compressed schedule silently: the result carries a note naming the counts.
    void notesTheCompression()
    {
        const Config config = load("llama3-8b",
            plan({ "model.layers=2", "parallelism.pp=1", "parallelism.dp=1", "parallelism.tp=1",
                "parallelism.schedule=1f1b", "training.global_batch=40" }));
        const auto compressed = run(config, true);
        QVERIFY(compressed->compressed());
        bool noted = false;
        for (const Diagnostic& d : compressed->warnings)
            noted = noted
                || (d.severity == Severity::Note && d.message.find("micro-batches 1-2 of 40") != std::string::npos
                    && d.message.find("3-40") != std::string::npos);
        QVERIFY(noted);
    }

    /// GPipe keeps every micro-batch's activations until its backward, so its peak grows with m: never compressed.
    /// Nor is a plan whose micro-batches are few.
    void fullWhenCompressionWouldNotBeExact()
    {
        const Config gpipe = load("llama3-8b",
            plan({ "model.layers=2", "parallelism.pp=2", "parallelism.dp=1", "parallelism.tp=1",
                "parallelism.schedule=gpipe", "training.global_batch=40" }));
        QCOMPARE(compressedMicroBatches(gpipe), int64_t(0));
        QVERIFY(!run(gpipe, true)->compressed());
        const Config few = load("llama3-8b",
            plan({ "model.layers=2", "parallelism.pp=2", "parallelism.dp=1", "parallelism.tp=1",
                "parallelism.schedule=1f1b", "training.global_batch=7" }));
        // kept = pp + 1 = 3; 7 <= 2 * 3 + 1.
        QCOMPARE(compressedMicroBatches(few), int64_t(0));
        QVERIFY(!run(few, true)->compressed());
    }

    /// The node limit is about what is built: a compressed plan of 20,000 micro-batches is accepted, its full
    /// synthesis (what export needs) still refused.
    void nodeLimitCountsTheBuiltNodes()
    {
        const std::vector<std::string> sets = plan({ "parallelism.pp=1", "parallelism.dp=1", "parallelism.tp=1",
            "parallelism.schedule=1f1b", "training.global_batch=20000" });
        // By default validation counts every node: the loader refuses the plan.
        QVERIFY(!loadConfigOrPreset("llama3-8b", sets).config);
        // The GUI's validation counts what a compressed synthesis builds: 2 + 3 micro-batches of 32 layers.
        setValidateCompressedProgramSize(true);
        ConfigResult loaded = loadConfigOrPreset("llama3-8b", sets);
        setValidateCompressedProgramSize(false);
        QVERIFY(loaded.config);
        Config config = *loaded.config;
        QCOMPARE(config.maxProgramNodes, kDefaultMaxProgramNodes);
        QCOMPARE(builtProgramNodes(config, false), estimatedProgramNodes(config));
        QVERIFY(builtProgramNodes(config, true) < kDefaultMaxProgramNodes);
        QVERIFY(estimatedProgramNodes(config) > kDefaultMaxProgramNodes);
        SynthesisOptions options;
        options.compressMicroBatches = true;
        const SynthesisOutcome compressed = synthesize(config, nullptr, nullptr, options);
        QVERIFY(compressed.result);
        QVERIFY(compressed.result->compressed());
        // One rank computes the whole model here: its FLOPs are the model's per iteration, 20,000 micro-batches.
        const double flops = static_cast<double>(compressed.result->summaries[0].flops);
        QVERIFY2(std::abs(flops - compressed.result->cost.flopsPerIteration) <= 1e-12 * flops,
            qPrintable(QStringLiteral("%1 vs %2")
                           .arg(flops, 0, 'g', 17)
                           .arg(compressed.result->cost.flopsPerIteration, 0, 'g', 17)));
        // Every node (export, synth) stays refused, also while validation counts the compressed nodes.
        for (bool mode : { false, true }) {
            setValidateCompressedProgramSize(mode);
            const SynthesisOutcome full = synthesize(config);
            setValidateCompressedProgramSize(false);
            QVERIFY(!full.result);
            bool refused = false;
            for (const Diagnostic& d : full.diagnostics)
                refused = refused || d.message.find("program nodes") != std::string::npos;
            QVERIFY(refused);
        }
        // So is an export of the compressed result, which needs every node.
        QTemporaryDir dir;
        ExportOptions exportOptions;
        exportOptions.name = "w";
        exportOptions.directory = dir.path().toStdString();
        QVERIFY_THROWS_EXCEPTION(ExportError, exportTrace(*compressed.result, exportOptions));
        // A compressed plan too large in its layers alone is still refused.
        config.maxProgramNodes = 1000;
        const SynthesisOutcome small = synthesize(config, nullptr, nullptr, options);
        QVERIFY(!small.result);
    }

    /// Export needs every node: a compressed result exports exactly what the full synthesis exports.
    void exportSynthesizesInFull()
    {
        const Config config = load("tiny",
            plan({ "parallelism.pp=2", "parallelism.dp=1", "parallelism.tp=1", "parallelism.schedule=1f1b",
                "training.global_batch=20", "training.micro_batch=1" }));
        const auto compressed = run(config, true);
        QVERIFY(compressed->compressed());
        const auto full = run(config, false);
        QTemporaryDir a, b;
        ExportOptions options;
        options.name = "w";
        options.directory = a.path().toStdString();
        const ExportSummary fromCompressed = exportTrace(*compressed, options);
        options.directory = b.path().toStdString();
        const ExportSummary fromFull = exportTrace(*full, options);
        QCOMPARE(fromCompressed.files, fromFull.files);
        QCOMPARE(fromCompressed.nodes, fromFull.nodes);
        for (int64_t r = 0; r < fromFull.files; ++r) {
            const std::string file = "w." + std::to_string(r) + ".et";
            QVERIFY(readFile(a.path().toStdString() + "/" + file) == readFile(b.path().toStdString() + "/" + file));
        }
    }
};

QTEST_GUILESS_MAIN(TestCompression)
#include "tst_compression.moc"
