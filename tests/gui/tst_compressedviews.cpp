// SPDX-License-Identifier: MIT
// The views that sum a result's programs themselves (the Communication tab's rank matrix and group table) must
// show the full iteration for a compressed result (issue 17 item 12): each is built from the full synthesis and from
// the compressed one of the same plan and compared, cell by cell. Bytes are doubles summed in another order (the
// compressed side weights kept and probe programs): 1e-9 relative; counts are integers: equal.
// The views that draw the programs (Memory, Timeline, Graph) draw the kept micro-batches and say so; the Graph tab
// synthesizes the whole iteration when its window reaches past them.
#include "charts/memorychartdata.h"
#include "config/configloader.h"
#include "graph/graphspecbuilder.h"
#include "graph/graphview.h"
#include "heatmap/commmatrix.h"
#include "models/groupsmodel.h"
#include "synthesis/synthesis.h"
#include "timeline/timelinedata.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>
#include <cmath>

using namespace stagecraft;

namespace {

std::shared_ptr<const SynthesisResult> run(const std::vector<std::string>& sets, bool compress)
{
    ConfigResult loaded = loadConfigOrPreset("llama3-8b", sets);
    if (!loaded.config)
        qFatal("config does not load");
    SynthesisOptions options;
    options.compressMicroBatches = compress;
    SynthesisOutcome out = synthesize(*loaded.config, nullptr, nullptr, options);
    if (!out.result)
        qFatal("synthesis failed");
    return out.result;
}

// pp 2 x tp 2 x dp 2, 1F1B, 40 micro-batches per rank (6 kept): TP collectives, sends and the DP reduction.
const std::vector<std::string> kPlan { "model.layers=4", "parallelism.pp=2", "parallelism.tp=2", "parallelism.dp=2",
    "parallelism.cp=1", "parallelism.ep=1", "parallelism.zero=1", "parallelism.schedule=1f1b",
    "parallelism.virtual_stages=1", "parallelism.sequence_parallel=true", "training.global_batch=80" };
// Its micro-batches per rank: global_batch / (micro_batch * dp) = 80 / (1 * 2); a compressed 1F1B synthesis keeps
// pp + 1 = 3 of them (config/programsize.h).
constexpr int64_t kMicroBatches = 40;
constexpr int64_t kKept = 3;

bool waitSettled(GraphView& view)
{
    return QTest::qWaitFor([&] { return view.isSettled(); }, 60000);
}

/// Program nodes of class 0 in layer `layer` and micro-batch `mb`, counted from the program itself.
int64_t nodesOf(const SynthesisResult& r, int32_t layer, int32_t mb)
{
    int64_t n = 0;
    for (const ProgramNode& node : r.classes[0].nodes)
        n += node.layer == layer && node.microBatch == mb;
    return n;
}

} // namespace

class TestCompressedViews : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void commMatrixMatchesFull()
    {
        const auto full = run(kPlan, false);
        const auto compressed = run(kPlan, true);
        QVERIFY(compressed->compressed());
        const CommMatrix a = buildCommMatrix(*full, CommMatrixOptions {});
        const CommMatrix b = buildCommMatrix(*compressed, CommMatrixOptions {});
        QCOMPARE(b.units, a.units);
        QCOMPARE(b.bytes.size(), a.bytes.size());
        QVERIFY(a.total > 0);
        for (size_t i = 0; i < a.bytes.size(); ++i) {
            QVERIFY2(std::abs(a.bytes[i] - b.bytes[i]) <= 1e-9 * std::max(1.0, std::abs(a.bytes[i])),
                qPrintable(QStringLiteral("cell %1: %2 vs %3")
                               .arg(i)
                               .arg(a.bytes[i], 0, 'g', 17)
                               .arg(b.bytes[i], 0, 'g', 17)));
            for (size_t k = 0; k < a.byKind[i].size(); ++k)
                QVERIFY(std::abs(a.byKind[i][k] - b.byKind[i][k]) <= 1e-9 * std::max(1.0, std::abs(a.byKind[i][k])));
        }
        QVERIFY(std::abs(a.total - b.total) <= 1e-9 * a.total);
    }

    void groupTableMatchesFull()
    {
        GroupsModel full, compressed;
        QAbstractItemModelTester tester(&compressed);
        full.setResult(run(kPlan, false));
        compressed.setResult(run(kPlan, true));
        QCOMPARE(compressed.rowCount(), full.rowCount());
        QVERIFY(full.rowCount() > 0);
        for (int row = 0; row < full.rowCount(); ++row)
            for (int column : { int(GroupsModel::CollectivesColumn), int(GroupsModel::BytesColumn) })
                QCOMPARE(compressed.index(row, column).data(GroupsModel::RawValueRole),
                    full.index(row, column).data(GroupsModel::RawValueRole));
    }

    /// The Memory and Timeline tabs draw the kept micro-batches; their data carries both counts for the caption.
    void chartsKnowTheKeptMicroBatches()
    {
        const auto compressed = run(kPlan, true);
        QCOMPARE(compressed->compression->keptMicroBatches, kKept);
        const MemoryChartData memory = buildMemoryChartData(*compressed, MemoryChartRequest {});
        QCOMPARE(memory.keptMicroBatches, kKept);
        QCOMPARE(memory.microBatches, kMicroBatches);
        const TimelineData timeline = buildTimelineData(*compressed);
        QVERIFY(timeline.ok);
        QCOMPARE(timeline.keptMicroBatches, kKept);
        QCOMPARE(timeline.microBatches, kMicroBatches);
        const auto full = run(kPlan, false);
        QCOMPARE(buildMemoryChartData(*full, MemoryChartRequest {}).keptMicroBatches, int64_t(0));
        QCOMPARE(buildTimelineData(*full).keptMicroBatches, int64_t(0));
    }

    /// A window inside the kept micro-batches draws the compressed result; one past them synthesizes the whole
    /// iteration and draws its nodes; back inside, the compressed result again.
    void graphPastTheKeptMicroBatchesSynthesizesTheIteration()
    {
        const auto compressed = run(kPlan, true);
        const auto full = run(kPlan, false);
        GraphView view;
        view.setResult(compressed);
        QVERIFY(waitSettled(view));
        QCOMPARE(view.drawnResult(), compressed);
        QVERIFY(view.statusText().contains(QStringLiteral("micro-batches 1\u20133 of 40 drawn")));

        GraphWindow w = view.window();
        w.layerFirst = w.layerLast = 0;
        w.microBatchFirst = w.microBatchLast = 20; // past the 3 kept
        w.iterationWork = false; // only the micro-batch's own nodes, no gradient reduction or optimizer
        view.setWindow(w);
        QVERIFY(view.isSynthesizingFull());
        QVERIFY(!view.isSettled());
        QVERIFY(waitSettled(view));
        QVERIFY(view.drawnResult());
        QVERIFY(!view.drawnResult()->compressed());
        QCOMPARE(view.drawnResult()->classes[0].nodes.size(), full->classes[0].nodes.size());
        QCOMPARE(view.shownSpec().window.microBatchLast, 20);
        QVERIFY(nodesOf(*full, 0, 20) > 0);
        QCOMPARE(view.shownSpec().individualCount, nodesOf(*full, 0, 20));
        QVERIFY(view.statusText().contains(QStringLiteral("the whole iteration")));
        // To look at it: STAGECRAFT_COMPRESSED_GRAPH_SCREENSHOT=/path/to.png
        if (const QString path = qEnvironmentVariable("STAGECRAFT_COMPRESSED_GRAPH_SCREENSHOT"); !path.isEmpty()) {
            view.resize(1366, 700);
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            QVERIFY(view.grab().save(path));
        }

        w.microBatchFirst = w.microBatchLast = 1;
        view.setWindow(w);
        QVERIFY(waitSettled(view));
        QCOMPARE(view.drawnResult(), compressed);
        QCOMPARE(view.shownSpec().individualCount, nodesOf(*compressed, 0, 1));
    }

    /// Cancelling the full synthesis brings the window back into the kept micro-batches.
    void graphFullSynthesisCancels()
    {
        const auto compressed = run(kPlan, true);
        GraphView view;
        view.setResult(compressed);
        QVERIFY(waitSettled(view));
        GraphWindow w = view.window();
        w.microBatchFirst = 10;
        w.microBatchLast = 30;
        view.setWindow(w);
        QVERIFY(view.isSynthesizingFull());
        view.cancelFullSynthesis();
        QVERIFY(!view.isSynthesizingFull());
        QCOMPARE(view.window().microBatchLast, int32_t(kKept - 1));
        QCOMPARE(view.window().microBatchFirst, int32_t(kKept - 1));
        QVERIFY(waitSettled(view));
        QCOMPARE(view.drawnResult(), compressed);
    }
};

QTEST_MAIN(TestCompressedViews)
#include "tst_compressedviews.moc"
