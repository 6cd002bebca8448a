// SPDX-License-Identifier: MIT
// The communication matrix (buildCommMatrix), CommMatrixModel and GroupsModel over real synthesis results.
//
// Attribution facts used below. Ring all-reduce over n ranks sends 2(n-1)/n of the buffer from every rank to its
// ring successor (reduce-scatter then all-gather phases: Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce
// algorithms"; Thakur, Rabenseifner & Gropp 2005 §4); ring all-gather sends (n-1) shards, ring reduce-scatter
// (n-1)/n of the input. Chakra's comm_size is the buffer for all-reduce and all-to-all, the shard for all-gather and
// the input for reduce-scatter (core/sharding/layout.h, Relayout::inputBytes). Data parallelism all-reduces the
// whole gradient once per iteration (Rajbhandari et al. 2020, ZeRO §2; Shoeybi et al. 2019, Megatron-LM §3).
#include "config/configloader.h"
#include "guihelpers.h"
#include "heatmap/commmatrix.h"
#include "models/commmatrixmodel.h"
#include "models/formatting.h"
#include "models/groupsmodel.h"
#include "synthesis/synthesis.h"

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QtTest>
#include <cmath>

using namespace stagecraft;
using stagecraft::test::synth;

namespace {

QStringList sets(std::initializer_list<const char*> list)
{
    QStringList out;
    for (const char* s : list)
        out << QString::fromLatin1(s);
    return out;
}

// tiny (resources/presets/tiny.yaml): its parameter count is hand-derived in tests/core/tst_model.cpp.
constexpr qint64 kTinyParams = 1'705'216;

constexpr uint8_t kindBit(CommKind k)
{
    return static_cast<uint8_t>(1u << static_cast<unsigned>(k));
}

// Bytes a rank sends for one collective of comm_size `s` in a group of `n` (see the file comment).
double ringBytes(CollectiveType type, double n, double s)
{
    switch (type) {
    case CollectiveType::AllReduce:
        return 2 * (n - 1) / n * s;
    case CollectiveType::AllGather:
        return (n - 1) * s;
    case CollectiveType::ReduceScatter:
        return (n - 1) / n * s;
    case CollectiveType::AllToAll:
        return (n - 1) / n * s;
    }
    return 0;
}

// Independent reference: walk every node of every rank's program, per rank, with the group found through
// Mesh::groupIndex/groupMembers. Returns the bytes each rank sends, per kind.
std::vector<std::array<double, kCommKindCount>> perRankSent(const SynthesisResult& r)
{
    const Mesh& mesh = r.mesh();
    std::vector<std::array<double, kCommKindCount>> sent(static_cast<size_t>(r.worldSize()));
    for (int64_t rank = 0; rank < r.worldSize(); ++rank) {
        const ClassProgram& program = r.classes[static_cast<size_t>(r.classOf(RankId { rank }))];
        for (const ProgramNode& node : program.nodes) {
            if (node.kind == NodeKind::Send) {
                sent[static_cast<size_t>(rank)][static_cast<size_t>(CommKind::SendRecv)] += double(node.bytes);
            } else if (node.kind == NodeKind::Collective) {
                const std::vector<int64_t> members =
                    mesh.groupMembers(node.mask, mesh.groupIndex(node.mask, RankId { rank }));
                if (std::find(members.begin(), members.end(), rank) == members.end())
                    qFatal("rank %lld is not in its own group", static_cast<long long>(rank));
                sent[static_cast<size_t>(rank)][static_cast<size_t>(node.collective)] +=
                    ringBytes(node.collective, double(members.size()), double(node.bytes));
            }
        }
    }
    return sent;
}

// Closed form for big worlds: every rank of a class sends the same, so the total is a sum over classes.
std::array<double, kCommKindCount> closedFormTotals(const SynthesisResult& r)
{
    std::array<double, kCommKindCount> totals {};
    for (size_t c = 0; c < r.classes.size(); ++c) {
        const double ranks = double(r.summaries[c].ranks);
        for (const ProgramNode& node : r.classes[c].nodes) {
            if (node.kind == NodeKind::Send)
                totals[static_cast<size_t>(CommKind::SendRecv)] += ranks * double(node.bytes);
            else if (node.kind == NodeKind::Collective)
                totals[static_cast<size_t>(node.collective)] +=
                    ranks * ringBytes(node.collective, double(r.mesh().groupSize(node.mask)), double(node.bytes));
        }
    }
    return totals;
}

void compareClose(double actual, double expected, const char* what)
{
    const double tolerance = 1e-9 * std::max(1.0, std::abs(expected));
    if (std::abs(actual - expected) > tolerance)
        QFAIL(qPrintable(
            QStringLiteral("%1: %2 != %3").arg(QLatin1String(what)).arg(actual, 0, 'f', 3).arg(expected, 0, 'f', 3)));
}

} // namespace

class TestCommMatrix : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void dataParallelAllReduce()
    {
        const auto r = synth("tiny", sets({ "parallelism.dp=2" }));
        QCOMPARE(r->worldSize(), int64_t(2));
        // S = summed comm_size of the all-reduces in the program.
        qint64 s = 0;
        for (const ProgramNode& node : r->classes[0].nodes) {
            QVERIFY2(node.kind != NodeKind::Send && node.kind != NodeKind::Recv, node.name.str().c_str());
            if (node.kind == NodeKind::Collective) {
                QCOMPARE(int(node.collective), int(CollectiveType::AllReduce));
                s += node.bytes;
            }
        }
        // The whole gradient, reduced in fp32 (training.grad_reduce_dtype default): 4 bytes per parameter.
        QCOMPARE(s, 4 * kTinyParams);
        const CommMatrix m = buildCommMatrix(*r, {});
        QCOMPARE(m.units, int64_t(2));
        // n = 2: 2(n-1)/n * S = S each direction.
        QCOMPARE(m.at(0, 1), double(s));
        QCOMPARE(m.at(1, 0), double(s));
        QCOMPARE(m.at(0, 0), 0.0);
        QCOMPARE(m.at(1, 1), 0.0);
        QCOMPARE(m.total, 2.0 * double(s));
        QCOMPARE(m.kindTotals[size_t(CommKind::AllReduce)], 2.0 * double(s));
        QCOMPARE(m.kindsAt(0, 1)[size_t(CommKind::AllReduce)], double(s));

        CommMatrixModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setResult(r);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, 1).data(CommMatrixModel::RawValueRole).toDouble(), double(s));
        const QString bytes = formatByteCount(double(s));
        QCOMPARE(model.index(0, 1).data(Qt::ToolTipRole).toString(),
            QStringLiteral("rank 0 \u2192 rank 1: %1 (all-reduce %1)").arg(bytes));
        QCOMPARE(model.index(0, 1).data(Qt::DisplayRole).toString(), bytes);
        QCOMPARE(
            model.index(0, 0).data(Qt::ToolTipRole).toString(), QStringLiteral("rank 0 \u2192 rank 0: no traffic"));
        QCOMPARE(model.headerData(1, Qt::Vertical).toString(), QStringLiteral("rank 1"));
    }

    void pipelineSendRecv()
    {
        // rank_order [tp, cp, ep, dp, pp]: rank = tp + 2 dp + 4 pp, so rank r of stage 0 has peer r + 4.
        const auto r = synth("tiny", sets({ "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2" }));
        double sends[2] = { 0, 0 };
        for (int c = 0; c < 2; ++c)
            for (const ProgramNode& node : r->classes[size_t(c)].nodes)
                if (node.kind == NodeKind::Send) {
                    QCOMPARE(node.peerStage, 1 - c);
                    sends[c] += double(node.bytes);
                }
        QVERIFY(sends[0] > 0);
        QVERIFY(sends[1] > 0);
        CommMatrixOptions only;
        only.kinds = kindBit(CommKind::SendRecv);
        const CommMatrix m = buildCommMatrix(*r, only);
        QCOMPARE(m.units, int64_t(8));
        for (int64_t from = 0; from < 8; ++from)
            for (int64_t to = 0; to < 8; ++to) {
                const double expected = to == from + 4 ? sends[0] : to == from - 4 ? sends[1] : 0.0;
                QCOMPARE(m.at(from, to), expected);
            }
        QCOMPARE(m.at(0, 4), sends[0]);
        QCOMPARE(m.at(4, 0), sends[1]);
        // Unchecking pp hides the pipeline traffic.
        only.axes = 0x0f;
        QCOMPARE(buildCommMatrix(*r, only).total, 0.0);
        // With everything shown the pair also carries nothing else (0 and 4 share no collective group).
        const CommMatrix all = buildCommMatrix(*r, {});
        QCOMPARE(all.at(0, 4), sends[0]);
        QCOMPARE(all.kindsAt(0, 4)[size_t(CommKind::SendRecv)], sends[0]);
        QVERIFY(all.cellText(0, 4).startsWith(QStringLiteral("rank 0 \u2192 rank 4: ")));
        QVERIFY(all.cellText(0, 4).endsWith(QStringLiteral("(send %1)").arg(formatByteCount(sends[0]))));
    }

    void tensorParallelFilter()
    {
        // Only the tp axis: the tensor-parallel all-reduces between tp partners (rank 0 and 1), n = 2: S_tp each way.
        const auto r = synth("tiny", sets({ "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2" }));
        double tp = 0;
        for (const ProgramNode& node : r->classes[0].nodes)
            if (node.kind == NodeKind::Collective && node.mask == axisBit(Axis::Tp))
                tp += double(node.bytes);
        QVERIFY(tp > 0);
        CommMatrixOptions o;
        o.axes = axisBit(Axis::Tp);
        const CommMatrix m = buildCommMatrix(*r, o);
        QCOMPARE(m.at(0, 1), tp);
        QCOMPARE(m.at(1, 0), tp);
        QCOMPARE(m.at(0, 2), 0.0); // the dp partner
        QCOMPARE(m.at(0, 4), 0.0); // the pp peer
    }

    void totalsMatchIndependentRing_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("overrides");
        QTest::newRow("tiny dp2") << QStringLiteral("tiny") << sets({ "parallelism.dp=2" });
        QTest::newRow("tiny dp2 tp2 pp2")
            << QStringLiteral("tiny") << sets({ "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2" });
        QTest::newRow("tiny dp4 tp2 cp2 sp zero3")
            << QStringLiteral("tiny")
            << sets({ "parallelism.dp=4", "parallelism.tp=2", "parallelism.cp=2", "parallelism.sequence_parallel=true",
                   "parallelism.zero=3", "training.global_batch=8" });
        QTest::newRow("tiny tp4 pp2 rank_order dp first")
            << QStringLiteral("tiny")
            << sets({ "parallelism.dp=2", "parallelism.tp=4", "parallelism.pp=2",
                   "parallelism.rank_order=[dp,tp,cp,ep,pp]" });
        // Mixtral rows state the schedule, ZeRO and gradient dtypes too: the preset's own plan (interleaved, ZeRO-1,
        // bf16 gradients) is not this one.
        QTest::newRow("mixtral dp8 ep4 tp2 pp2 (all-to-all)")
            << QStringLiteral("mixtral-8x7b")
            << sets({ "parallelism.dp=8", "parallelism.ep=4", "parallelism.tp=2", "parallelism.pp=2",
                   "parallelism.zero=0", "parallelism.schedule=1f1b", "parallelism.virtual_stages=1",
                   "training.main_grad_dtype=fp32", "training.grad_reduce_dtype=fp32", "training.global_batch=16" });
    }

    void totalsMatchIndependentRing()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, overrides);
        const auto r = synth(qPrintable(preset), overrides);
        const auto sent = perRankSent(*r);
        const CommMatrix m = buildCommMatrix(*r, {});
        QCOMPARE(m.units, r->worldSize());
        std::array<double, kCommKindCount> expected {};
        double expectedTotal = 0;
        for (int64_t rank = 0; rank < r->worldSize(); ++rank) {
            double row = 0;
            for (int64_t to = 0; to < m.units; ++to)
                row += m.at(rank, to);
            double rankTotal = 0;
            for (size_t k = 0; k < kCommKindCount; ++k) {
                expected[k] += sent[size_t(rank)][k];
                rankTotal += sent[size_t(rank)][k];
            }
            compareClose(row, rankTotal, "bytes sent by one rank");
            expectedTotal += rankTotal;
        }
        compareClose(m.total, expectedTotal, "matrix total");
        for (size_t k = 0; k < kCommKindCount; ++k)
            compareClose(m.kindTotals[k], expected[k], qPrintable(commKindName(CommKind(k))));
        const auto closed = closedFormTotals(*r);
        for (size_t k = 0; k < kCommKindCount; ++k)
            compareClose(m.kindTotals[k], closed[k], "closed form");
        // A rank never sends to itself.
        for (int64_t rank = 0; rank < r->worldSize(); ++rank)
            QCOMPARE(m.at(rank, rank), 0.0);
        if (preset == QLatin1String("mixtral-8x7b"))
            QVERIFY(m.kindTotals[size_t(CommKind::AllToAll)] > 0);
    }

    void aggregationPreservesTotal_data()
    {
        QTest::addColumn<QStringList>("overrides");
        QTest::addColumn<int>("grouping");
        QTest::addColumn<int>("units");
        const QStringList base =
            sets({ "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2", "cluster.gpus_per_node=2" });
        QTest::newRow("node") << base << int(CommGrouping::Node) << 4;
        QTest::newRow("stage") << base << int(CommGrouping::Stage) << 2;
        QTest::newRow("dp replica") << base << int(CommGrouping::DpReplica) << 2;
        QTest::newRow("tp rank") << base << int(CommGrouping::TpRank) << 2;
        QTest::newRow("node of 3 (last node partial)")
            << sets({ "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2", "cluster.gpus_per_node=3" })
            << int(CommGrouping::Node) << 3;
    }

    void aggregationPreservesTotal()
    {
        QFETCH(QStringList, overrides);
        QFETCH(int, grouping);
        QFETCH(int, units);
        const auto r = synth("tiny", overrides);
        const CommMatrix ranks = buildCommMatrix(*r, {});
        CommMatrixOptions o;
        o.grouping = CommGrouping(grouping);
        const CommMatrix m = buildCommMatrix(*r, o);
        QCOMPARE(m.units, int64_t(units));
        QCOMPARE(m.total, ranks.total);
        // Every cell is the sum of the rank cells it covers.
        std::vector<double> summed(size_t(units * units), 0.0);
        for (int64_t a = 0; a < ranks.units; ++a)
            for (int64_t b = 0; b < ranks.units; ++b)
                summed[size_t(commUnitOf(*r, o.grouping, a) * units + commUnitOf(*r, o.grouping, b))] += ranks.at(a, b);
        for (int64_t a = 0; a < units; ++a)
            for (int64_t b = 0; b < units; ++b)
                compareClose(m.at(a, b), summed[size_t(a * units + b)], "aggregated cell");
        // Stage grouping: off-diagonal cells are exactly the pipeline sends.
        if (o.grouping == CommGrouping::Stage)
            QCOMPARE(m.at(0, 1) + m.at(1, 0), ranks.kindTotals[size_t(CommKind::SendRecv)]);
    }

    void largeWorlds()
    {
        // 1,024 ranks: nodes (128 of 8 GPUs) by default; 16,384 ranks: 2,048 nodes is too many, stages instead.
        // cp 1, 1F1B and fp32 gradients are stated: the preset's own plan (cp 2, interleaved) is not these.
        const auto r = synth("llama3-70b",
            sets({ "parallelism.dp=16", "parallelism.tp=8", "parallelism.pp=8", "parallelism.cp=1",
                "parallelism.sequence_parallel=true", "parallelism.zero=0", "parallelism.schedule=1f1b",
                "parallelism.virtual_stages=1", "training.main_grad_dtype=fp32", "training.grad_reduce_dtype=fp32",
                "training.global_batch=128" }));
        QCOMPARE(int(defaultCommGrouping(*r)), int(CommGrouping::Node));
        QVERIFY(!commGroupingAvailable(*r, CommGrouping::Rank));
        CommMatrixOptions o;
        o.grouping = CommGrouping::Node;
        QElapsedTimer timer;
        timer.start();
        const CommMatrix m = buildCommMatrix(*r, o);
        qInfo("llama3-70b 1024 ranks, node matrix: %lld ms", static_cast<long long>(timer.elapsed()));
        QCOMPARE(m.units, int64_t(128));
        const auto closed = closedFormTotals(*r);
        for (size_t k = 0; k < kCommKindCount; ++k)
            compareClose(m.kindTotals[k], closed[k], "1024 ranks, by node");
        // tp = 8 = gpus_per_node: tensor parallelism stays inside a node (the diagonal).
        double diagonalTp = 0;
        for (int64_t n = 0; n < m.units; ++n)
            diagonalTp +=
                m.kindsAt(n, n)[size_t(CommKind::AllGather)] + m.kindsAt(n, n)[size_t(CommKind::ReduceScatter)];
        compareClose(diagonalTp, closed[size_t(CommKind::AllGather)] + closed[size_t(CommKind::ReduceScatter)],
            "tp traffic within nodes");

        const auto big = synth("llama3-70b",
            sets({ "parallelism.dp=256", "parallelism.tp=8", "parallelism.pp=8", "parallelism.cp=1",
                "parallelism.sequence_parallel=true", "parallelism.zero=1", "parallelism.schedule=1f1b",
                "parallelism.virtual_stages=1", "training.main_grad_dtype=fp32", "training.grad_reduce_dtype=fp32",
                "training.global_batch=2048" }));
        QCOMPARE(big->worldSize(), int64_t(16384));
        QVERIFY(!commGroupingAvailable(*big, CommGrouping::Node));
        QCOMPARE(int(defaultCommGrouping(*big)), int(CommGrouping::Stage));
        o.grouping = CommGrouping::Stage;
        timer.restart();
        const CommMatrix stages = buildCommMatrix(*big, o);
        qInfo("llama3-70b 16384 ranks, stage matrix: %lld ms", static_cast<long long>(timer.elapsed()));
        QCOMPARE(stages.units, int64_t(8));
        const auto bigClosed = closedFormTotals(*big);
        for (size_t k = 0; k < kCommKindCount; ++k)
            compareClose(stages.kindTotals[k], bigClosed[k], "16k ranks, by stage");
        // Stage to next stage: every stage-0 rank sends its activations to its stage-1 peer.
        compareClose(
            stages.at(0, 1), double(big->summaries[0].sendBytes) * double(big->summaries[0].ranks), "stage 0 -> 1");
        CommMatrixModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setResult(big, CommMatrixOptions {}); // rank grouping is unavailable: falls back to the default
        QCOMPARE(model.rowCount(), 8);
        QCOMPARE(model.headerData(7, Qt::Horizontal).toString(), QStringLiteral("stage 7"));
    }

    void matrixModelTester()
    {
        CommMatrixModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setResult(synth("tiny", sets({ "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2" })));
        QCOMPARE(model.rowCount(), 8);
        QCOMPARE(model.columnCount(), 8);
        const QList<double> kinds = model.index(0, 4).data(CommMatrixModel::KindBytesRole).value<QList<double>>();
        QCOMPARE(kinds.size(), kCommKindCount);
        QCOMPARE(kinds[int(CommKind::SendRecv)], model.index(0, 4).data(CommMatrixModel::RawValueRole).toDouble());
        // The largest cell sits at the top of the colour scale.
        double maxCell = 0;
        QModelIndex maxIndex;
        for (int a = 0; a < 8; ++a)
            for (int b = 0; b < 8; ++b)
                if (model.index(a, b).data(CommMatrixModel::RawValueRole).toDouble() > maxCell) {
                    maxCell = model.index(a, b).data(CommMatrixModel::RawValueRole).toDouble();
                    maxIndex = model.index(a, b);
                }
        QCOMPARE(maxIndex.data(CommMatrixModel::ScalePositionRole).toDouble(), 1.0);
        CommMatrixOptions o;
        o.grouping = CommGrouping::Stage;
        model.setResult(model.result(), o);
        QCOMPARE(model.rowCount(), 2);
        model.setResult(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void groupsModel_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QStringList>("overrides");
        QTest::newRow("tiny single GPU") << QStringLiteral("tiny") << QStringList {};
        QTest::newRow("tiny dp2 tp2 pp2")
            << QStringLiteral("tiny") << sets({ "parallelism.dp=2", "parallelism.tp=2", "parallelism.pp=2" });
        QTest::newRow("tiny dp4 tp2 cp2 zero3")
            << QStringLiteral("tiny")
            << sets({ "parallelism.dp=4", "parallelism.tp=2", "parallelism.cp=2", "parallelism.sequence_parallel=true",
                   "parallelism.zero=3", "training.global_batch=8" });
        QTest::newRow("mixtral dp8 ep4 tp2 pp2")
            << QStringLiteral("mixtral-8x7b")
            << sets({ "parallelism.dp=8", "parallelism.ep=4", "parallelism.tp=2", "parallelism.pp=2",
                   "parallelism.zero=0", "parallelism.schedule=1f1b", "parallelism.virtual_stages=1",
                   "training.main_grad_dtype=fp32", "training.grad_reduce_dtype=fp32", "training.global_batch=16" });
    }

    void groupsModel()
    {
        QFETCH(QString, preset);
        QFETCH(QStringList, overrides);
        const auto r = synth(qPrintable(preset), overrides);
        GroupsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setResult(r);
        QCOMPARE(qint64(model.rowCount()), qint64(r->groups.groupCount()));
        const Mesh& mesh = r->mesh();
        for (int row = 0; row < model.rowCount(); ++row) {
            auto raw = [&](int column) { return model.index(row, column).data(GroupsModel::RawValueRole); };
            QCOMPARE(raw(GroupsModel::IdColumn).toLongLong(), qint64(row + 1)); // ids are dense from 1
            const auto mask = AxisMask(model.index(row, 0).data(GroupsModel::MaskRole).toInt());
            const qint64 index = model.index(row, 0).data(GroupsModel::GroupIndexRole).toLongLong();
            QCOMPARE(mesh.groupMembers(mask, index).front(), int64_t(raw(GroupsModel::MembersColumn).toLongLong()));
            QCOMPARE(raw(GroupsModel::SizeColumn).toLongLong(), qint64(mesh.groupSize(mask)));
            QCOMPARE(raw(GroupsModel::AxesColumn).toString(), QString::fromStdString(axisMaskName(mask)));
            const auto members = model.index(row, 0).data(GroupsModel::MembersRole).value<QList<qint64>>();
            QCOMPARE(qint64(members.size()), qint64(mesh.groupSize(mask)));
            for (qint64 m : members)
                QCOMPARE(r->groups.groupId(mask, RankId { m }), qint64(row + 1));
            QCOMPARE(raw(GroupsModel::MembersColumn).toLongLong(), members.front());
            // What each member issues in the group: the class program's collectives of this mask.
            const int stage = r->classOf(RankId { members.front() });
            QCOMPARE(raw(GroupsModel::StageColumn).toInt(), stage);
            qint64 count = 0;
            qint64 bytes = 0;
            for (const ProgramNode& node : r->classes[size_t(stage)].nodes)
                if (node.kind == NodeKind::Collective && node.mask == mask) {
                    ++count;
                    bytes += node.bytes;
                }
            QCOMPARE(raw(GroupsModel::CollectivesColumn).toLongLong(), count);
            QCOMPARE(raw(GroupsModel::BytesColumn).toLongLong(), bytes);
        }
        model.setResult(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(TestCommMatrix)
#include "tst_commmatrix.moc"
