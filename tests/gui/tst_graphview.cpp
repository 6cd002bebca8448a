// SPDX-License-Identifier: MIT
// GraphSpecBuilder and GraphView over real synthesis results: window contents counted from the program itself, the
// node limit on llama3-70b, details of a clicked collective and send, window changes, SVG/PNG export.
#include "config/configloader.h"
#include "graph/graphcanvas.h"
#include "graph/graphedgeitem.h"
#include "graph/graphnodeitem.h"
#include "graph/graphspecbuilder.h"
#include "graph/graphview.h"
#include "guihelpers.h"
#include "synthesis/synthesis.h"

#include <QGraphicsScene>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>
#include <map>
#include <set>
#include <tuple>

using namespace stagecraft;
using stagecraft::test::synth;

namespace {

// tiny (resources/presets/tiny.yaml): 2 layers, global_batch 4, micro_batch 2, rank_order [tp, cp, ep, dp, pp].
// With dp=2 tp=2 pp=2: 8 ranks, rank = tp + 2*dp + 4*pp; one micro-batch per rank (4 / (2 * 2)).
const std::vector<std::string> kDp2Tp2Pp2 { "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2" };

GraphWindow window(int32_t layerFirst, int32_t layerLast, int32_t mbFirst, int32_t mbLast, bool iterationWork)
{
    GraphWindow w;
    w.layerFirst = layerFirst;
    w.layerLast = layerLast;
    w.microBatchFirst = mbFirst;
    w.microBatchLast = mbLast;
    w.iterationWork = iterationWork;
    return w;
}

bool waitShown(GraphView& view)
{
    QSignalSpy spy(&view, &GraphView::graphShown);
    return spy.wait(60000);
}

QList<GraphNodeItem*> nodeItems(const QGraphicsScene* scene)
{
    QList<GraphNodeItem*> items;
    for (QGraphicsItem* item : scene->items())
        if (item->type() == GraphNodeItem::Type)
            items << static_cast<GraphNodeItem*>(item);
    return items;
}

int edgeItemCount(const QGraphicsScene* scene)
{
    int count = 0;
    for (QGraphicsItem* item : scene->items())
        count += item->type() == GraphEdgeItem::Type;
    return count;
}

// The summary a program node outside the window falls into, computed independently of the builder:
// (layer before / inside / after the window, micro-batch before / each inside / after / per-iteration, pass).
std::tuple<int, int, int> summaryKey(const ProgramNode& n, const GraphWindow& w)
{
    const int layerSegment = n.layer < w.layerFirst ? 0 : n.layer > w.layerLast ? 2 : 1;
    const int slot = n.microBatch < 0      ? -2
        : n.microBatch < w.microBatchFirst ? -1
        : n.microBatch > w.microBatchLast  ? 1'000'000
                                           : n.microBatch;
    return { layerSegment, slot, int(n.pass) };
}

bool inWindow(const ProgramNode& n, const GraphWindow& w)
{
    if (n.layer < w.layerFirst || n.layer > w.layerLast)
        return false;
    if (n.microBatch < 0)
        return w.iterationWork;
    return n.microBatch >= w.microBatchFirst && n.microBatch <= w.microBatchLast;
}

} // namespace

class TestGraphView : public QObject
{
    Q_OBJECT

private:
    std::shared_ptr<const SynthesisResult> m_tiny;
    std::shared_ptr<const SynthesisResult> m_llama70b;

private Q_SLOTS:
    void initTestCase()
    {
        m_tiny = synth("tiny", kDp2Tp2Pp2);
        QCOMPARE(m_tiny->worldSize(), int64_t(8));
        QCOMPARE(m_tiny->classes.size(), size_t(2));
    }

    void windowHoldsExactlyItsNodes_data()
    {
        QTest::addColumn<int>("classIndex");
        QTest::addColumn<int>("layerFirst");
        QTest::addColumn<int>("layerLast");
        QTest::addColumn<bool>("iterationWork");
        QTest::newRow("stage 0, L0, mb0") << 0 << 0 << 0 << false;
        QTest::newRow("stage 0, L0, mb0 + gradient sync") << 0 << 0 << 0 << true;
        QTest::newRow("stage 0, emb-L0, mb0") << 0 << -1 << 0 << false;
        QTest::newRow("stage 1, L1, mb0") << 1 << 1 << 1 << false;
        QTest::newRow("stage 1, head, mb0 + gradient sync") << 1 << 2 << 2 << true;
    }

    void windowHoldsExactlyItsNodes()
    {
        QFETCH(int, classIndex);
        QFETCH(int, layerFirst);
        QFETCH(int, layerLast);
        QFETCH(bool, iterationWork);
        const GraphWindow w = window(layerFirst, layerLast, 0, 0, iterationWork);
        const ClassProgram& program = m_tiny->classes[size_t(classIndex)];
        const GraphSpec spec = GraphSpecBuilder::build(*m_tiny, classIndex, w);

        // Count from the program: nodes inside the window, and the summary groups the others fall into.
        std::set<int32_t> expectedInside;
        std::map<std::tuple<int, int, int>, int64_t> expectedSummaries;
        for (size_t i = 0; i < program.nodes.size(); ++i) {
            if (inWindow(program.nodes[i], w))
                expectedInside.insert(int32_t(i));
            else
                ++expectedSummaries[summaryKey(program.nodes[i], w)];
        }
        QVERIFY(!expectedInside.empty());
        QVERIFY(!expectedSummaries.empty());

        QCOMPARE(spec.window, w);
        QVERIFY(!spec.shrunk);
        QVERIFY(!spec.truncated);
        QCOMPARE(spec.programNodeCount, int64_t(program.nodes.size()));
        QCOMPARE(spec.individualCount, int64_t(expectedInside.size()));
        std::set<int32_t> shown;
        std::multiset<int64_t> summarySizes;
        for (const GraphSpecNode& node : spec.nodes) {
            if (node.kind == GraphNodeKind::Summary) {
                QCOMPARE(node.programNode, -1);
                summarySizes.insert(spec.summaries[size_t(node.summary)].nodeCount);
            } else {
                shown.insert(node.programNode);
                // The node's kind is the program node's kind.
                QCOMPARE(int(node.kind), int(program.nodes[size_t(node.programNode)].kind));
            }
        }
        QCOMPARE(shown, expectedInside);
        QCOMPARE(spec.summaries.size(), expectedSummaries.size());
        QCOMPARE(spec.nodes.size(), expectedInside.size() + expectedSummaries.size());
        std::multiset<int64_t> expectedSizes;
        for (const auto& [key, count] : expectedSummaries)
            expectedSizes.insert(count);
        QCOMPARE(summarySizes, expectedSizes);

        // Every program dependency between different spec nodes is an edge, counted once per program edge; a
        // schedule edge is dropped only where a data edge joins the same nodes.
        std::vector<int32_t> specOf(program.nodes.size(), -1);
        std::map<std::tuple<int, int, int>, int32_t> summaryNode;
        for (size_t i = 0; i < spec.nodes.size(); ++i)
            if (spec.nodes[i].programNode >= 0)
                specOf[size_t(spec.nodes[i].programNode)] = int32_t(i);
        for (size_t i = 0; i < spec.nodes.size(); ++i) {
            if (spec.nodes[i].kind != GraphNodeKind::Summary)
                continue;
            // Identify the summary by one of its members: the first program node outside the window with its key.
            const GraphSummary& s = spec.summaries[size_t(spec.nodes[i].summary)];
            for (size_t p = 0; p < program.nodes.size(); ++p) {
                const ProgramNode& n = program.nodes[p];
                if (!inWindow(n, w) && specOf[p] < 0 && n.pass == s.pass && n.layer >= s.layerFirst
                    && n.layer <= s.layerLast && n.microBatch >= s.microBatchFirst && n.microBatch <= s.microBatchLast)
                    summaryNode.emplace(summaryKey(n, w), int32_t(i));
            }
        }
        for (size_t p = 0; p < program.nodes.size(); ++p)
            if (specOf[p] < 0)
                specOf[p] = summaryNode.at(summaryKey(program.nodes[p], w));
        std::map<std::tuple<int32_t, int32_t, int>, int64_t> expectedEdges;
        for (size_t p = 0; p < program.nodes.size(); ++p) {
            for (NodeId d : program.nodes[p].dataDeps)
                if (specOf[d.value] != specOf[p])
                    ++expectedEdges[{ specOf[d.value], specOf[p], 0 }];
            for (NodeId d : program.nodes[p].ctrlDeps)
                if (specOf[d.value] != specOf[p])
                    ++expectedEdges[{ specOf[d.value], specOf[p], 1 }];
        }
        std::erase_if(expectedEdges, [&](const auto& entry) {
            const auto& [from, to, kind] = entry.first;
            return kind == 1 && expectedEdges.count({ from, to, 0 }) > 0;
        });
        std::map<std::tuple<int32_t, int32_t, int>, int64_t> actualEdges;
        for (const GraphSpecEdge& e : spec.edges)
            actualEdges[{ e.from, e.to, int(e.kind) }] += e.count;
        QCOMPARE(actualEdges.size(), spec.edges.size()); // no duplicates
        QVERIFY(actualEdges == expectedEdges);
    }

    void defaultWindowIsFirstComputedLayer()
    {
        // Stage 0 computes the embedding (-1) and layer 0; stage 1 receives layer 0's output and computes layer 1
        // and the head (layer 2 = model layers).
        QCOMPARE(GraphSpecBuilder::defaultWindow(m_tiny->classes[0]).layerFirst, 0);
        QCOMPARE(GraphSpecBuilder::defaultWindow(m_tiny->classes[1]).layerFirst, 1);
        QCOMPARE(GraphSpecBuilder::layerRange(m_tiny->classes[0]), std::make_pair(-1, 0));
        QCOMPARE(GraphSpecBuilder::layerRange(m_tiny->classes[1]), std::make_pair(0, 2));
        // global_batch 4 / (micro_batch 2 * dp 2) = 1 micro-batch per rank.
        QCOMPARE(GraphSpecBuilder::microBatchCount(m_tiny->classes[0]), 1);
        QCOMPARE(GraphSpecBuilder::layerName(-1, 2), QStringLiteral("emb"));
        QCOMPARE(GraphSpecBuilder::layerName(2, 2), QStringLiteral("head"));
        QCOMPARE(GraphSpecBuilder::layerRangeName(0, 1, 2), QStringLiteral("L0–L1"));
    }

    void nodeLimitHoldsForLlama70b_data()
    {
        QTest::addColumn<int>("maxNodes");
        QTest::addColumn<int>("layerFirst");
        QTest::addColumn<bool>("truncated");
        QTest::newRow("default 3000, everything") << GraphSpecOptions::kDefaultMaxNodes << -1 << false;
        QTest::newRow("1000, everything") << 1000 << -1 << false;
        QTest::newRow("64, from emb") << 64 << -1 << false;
        // One decoder layer of one micro-batch alone has more than 64 - 9 * (1 + 3) = 28 nodes.
        QTest::newRow("64, from L0: one layer alone is too big") << 64 << 0 << true;
    }

    void nodeLimitHoldsForLlama70b()
    {
        QFETCH(int, maxNodes);
        QFETCH(int, layerFirst);
        QFETCH(bool, truncated);
        if (!m_llama70b)
            m_llama70b = synth("llama3-70b",
                QStringList { QStringLiteral("parallelism.dp=1"), QStringLiteral("parallelism.tp=1"),
                    QStringLiteral("parallelism.pp=1"), QStringLiteral("parallelism.cp=1"),
                    QStringLiteral("parallelism.zero=0"), QStringLiteral("parallelism.sequence_parallel=false"),
                    QStringLiteral("parallelism.schedule=1f1b"), QStringLiteral("parallelism.virtual_stages=1"),
                    QStringLiteral("training.main_grad_dtype=fp32"), QStringLiteral("training.grad_reduce_dtype=fp32"),
                    QStringLiteral("training.global_batch=256") });
        const ClassProgram& program = m_llama70b->classes[0];
        // llama3-70b: 80 layers, pp 1, global_batch 256 / micro_batch 1 = 256 micro-batches on the single rank.
        QCOMPARE(m_llama70b->classes.size(), size_t(1));
        QCOMPARE(GraphSpecBuilder::layerRange(program), std::make_pair(-1, 80));
        QCOMPARE(GraphSpecBuilder::microBatchCount(program), 256);

        GraphSpecOptions options;
        options.maxNodes = maxNodes;
        const GraphWindow asked = window(layerFirst, 80, 0, 255, true);
        const GraphSpec spec = GraphSpecBuilder::build(*m_llama70b, 0, asked, options);
        QVERIFY2(spec.nodes.size() <= size_t(maxNodes), qPrintable(QString::number(spec.nodes.size())));
        QCOMPARE(spec.truncated, truncated);
        QVERIFY(spec.shrunk);
        QVERIFY(!spec.note.isEmpty());
        // The shown window lies inside the asked one and starts where it starts.
        const GraphWindow& w = spec.window;
        QCOMPARE(w.layerFirst, layerFirst);
        QCOMPARE(w.microBatchFirst, 0);
        QVERIFY(w.layerLast <= 80);
        QVERIFY(w.microBatchLast <= 255);
        // Nothing is lost: shown nodes plus summarised nodes are the whole program.
        int64_t summarised = 0;
        for (const GraphSummary& s : spec.summaries)
            summarised += s.nodeCount;
        QCOMPARE(spec.individualCount + summarised, int64_t(program.nodes.size()));
        if (truncated) {
            QCOMPARE(w.layerLast, w.layerFirst);
            QCOMPARE(w.microBatchLast, w.microBatchFirst);
            return;
        }
        // Shrunk no further than needed: one more layer would overflow the limit, counting the documented bound of
        // 9 * (window micro-batches + 3) summaries.
        QCOMPARE(w.microBatchLast, 0); // micro-batches go first
        QVERIFY(w.layerLast < 80);
        int64_t inside = 0;
        int64_t nextLayer = 0;
        for (const ProgramNode& n : program.nodes) {
            inside += inWindow(n, w);
            nextLayer += n.layer == w.layerLast + 1 && n.microBatch <= 0;
        }
        QCOMPARE(spec.individualCount, inside);
        const int64_t summaryBound = 9 * (w.microBatchLast - w.microBatchFirst + 1 + 3);
        QVERIFY(inside + summaryBound <= maxNodes);
        QVERIFY(inside + nextLayer + summaryBound > maxNodes);
    }

    void viewShowsDefaultWindow()
    {
        GraphView view;
        view.resize(1400, 900);
        QVERIFY(!view.isLayingOut());
        view.setResult(m_tiny);
        QVERIFY(view.isLayingOut());
        QVERIFY(waitShown(view));
        QVERIFY(!view.isLayingOut());
        QCOMPARE(view.classIndex(), 0);
        QCOMPARE(view.rank(), RankId { 0 });
        const GraphWindow w = view.window();
        QCOMPARE(w, window(0, 0, 0, 0, true));

        const ClassProgram& program = m_tiny->classes[0];
        int64_t expected = 0;
        for (const ProgramNode& n : program.nodes)
            expected += inWindow(n, w);
        const GraphSpec& spec = view.shownSpec();
        QCOMPARE(spec.individualCount, expected);
        // One item per spec node and edge, each node at its laid-out place.
        const QList<GraphNodeItem*> items = nodeItems(view.scene());
        QCOMPARE(items.size(), qsizetype(spec.nodes.size()));
        QCOMPARE(edgeItemCount(view.scene()), int(spec.edges.size()));
        for (const GraphNodeItem* item : items)
            QCOMPARE(
                item->boundingRect().adjusted(3, 3, -3, -3), view.shownLayout().nodeRects[size_t(item->specIndex())]);
        QVERIFY(view.statusText().contains(QString::number(expected)));
    }

    void clickedNodesShowGroupsAndPeers()
    {
        GraphView view;
        view.resize(1400, 900);
        view.setResult(m_tiny);
        QVERIFY(waitShown(view));
        // Rank 2 = (tp 0, dp 1, pp 0): stage 0, the same program, no relayout.
        view.setRank(RankId { 2 });
        QCOMPARE(view.classIndex(), 0);
        QVERIFY(!view.isLayingOut());

        const ClassProgram& program = view.result()->classes[0];
        GraphNodeItem* tpCollective = nullptr;
        GraphNodeItem* dpCollective = nullptr;
        GraphNodeItem* send = nullptr;
        for (GraphNodeItem* item : nodeItems(view.scene())) {
            if (item->node().programNode < 0)
                continue;
            const ProgramNode& n = program.nodes[size_t(item->node().programNode)];
            if (n.kind == NodeKind::Collective && n.mask == axisBit(Axis::Tp))
                tpCollective = item;
            if (n.kind == NodeKind::Collective && (n.mask & kDpMask) && !(n.mask & axisBit(Axis::Tp)))
                dpCollective = item;
            if (n.kind == NodeKind::Send)
                send = item;
        }
        QVERIFY(tpCollective && dpCollective && send);

        QVERIFY(view.detailsText().contains(QLatin1String("Click a node")));
        tpCollective->setSelected(true);
        // tp is the fastest axis: rank 2's tp group is {2, 3}.
        QVERIFY2(view.detailsText().contains(QLatin1String("ranks 2, 3")), qPrintable(view.detailsText()));
        QVERIFY(view.detailsText().contains(QLatin1String("all_reduce")));

        view.scene()->clearSelection();
        dpCollective->setSelected(true);
        // dp stride = tp * cp * ep = 2: rank 2's data-parallel group is {0, 2}.
        QVERIFY2(view.detailsText().contains(QLatin1String("ranks 0, 2")), qPrintable(view.detailsText()));

        view.scene()->clearSelection();
        send->setSelected(true);
        // pp stride = tp * cp * dp = 4: rank 2's peer on stage 1 is rank 6.
        QVERIFY2(view.detailsText().contains(QLatin1String("rank 6 (stage 1)")), qPrintable(view.detailsText()));

        // Another rank of the same class: same drawing, other groups.
        view.scene()->clearSelection();
        tpCollective->setSelected(true);
        view.setRank(RankId { 1 });
        QVERIFY2(view.detailsText().contains(QLatin1String("ranks 0, 1")), qPrintable(view.detailsText()));
    }

    void rankOfAnotherStageSwitchesClass()
    {
        GraphView view;
        view.setResult(m_tiny);
        QVERIFY(waitShown(view));
        // Rank 5 = (tp 1, dp 0, pp 1): stage 1.
        view.setRank(RankId { 5 });
        QCOMPARE(view.classIndex(), 1);
        QVERIFY(view.isLayingOut());
        QVERIFY(waitShown(view));
        QCOMPARE(view.shownSpec().classIndex, 1);
        QCOMPARE(view.window().layerFirst, 1);
        view.setClassIndex(0);
        QCOMPARE(view.rank(), RankId { 0 });
    }

    void windowChangeKeepsOldGraphUntilNewLayout()
    {
        GraphView view;
        view.setResult(m_tiny);
        QVERIFY(waitShown(view));
        const qsizetype before = nodeItems(view.scene()).size();
        view.setWindow(window(-1, 0, 0, 0, true));
        QVERIFY(view.isLayingOut());
        QCOMPARE(nodeItems(view.scene()).size(), before); // still the old graph
        QVERIFY(waitShown(view));
        int64_t expected = 0;
        for (const ProgramNode& n : m_tiny->classes[0].nodes)
            expected += n.layer >= -1 && n.layer <= 0; // the whole stage
        QCOMPARE(view.shownSpec().individualCount, expected);
        QCOMPARE(view.shownSpec().summaries.size(), size_t(0));
        QCOMPARE(nodeItems(view.scene()).size(), qsizetype(expected));
    }

    void doubleClickOnSummaryOpensItsRange()
    {
        GraphView view;
        view.setResult(m_tiny);
        QVERIFY(waitShown(view));
        int summary = -1;
        for (size_t i = 0; i < view.shownSpec().nodes.size(); ++i)
            if (view.shownSpec().nodes[i].kind == GraphNodeKind::Summary
                && view.shownSpec().summaries[size_t(view.shownSpec().nodes[i].summary)].layerFirst == -1)
                summary = int(i);
        QVERIFY(summary >= 0);
        Q_EMIT view.canvas()->nodeActivated(summary);
        QCOMPARE(view.window().layerFirst, -1);
        QCOMPARE(view.window().layerLast, -1);
        QVERIFY(waitShown(view));
    }

    void exportsSvgAndPng()
    {
        GraphView view;
        view.setResult(m_tiny);
        QVERIFY(waitShown(view));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QString error;
        const QString svgPath = dir.filePath(QStringLiteral("graph.svg"));
        QVERIFY2(view.exportSvg(svgPath, &error), qPrintable(error));
        QFile svg(svgPath);
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&svg);
        int nodeGroups = 0;
        int texts = 0;
        int arrows = 0;
        QString section;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement)
                continue;
            if (xml.name() == QLatin1String("g") && xml.attributes().hasAttribute(QLatin1String("id")))
                section = xml.attributes().value(QLatin1String("id")).toString();
            else if (xml.name() == QLatin1String("g") && section == QLatin1String("nodes"))
                ++nodeGroups;
            else if (xml.name() == QLatin1String("text"))
                ++texts;
            else if (xml.name() == QLatin1String("polygon"))
                ++arrows;
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        const GraphSpec& spec = view.shownSpec();
        QCOMPARE(nodeGroups, int(spec.nodes.size()));
        QCOMPARE(texts, int(2 * spec.nodes.size())); // every node of tiny has a title and a subtitle
        QCOMPARE(arrows, int(spec.edges.size()));

        const QString pngPath = dir.filePath(QStringLiteral("graph.png"));
        QVERIFY2(view.exportPng(pngPath, &error), qPrintable(error));
        const QImage png(pngPath);
        QVERIFY(!png.isNull());
        // Twice the scene size (layout bounds plus a 24 pt margin each side).
        const QSizeF scene = view.shownLayout().bounds.size() + QSizeF(48, 48);
        QCOMPARE(png.width(), int(std::ceil(scene.width() * 2)));
        QCOMPARE(png.height(), int(std::ceil(scene.height() * 2)));
    }

    void screenshot()
    {
        // Writes the documentation screenshot when asked: STAGECRAFT_GRAPH_SCREENSHOT=/path/to.png
        const QString path = qEnvironmentVariable("STAGECRAFT_GRAPH_SCREENSHOT");
        if (path.isEmpty())
            QSKIP("STAGECRAFT_GRAPH_SCREENSHOT not set");
        GraphView view;
        view.resize(1400, 900);
        view.show();
        view.setResult(m_tiny);
        QVERIFY(waitShown(view));
        GraphNodeItem* first = nullptr; // the first collective of the program shown
        for (GraphNodeItem* item : nodeItems(view.scene()))
            if (item->node().kind == GraphNodeKind::Collective
                && (!first || item->node().programNode < first->node().programNode))
                first = item;
        QVERIFY(first);
        first->setSelected(true);
        QVERIFY(view.grab().save(path));
        QVERIFY(view.exportSvg(path + QStringLiteral(".svg")));
        QVERIFY(view.exportPng(path + QStringLiteral(".export.png")));
    }
};

QTEST_MAIN(TestGraphView)
#include "tst_graphview.moc"
