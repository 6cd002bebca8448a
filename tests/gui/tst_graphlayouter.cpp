// SPDX-License-Identifier: MIT
// GraphLayouter: real dot layouts of real program windows (tiny preset), hand-made chains, and two layouts at once.
#include "config/configloader.h"
#include "graph/graphlayouter.h"
#include "graph/graphspecbuilder.h"
#include "guihelpers.h"
#include "synthesis/synthesis.h"

#include <QtConcurrent/QtConcurrentRun>
#include <QtTest>

using namespace stagecraft;
using stagecraft::test::synth;

namespace {

const std::vector<std::string> kDp2Tp2Pp2 { "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2" };

GraphWindow window(int32_t layer, int32_t microBatch, bool iterationWork)
{
    GraphWindow w;
    w.layerFirst = w.layerLast = layer;
    w.microBatchFirst = w.microBatchLast = microBatch;
    w.iterationWork = iterationWork;
    return w;
}

GraphSpecNode boxNode(double width, double height)
{
    GraphSpecNode n;
    n.title = QStringLiteral("n");
    n.widthPt = width;
    n.heightPt = height;
    return n;
}

// dot's default ranksep is overridden by GraphLayouter to 0.32 in = 23.04 pt between the facing borders of two ranks.
constexpr double kRankSepPt = 0.32 * 72;

} // namespace

class TestGraphLayouter : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void emptySpecIsAnEmptyLayout()
    {
        const GraphLayout layout = GraphLayouter::layout(GraphSpec {});
        QVERIFY(layout.ok);
        QVERIFY(layout.nodeRects.empty());
        QVERIFY(layout.edges.empty());
    }

    void chainIsRankedTopToBottom()
    {
        // a -> b -> c, plus a schedule edge a -> c that must not add a rank.
        GraphSpec spec;
        spec.nodes = { boxNode(100, 30), boxNode(60, 40), boxNode(80, 20) };
        spec.edges = { { 0, 1, GraphEdgeKind::Data, 1 }, { 1, 2, GraphEdgeKind::Data, 1 },
            { 0, 2, GraphEdgeKind::Ctrl, 1 } };
        const GraphLayout layout = GraphLayouter::layout(spec);
        QVERIFY2(layout.ok, qPrintable(layout.error));
        QCOMPARE(layout.nodeRects.size(), size_t(3));
        QCOMPARE(layout.edges.size(), size_t(3));
        // fixedsize nodes keep the size asked for (dot rounds inches to 1/100 pt at most).
        for (size_t i = 0; i < 3; ++i) {
            QVERIFY(qAbs(layout.nodeRects[i].width() - spec.nodes[i].widthPt) < 0.5);
            QVERIFY(qAbs(layout.nodeRects[i].height() - spec.nodes[i].heightPt) < 0.5);
            QVERIFY(layout.bounds.adjusted(-0.5, -0.5, 0.5, 0.5).contains(layout.nodeRects[i]));
        }
        // Each rank sits at least ranksep below the one above it: centre distance >= h1/2 + h2/2 + ranksep.
        const QRectF a = layout.nodeRects[0], b = layout.nodeRects[1], c = layout.nodeRects[2];
        QVERIFY(b.center().y() - a.center().y() >= a.height() / 2 + b.height() / 2 + kRankSepPt - 0.5);
        QVERIFY(c.center().y() - b.center().y() >= b.height() / 2 + c.height() / 2 + kRankSepPt - 0.5);
        // Three ranks of heights 30, 40, 20 with two gaps: the graph is at least that tall.
        QVERIFY(layout.bounds.height() >= 30 + 40 + 20 + 2 * kRankSepPt - 0.5);
        // Edges start at their tail and end with an arrow at their head.
        for (size_t i = 0; i < spec.edges.size(); ++i) {
            const GraphEdgeRoute& route = layout.edges[i];
            QVERIFY(route.bezier.size() >= 4);
            QCOMPARE((route.bezier.size() - 1) % 3, size_t(0));
            QVERIFY(route.hasArrow);
            const QRectF from = layout.nodeRects[size_t(spec.edges[i].from)];
            const QRectF to = layout.nodeRects[size_t(spec.edges[i].to)];
            QVERIFY(from.adjusted(-2, -2, 2, 2).contains(route.bezier.front()));
            QVERIFY(to.adjusted(-2, -2, 2, 2).contains(route.arrowTip));
        }
    }

    void invalidEdgeFails()
    {
        GraphSpec spec;
        spec.nodes = { boxNode(50, 20) };
        spec.edges = { { 0, 3, GraphEdgeKind::Data, 1 } };
        const GraphLayout layout = GraphLayouter::layout(spec);
        QVERIFY(!layout.ok);
        QVERIFY(layout.error.contains(QLatin1String("does not exist")));
    }

    void realProgramWindow_data()
    {
        QTest::addColumn<int>("classIndex");
        QTest::addColumn<int>("layer");
        QTest::addColumn<bool>("iterationWork");
        QTest::addColumn<int>("minDataEdges"); // between program nodes, so the ranking check is not vacuous
        QTest::newRow("stage 0, layer 0") << 0 << 0 << false << 40;
        QTest::newRow("stage 0, layer 0, with gradient sync") << 0 << 0 << true << 40;
        QTest::newRow("stage 1, layer 1") << 1 << 1 << false << 40;
        // embedding forward and its all-reduce, embedding backward, its gradient all-reduce and optimizer step
        QTest::newRow("stage 0, embedding") << 0 << -1 << true << 3;
    }

    void realProgramWindow()
    {
        QFETCH(int, classIndex);
        QFETCH(int, layer);
        QFETCH(bool, iterationWork);
        QFETCH(int, minDataEdges);
        const auto result = synth("tiny", kDp2Tp2Pp2);
        const GraphSpec spec = GraphSpecBuilder::build(*result, classIndex, window(layer, 0, iterationWork));
        QVERIFY(spec.nodes.size() >= 4);
        QVERIFY(spec.nodes.size() < 120); // a few dozen: tiny has 2 layers, 1 micro-batch per rank

        const GraphLayout layout = GraphLayouter::layout(spec);
        QVERIFY2(layout.ok, qPrintable(layout.error));
        QCOMPARE(layout.nodeRects.size(), spec.nodes.size());
        QCOMPARE(layout.edges.size(), spec.edges.size());
        for (size_t i = 0; i < spec.nodes.size(); ++i) {
            const QRectF r = layout.nodeRects[i];
            QVERIFY(qAbs(r.width() - spec.nodes[i].widthPt) < 0.5);
            QVERIFY(qAbs(r.height() - spec.nodes[i].heightPt) < 0.5);
            QVERIFY(layout.bounds.adjusted(-0.5, -0.5, 0.5, 0.5).contains(r));
        }
        // No two nodes overlap.
        for (size_t i = 0; i < spec.nodes.size(); ++i)
            for (size_t j = i + 1; j < spec.nodes.size(); ++j)
                QVERIFY2(!layout.nodeRects[i].adjusted(0.5, 0.5, -0.5, -0.5).intersects(layout.nodeRects[j]),
                    qPrintable(spec.nodes[i].title + QLatin1String(" / ") + spec.nodes[j].title));
        // Top to bottom: program data dependencies point to earlier nodes, so among program nodes the data edges
        // form a DAG and dot puts every consumer below its producer.
        int checked = 0;
        for (const GraphSpecEdge& e : spec.edges) {
            const GraphSpecNode& from = spec.nodes[size_t(e.from)];
            const GraphSpecNode& to = spec.nodes[size_t(e.to)];
            if (e.kind != GraphEdgeKind::Data || from.programNode < 0 || to.programNode < 0)
                continue;
            QVERIFY(from.programNode < to.programNode);
            const QRectF a = layout.nodeRects[size_t(e.from)];
            const QRectF b = layout.nodeRects[size_t(e.to)];
            QVERIFY2(b.top() >= a.bottom() + kRankSepPt - 0.5,
                qPrintable(QStringLiteral("%1 is not below %2").arg(to.title, from.title)));
            ++checked;
        }
        QVERIFY2(checked >= minDataEdges, qPrintable(QString::number(checked)));
    }

    void longestEdgesLeaveDot()
    {
        // Chain a -> b -> c -> d (levels 0..3) plus a -> c (span 2, 1 virtual node) and a -> d (span 3, 2 virtual).
        GraphSpec spec;
        spec.nodes = { boxNode(40, 20), boxNode(40, 20), boxNode(40, 20), boxNode(40, 20) };
        spec.edges = { { 0, 1, GraphEdgeKind::Data, 1 }, { 1, 2, GraphEdgeKind::Data, 1 },
            { 2, 3, GraphEdgeKind::Data, 1 }, { 0, 2, GraphEdgeKind::Data, 1 }, { 0, 3, GraphEdgeKind::Data, 1 } };
        QCOMPARE(GraphLayouter::directEdges(spec, 3), std::vector<size_t> {});
        QCOMPARE(GraphLayouter::directEdges(spec, 2), std::vector<size_t> { 4 }); // 3 - 2 = 1 <= 2
        QCOMPARE(GraphLayouter::directEdges(spec, 1), std::vector<size_t> { 4 });
        QCOMPARE(GraphLayouter::directEdges(spec, 0), (std::vector<size_t> { 3, 4 }));
    }

    void longEdgesAreDrawnDirect()
    {
        // A chain of 400 nodes and 10 edges from its first node to the last ten: each spans 390..399 levels, 3,900+
        // virtual nodes in all. The longest go direct until at most kVirtualNodeBudget = 3000 remain:
        // removing 398 + 397 + 396 virtual nodes (the three longest) brings 3,935 (= 10 * 398 - 45) down to 2,744.
        constexpr int kChain = 400;
        GraphSpec spec;
        for (int i = 0; i < kChain; ++i)
            spec.nodes.push_back(boxNode(40, 16));
        for (int i = 1; i < kChain; ++i)
            spec.edges.push_back({ i - 1, i, GraphEdgeKind::Data, 1 });
        const size_t firstLong = spec.edges.size();
        for (int k = 0; k < 10; ++k)
            spec.edges.push_back({ 0, kChain - 1 - k, GraphEdgeKind::Data, 1 });
        const std::vector<size_t> direct = GraphLayouter::directEdges(spec);
        QCOMPARE(direct, (std::vector<size_t> { firstLong, firstLong + 1, firstLong + 2 }));

        const GraphLayout layout = GraphLayouter::layout(spec);
        QVERIFY2(layout.ok, qPrintable(layout.error));
        QCOMPARE(layout.edges.size(), spec.edges.size());
        for (size_t i = 0; i < spec.edges.size(); ++i) {
            const bool expectDirect = std::find(direct.begin(), direct.end(), i) != direct.end();
            QCOMPARE(layout.edges[i].direct, expectDirect);
            const QRectF from = layout.nodeRects[size_t(spec.edges[i].from)];
            const QRectF to = layout.nodeRects[size_t(spec.edges[i].to)];
            QVERIFY(from.adjusted(-2, -2, 2, 2).contains(layout.edges[i].bezier.front()));
            QVERIFY(to.adjusted(-2, -2, 2, 2).contains(layout.edges[i].arrowTip));
        }
        // Still ranked top to bottom along the chain.
        for (int i = 1; i < kChain; ++i)
            QVERIFY(layout.nodeRects[size_t(i)].top() > layout.nodeRects[size_t(i - 1)].bottom());
    }

    void twoLayoutsAtOnce()
    {
        const auto result = synth("tiny", kDp2Tp2Pp2);
        const GraphSpec spec0 = GraphSpecBuilder::build(*result, 0, window(0, 0, true));
        const GraphSpec spec1 = GraphSpecBuilder::build(*result, 1, window(1, 0, true));
        const GraphLayout reference0 = GraphLayouter::layout(spec0);
        const GraphLayout reference1 = GraphLayouter::layout(spec1);
        QVERIFY(reference0.ok && reference1.ok);

        const int64_t before = GraphLayouter::layoutCount();
        constexpr int kRounds = 4;
        auto run = [](const GraphSpec& spec) {
            std::vector<GraphLayout> layouts;
            for (int i = 0; i < kRounds; ++i)
                layouts.push_back(GraphLayouter::layout(spec));
            return layouts;
        };
        QThreadPool pool;
        pool.setMaxThreadCount(2);
        QFuture<std::vector<GraphLayout>> a = QtConcurrent::run(&pool, run, spec0);
        QFuture<std::vector<GraphLayout>> b = QtConcurrent::run(&pool, run, spec1);
        const std::vector<GraphLayout> la = a.result();
        const std::vector<GraphLayout> lb = b.result();
        QCOMPARE(GraphLayouter::layoutCount() - before, int64_t(2 * kRounds));
        // dot is deterministic: serialised by the mutex, concurrent layouts equal the sequential ones.
        for (const GraphLayout& l : la) {
            QVERIFY2(l.ok, qPrintable(l.error));
            QCOMPARE(l.nodeRects, reference0.nodeRects);
            QCOMPARE(l.edges.size(), spec0.edges.size());
        }
        for (const GraphLayout& l : lb) {
            QVERIFY2(l.ok, qPrintable(l.error));
            QCOMPARE(l.nodeRects, reference1.nodeRects);
            QCOMPARE(l.edges.size(), spec1.edges.size());
        }
    }
};

QTEST_MAIN(TestGraphLayouter)
#include "tst_graphlayouter.moc"
